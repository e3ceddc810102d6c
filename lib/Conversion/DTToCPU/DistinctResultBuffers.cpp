//===- DistinctResultBuffers.cpp - dt-distinct-result-buffers -------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::dt {
#define GEN_PASS_DEF_DISTINCTRESULTBUFFERSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct DistinctResultBuffersPass
    : public mlir::dt::impl::DistinctResultBuffersPassBase<
          DistinctResultBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 8> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        if (!type || seen.insert(operand.get()).second)
          continue;
        auto dense = MemRefType::get(type.getShape(), type.getElementType());
        Value copy = memref::AllocOp::create(b, ret.getLoc(), dense);
        memref::CopyOp::create(b, ret.getLoc(), operand.get(), copy);
        if (dense != type)
          copy = memref::CastOp::create(b, ret.getLoc(), type, copy);
        operand.set(copy);
      }
    });
  }
};
} // namespace
