//===- RuntimeCalls.cpp - dt ops and matmuls that become runtime calls ----===//
//
// dt-lower-axis-index and dt-convert-matmul-to-blas, and the helpers the
// bufferization models share with them. The functions called are declared in
// runtime/include/dt/runtime.h; memrefs are passed unranked, so one C
// function serves every rank and layout.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_LOWERAXISINDEXPASS
#define GEN_PASS_DEF_CONVERTMATMULTOBLASPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

std::optional<StringRef> mlir::dt::runtimeTypeSuffix(Type type) {
  if (type.isF32())
    return StringRef("f32");
  if (type.isF64())
    return StringRef("f64");
  if (type.isF16())
    return StringRef("f16");
  if (type.isBF16())
    return StringRef("bf16");
  if (type.isSignlessInteger(32))
    return StringRef("i32");
  if (type.isSignlessInteger(64))
    return StringRef("i64");
  return std::nullopt;
}

func::FuncOp mlir::dt::getOrInsertRuntimeFunction(ModuleOp module,
                                                  StringRef name,
                                                  FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto func = b.create<func::FuncOp>(module.getLoc(), name, type);
  func.setPrivate();
  return func;
}

//===----------------------------------------------------------------------===//
// dt-lower-axis-index
//===----------------------------------------------------------------------===//

namespace {
struct LowerAxisIndexPass
    : public mlir::dt::impl::LowerAxisIndexPassBase<LowerAxisIndexPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(&getContext());
    auto type = b.getFunctionType({b.getI32Type()}, {b.getI64Type()});
    WalkResult walk = module.walk([&](AxisIndexOp op) {
      auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
          op, op.getMeshAttr());
      std::optional<unsigned> axis =
          mesh ? mesh.getAxisIndex(op.getAxis()) : std::nullopt;
      if (!axis) {
        op.emitOpError("names no axis of a dt.mesh");
        return WalkResult::interrupt();
      }
      func::FuncOp callee =
          getOrInsertRuntimeFunction(module, "dt_rt_axis_index", type);
      b.setInsertionPoint(op);
      Value arg = b.create<arith::ConstantIntOp>(op.getLoc(), *axis, 32);
      auto call = b.create<func::CallOp>(op.getLoc(), callee, arg);
      Value index = b.create<arith::IndexCastOp>(
          op.getLoc(), b.getIndexType(), call.getResult(0));
      op.getResult().replaceAllUsesWith(index);
      op.erase();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

//===----------------------------------------------------------------------===//
// dt-convert-matmul-to-blas
//===----------------------------------------------------------------------===//

struct ConvertMatmulToBlasPass
    : public mlir::dt::impl::ConvertMatmulToBlasPassBase<
          ConvertMatmulToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (auto matmul = dyn_cast<linalg::MatmulOp>(*op)) {
        if (!matmul.hasUserDefinedMaps())
          candidates.push_back(op);
      } else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(*op)) {
        if (!batch.hasUserDefinedMaps())
          candidates.push_back(op);
      }
    });
    for (linalg::LinalgOp op : candidates) {
      Type element = getElementTypeOrSelf(op->getOperand(0).getType());
      bool sameTypes = llvm::all_of(op->getOperandTypes(), [&](Type t) {
        return getElementTypeOrSelf(t) == element;
      });
      if (!sameTypes || !(element.isF32() || element.isF64()))
        continue;
      std::string name = (isa<linalg::MatmulOp>(*op) ? "dt_rt_matmul_"
                                                      : "dt_rt_batch_matmul_") +
                         runtimeTypeSuffix(element)->str();
      OpBuilder b(op);
      auto unranked = UnrankedMemRefType::get(element, 0);
      SmallVector<Value> args;
      for (Value operand : op->getOperands())
        args.push_back(
            b.create<memref::CastOp>(op.getLoc(), unranked, operand));
      func::FuncOp callee = getOrInsertRuntimeFunction(
          module, name,
          b.getFunctionType({unranked, unranked, unranked}, {}));
      b.create<func::CallOp>(op.getLoc(), callee, args);
      op->erase();
    }
  }
};
} // namespace
