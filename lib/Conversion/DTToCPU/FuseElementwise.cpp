//===- FuseElementwise.cpp - dt-fuse-elementwise --------------------------===//
//
// Upstream's elementwise fusion and reshape propagation, with dt's choice of
// what to fuse:
//
// - Nothing fuses into a contraction (a matmul, or a generic that
//   multiplies and accumulates), and no reshape is propagated through one:
//   a contraction left alone is a call of BLAS or cuBLASLt
//   (dt-convert-matmul-to-blas); one fused with its neighbours is loops.
// - A producer with one use fuses into it (upstream's rule), and so does a
//   producer that only moves data (a broadcast or a transpose: its body
//   yields an input), into each of its uses: recomputing it costs a read
//   of its smaller input, materializing it a write and a read of the
//   bigger result.
// - A producer that computes does not fuse into a use that broadcasts it
//   (reads each element for many points of its loops): the fused loop would
//   recompute every element as often (an embedding's ids, a float-to-int
//   and a remainder per token, once per column of the looked-up row),
//   where materializing it costs one small write and reads.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dt {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
bool isContraction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalg::isaContractionOpInterface(linalgOp);
}

/// A generic whose body yields one of its inputs' elements.
bool movesDataOnly(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  Block &body = generic.getRegion().front();
  auto arg = dyn_cast<BlockArgument>(body.getTerminator()->getOperand(0));
  return body.getOperations().size() == 1 && arg &&
         arg.getArgNumber() < generic.getNumDpsInputs();
}

/// Whether `consumer` reads `operand` at fewer points than it has: its
/// indexing map drops loops.
bool broadcasts(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  return consumer && consumer.getMatchingIndexingMap(operand).getNumResults() <
                         consumer.getNumLoops();
}

bool shouldFuse(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  Operation *consumer = fused->getOwner();
  if (!producer || isContraction(producer) || isContraction(consumer))
    return false;
  if (movesDataOnly(producer))
    return true;
  return producer->hasOneUse() && !broadcasts(fused);
}

/// Reshapes move through anything but a contraction, whose dims must stay
/// the library's m, n, k (and batch).
bool shouldPropagateReshape(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  return producer && producer->hasOneUse() && !isContraction(producer) &&
         !isContraction(fused->getOwner());
}

struct FuseElementwisePass
    : public mlir::dt::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      shouldPropagateReshape);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, [](OpOperand *o) {
      Operation *producer = o->get().getDefiningOp();
      return producer && producer->hasOneUse();
    });
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      signalPassFailure();
  }
};
} // namespace
