//===- LowerAxisIndex.cpp - dt-lower-axis-index ---------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_LOWERAXISINDEXPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

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
      Value arg = arith::ConstantIntOp::create(b, op.getLoc(), *axis, 32);
      auto call = func::CallOp::create(b, op.getLoc(), callee, arg);
      Value index = arith::IndexCastOp::create(b, op.getLoc(), b.getIndexType(),
                                               call.getResult(0));
      op.getResult().replaceAllUsesWith(index);
      op.erase();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
