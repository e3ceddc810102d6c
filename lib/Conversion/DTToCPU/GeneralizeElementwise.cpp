//===- GeneralizeElementwise.cpp - dt-generalize-elementwise --------------===//
//
// Elementwise fusion (dt-fuse-elementwise) only fuses linalg.generic ops; a
// named elementwise op (linalg.broadcast, transpose, map, add, exp, ...) would
// stay on its own and be materialized: a bias broadcast to a full matrix
// before it is added. As generics they fold into their neighbours, and a
// bias add becomes an op the matmul can take as its epilogue.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dt {
#define GEN_PASS_DEF_GENERALIZEELEMENTWISEPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// A named op whose loops are all parallel, on tensors. Fills stay fills
/// (they fold into their consumers as scalars, and a matmul's zero fill
/// becomes its library's beta = 0); copies stay copies.
bool isNamedElementwise(linalg::LinalgOp op) {
  return !isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(*op) &&
         op.hasPureTensorSemantics() &&
         op.getNumLoops() == op.getNumParallelLoops();
}

struct GeneralizeElementwisePass
    : public mlir::dt::impl::GeneralizeElementwisePassBase<
          GeneralizeElementwisePass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> named;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isNamedElementwise(op))
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      // An op without a generic form (none upstream today) stays as it is.
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
  }
};
} // namespace
