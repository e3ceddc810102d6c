//===- UnshareFills.cpp - dt-unshare-fills --------------------------------===//
//
// A program often fills one tensor with zeros and accumulates several
// matmuls or reductions into it (CSE merges identical fills anyway). Each
// accumulation writes its init in place, so bufferization gives every one
// but the last a copy of the filled buffer. With a fill of its own, each
// gets a fresh buffer and a fill instead: one pass over the buffer rather
// than two, and a fill a matmul's library call can absorb as beta = 0.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dt {
#define GEN_PASS_DEF_UNSHAREFILLSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct UnshareFillsPass
    : public mlir::dt::impl::UnshareFillsPassBase<UnshareFillsPass> {
  void runOnOperation() override {
    SmallVector<OpOperand *> shared;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::FillOp>(*op) || !op.hasPureTensorSemantics())
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        auto fill = init.get().getDefiningOp<linalg::FillOp>();
        if (fill && !fill->hasOneUse())
          shared.push_back(&init);
      }
    });
    for (OpOperand *init : shared) {
      auto fill = init->get().getDefiningOp<linalg::FillOp>();
      if (fill->hasOneUse())
        continue; // The last user keeps the original.
      // A fresh destination too, so that bufferization gives the copy a
      // buffer of its own rather than reusing the original's.
      OpBuilder b(init->getOwner());
      IRMapping fresh;
      Value destination = fill.getDpsInits()[0];
      if (auto empty = destination.getDefiningOp<tensor::EmptyOp>())
        fresh.map(destination, b.clone(*empty)->getResult(0));
      init->set(b.clone(*fill, fresh)->getResult(0));
    }
  }
};
} // namespace
