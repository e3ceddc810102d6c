//===- NormalizeTensorOps.cpp - dt-normalize-tensor-ops -------------------===//
//
// tensor.generate and tensor.reshape, rewritten into the linalg and tensor
// ops whose sharding rules cover them.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dt {
#define GEN_PASS_DEF_NORMALIZETENSOROPSPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// A linalg.generic over a tensor.empty, keeping the result type's encoding
/// (upstream's rewrite makes the empty tensor from the shape alone).
LogicalResult normalizeGenerate(RewriterBase &rewriter,
                                tensor::GenerateOp generate) {
  RankedTensorType type = generate.getType();
  if (!type.hasStaticShape())
    return success(); // Propagation says what it cannot shard.
  rewriter.setInsertionPoint(generate);
  FailureOr<Operation *> generic =
      linalg::rewriteInDestinationPassingStyle(rewriter, generate);
  if (failed(generic))
    return generate.emitOpError("cannot be rewritten as a linalg.generic");
  auto linalgOp = cast<linalg::GenericOp>(*generic);
  linalgOp.getResult(0).setType(type);
  linalgOp.getDpsInitOperand(0)->get().setType(type);
  return success();
}

/// collapse_shape or expand_shape where one is the reshape, else a collapse
/// to one dim and an expand from it.
void normalizeReshape(RewriterBase &rewriter, tensor::ReshapeOp reshape) {
  auto source = dyn_cast<RankedTensorType>(reshape.getSource().getType());
  auto result = dyn_cast<RankedTensorType>(reshape.getResult().getType());
  if (!source || !result || !source.hasStaticShape() ||
      !result.hasStaticShape())
    return; // Propagation says what it cannot shard.
  rewriter.setInsertionPoint(reshape);
  Location loc = reshape.getLoc();
  if (source.getShape() == result.getShape()) {
    rewriter.replaceOp(reshape, source == result ? reshape.getSource()
                                                 : tensor::CastOp::create(
                                                       rewriter, loc, result,
                                                       reshape.getSource())
                                                       .getResult());
    return;
  }
  if (std::optional<SmallVector<ReassociationIndices>> groups =
          getReassociationIndicesForReshape(source, result)) {
    if (source.getRank() > result.getRank())
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
          reshape, result, reshape.getSource(), *groups);
    else
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
          reshape, result, reshape.getSource(), *groups);
    return;
  }
  auto flat =
      RankedTensorType::get({source.getNumElements()}, source.getElementType());
  auto all = [](int64_t rank) {
    return SmallVector<ReassociationIndices>{
        llvm::to_vector(llvm::seq<int64_t>(0, rank))};
  };
  Value collapsed = tensor::CollapseShapeOp::create(
      rewriter, loc, flat, reshape.getSource(), all(source.getRank()));
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(reshape, result, collapsed,
                                                     all(result.getRank()));
}

struct NormalizeTensorOpsPass
    : public mlir::dt::impl::NormalizeTensorOpsPassBase<
          NormalizeTensorOpsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<tensor::GenerateOp, tensor::ReshapeOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      if (auto reshape = dyn_cast<tensor::ReshapeOp>(op))
        normalizeReshape(rewriter, reshape);
      else if (failed(
                   normalizeGenerate(rewriter, cast<tensor::GenerateOp>(op))))
        return signalPassFailure();
    }
  }
};
} // namespace
