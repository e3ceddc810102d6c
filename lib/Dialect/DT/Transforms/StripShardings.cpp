//===- StripShardings.cpp - dt-strip-shardings ----------------------------===//
//
// The single-device program: the global program with every trace of sharding
// removed. Types lose their #dt.sharding encodings everywhere (results, block
// arguments, function signatures), so the program is what upstream MLIR sees
// as a plain tensor program.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"

namespace mlir::dt {
#define GEN_PASS_DEF_STRIPSHARDINGSPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
Type stripEncoding(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !getShardingEncoding(tensor))
    return type;
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType());
}

SmallVector<Type> stripEncodings(TypeRange types) {
  return llvm::map_to_vector(types, stripEncoding);
}

struct StripShardingsPass
    : public mlir::dt::impl::StripShardingsPassBase<StripShardingsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    WalkResult collectives = module.walk([](Operation *op) {
      if (isRuntimeCollective(op) || isa<ToPartialOp, AxisIndexOp>(op)) {
        op->emitOpError("has no single-device meaning; dt-strip-shardings "
                        "takes global programs without collectives");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (collectives.wasInterrupted())
      return signalPassFailure();

    auto sharding = StringAttr::get(ctx, DTDialect::kShardingAttrName);
    auto name = StringAttr::get(ctx, DTDialect::kNameAttrName);
    module.walk([&](func::FuncOp func) {
      SmallVector<DictionaryAttr> argAttrs, resultAttrs;
      func.getAllArgAttrs(argAttrs);
      func.getAllResultAttrs(resultAttrs);
      auto drop = [&](DictionaryAttr dict) {
        NamedAttrList list(dict);
        list.erase(sharding);
        list.erase(name);
        return list.getDictionary(ctx);
      };
      func.setAllArgAttrs(llvm::map_to_vector(argAttrs, drop));
      func.setAllResultAttrs(llvm::map_to_vector(resultAttrs, drop));
      func.setFunctionType(
          FunctionType::get(ctx, stripEncodings(func.getArgumentTypes()),
                            stripEncodings(func.getResultTypes())));
    });
    module.walk([&](Operation *op) {
      if (isa<ConstrainOp, RedistributeOp>(op)) {
        op->getResult(0).replaceAllUsesWith(op->getOperand(0));
        op->erase();
        return;
      }
      for (Value result : op->getResults())
        result.setType(stripEncoding(result.getType()));
      // A constant holds its type in its value too.
      syncConstantValueType(op);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(stripEncoding(arg.getType()));
    });
    for (auto mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
  }
};
} // namespace
