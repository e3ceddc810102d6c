//===- GeneralizeElementwise.cpp - dt-generalize-elementwise --------------===//
//
// Elementwise fusion (dt-fuse-elementwise) only fuses linalg.generic ops; a
// named elementwise op (linalg.broadcast, transpose, map, add, exp, ...) would
// stay on its own and be materialized: a bias broadcast to a full matrix
// before it is added. As generics they fold into their neighbours, and a
// bias add becomes an op the matmul can take as its epilogue. A
// linalg.reduce becomes a generic too: its producer (the exp of a softmax's
// row sum) fuses into it, and dt-split-reductions, which takes generics,
// splits its chain into lanes (a plain row sum of 256x32000 f32 ran at one
// element per add latency, 8 ms; split, 1.2 ms).
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
/// A named op on tensors whose loops are all parallel, or a linalg.reduce.
/// Fills stay fills (they fold into their consumers as scalars, and a
/// matmul's zero fill becomes its library's beta = 0); copies stay copies;
/// contractions and convolutions stay named for their libraries.
bool shouldGeneralize(linalg::LinalgOp op) {
  if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(*op) ||
      !op.hasPureTensorSemantics())
    return false;
  return isa<linalg::ReduceOp>(*op) ||
         op.getNumLoops() == op.getNumParallelLoops();
}

struct GeneralizeElementwisePass
    : public mlir::dt::impl::GeneralizeElementwisePassBase<
          GeneralizeElementwisePass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> named;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (shouldGeneralize(op))
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      // The generic keeps the op's name in its location, for dt-run
      // --profile and --explain (`reduce (file:line)`), unless the location
      // names it already.
      Location loc = op.getLoc();
      if (!isa<NameLoc>(loc))
        op->setLoc(NameLoc::get(
            rewriter.getStringAttr(op->getName().stripDialect()), loc));
      // An op without a generic form (none upstream today) stays as it is.
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
  }
};
} // namespace
