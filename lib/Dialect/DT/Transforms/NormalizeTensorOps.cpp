//===- NormalizeTensorOps.cpp - dt-normalize-tensor-ops -------------------===//
//
// tensor.generate and tensor.reshape, rewritten into the linalg and tensor
// ops whose sharding rules cover them; linalg.softmax, into its reductions
// and elementwise steps, which shard along the normalized dim; scf.forall,
// into the scf.for loops propagation plans.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

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

/// Four linalg.generic ops over the normalized dim `d`, as upstream
/// decomposes a softmax (for lowering): m = max_d x, e = exp(x - m),
/// s = sum_d e, y = e / s. The softmax's own rule needs the whole of `d` on
/// every rank; the steps let propagation choose partial reductions
/// instead: a vocabulary-parallel softmax finishes `m` and `s` with an
/// all_reduce of one value per row each where it would otherwise gather
/// every row. (Upstream's own rewrite cannot be used: it gives `e` the
/// softmax's output as its init, whose type may carry a #dt.sharding the
/// input's does not.)
void normalizeSoftmax(RewriterBase &rewriter, linalg::SoftmaxOp softmax) {
  rewriter.setInsertionPoint(softmax);
  Location loc = softmax.getLoc();
  Value x = softmax.getInput();
  auto type = cast<RankedTensorType>(x.getType());
  auto element = cast<FloatType>(type.getElementType());
  int64_t rank = type.getRank(), dim = softmax.getDimension();

  SmallVector<int64_t> rowShape(type.getShape());
  rowShape.erase(rowShape.begin() + dim);
  auto rowType = RankedTensorType::get(rowShape, element);
  AffineMap whole = rewriter.getMultiDimIdentityMap(rank);
  AffineMap row = whole.dropResult(dim);
  SmallVector<utils::IteratorType> reduce(rank, utils::IteratorType::parallel);
  reduce[dim] = utils::IteratorType::reduction;
  SmallVector<utils::IteratorType> pointwise(rank,
                                             utils::IteratorType::parallel);
  const llvm::fltSemantics &semantics = element.getFloatSemantics();

  // Each step's ops are located at the softmax, named for the step
  // (--explain says `linalg.generic (softmax: max)`).
  auto stepLoc = [&](StringRef step) -> Location {
    return NameLoc::get(rewriter.getStringAttr("softmax: " + step), loc);
  };
  // A reduction over `d` of `value` into a row filled with `start`.
  auto reduceRows = [&](StringRef step, Value value, const APFloat &start,
                        auto combine) {
    Location loc = stepLoc(step);
    Value empty = tensor::EmptyOp::create(rewriter, loc, rowShape, element);
    Value init = arith::ConstantOp::create(
        rewriter, loc, rewriter.getFloatAttr(element, start));
    Value filled =
        linalg::FillOp::create(rewriter, loc, init, empty).getResult(0);
    return linalg::GenericOp::create(
               rewriter, loc, rowType, value, filled,
               ArrayRef<AffineMap>{whole, row}, reduce,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 linalg::YieldOp::create(
                     b, loc, combine(b, loc, args[0], args[1]).getResult());
               })
        .getResult(0);
  };
  // A pointwise op of `value` and a row value into `init`.
  auto withRow = [&](StringRef step, Value value, Value rowValue, Value init,
                     auto body) {
    Location loc = stepLoc(step);
    return linalg::GenericOp::create(
               rewriter, loc, init.getType(), ValueRange{value, rowValue}, init,
               ArrayRef<AffineMap>{whole, row, whole}, pointwise,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 linalg::YieldOp::create(b, loc,
                                         body(b, loc, args[0], args[1]));
               })
        .getResult(0);
  };

  Value max =
      reduceRows("max", x, APFloat::getInf(semantics, /*Negative=*/true),
                 [](OpBuilder &b, Location loc, Value v, Value acc) {
                   return arith::MaxNumFOp::create(b, loc, v, acc);
                 });
  Value exps = withRow(
      "exp", x, max,
      tensor::EmptyOp::create(rewriter, stepLoc("exp"), type.getShape(),
                              element),
      [](OpBuilder &b, Location loc, Value v, Value m) -> Value {
        return math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, v, m));
      });
  Value sum = reduceRows("sum", exps, APFloat::getZero(semantics),
                         [](OpBuilder &b, Location loc, Value v, Value acc) {
                           return arith::AddFOp::create(b, loc, v, acc);
                         });
  rewriter.replaceOp(
      softmax,
      withRow("division", exps, sum, softmax.getOutput(),
              [](OpBuilder &b, Location loc, Value e, Value s) -> Value {
                return arith::DivFOp::create(b, loc, e, s);
              }));
}

/// A nest of scf.for, one loop per dim, that carries the shared outputs
/// and inserts each tile with tensor.insert_slice where the forall's
/// terminator had tensor.parallel_insert_slice. The iterations of a forall
/// write disjoint tiles (else it races), so running them in order computes
/// the same; dt then plans a loop it knows, and the dims the tiles slice
/// are replicated.
void normalizeForall(RewriterBase &rewriter, scf::ForallOp forall) {
  Location loc = forall.getLoc();
  rewriter.setInsertionPoint(forall);
  SmallVector<Value> lower = forall.getLowerBound(rewriter);
  SmallVector<Value> upper = forall.getUpperBound(rewriter);
  SmallVector<Value> step = forall.getStep(rewriter);
  IRMapping mapping;
  SmallVector<scf::ForOp> loops;
  ValueRange carried = forall.getOutputs();
  for (int64_t dim = 0; dim < forall.getRank(); ++dim) {
    auto loop = scf::ForOp::create(rewriter, loc, lower[dim], upper[dim],
                                   step[dim], carried);
    mapping.map(forall.getInductionVar(dim), loop.getInductionVar());
    carried = loop.getRegionIterArgs();
    if (!loops.empty())
      scf::YieldOp::create(rewriter, loc, loop.getResults());
    loops.push_back(loop);
    rewriter.setInsertionPointToStart(loop.getBody());
  }
  mapping.map(forall.getRegionIterArgs(), carried);
  for (Operation &op : forall.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  // Each insert writes into what the one before it wrote, at offsets and
  // sizes the cloned body computes.
  auto mapped = [&](ArrayRef<OpFoldResult> values) {
    return llvm::map_to_vector(values, [&](OpFoldResult value) {
      if (auto v = dyn_cast<Value>(value))
        return OpFoldResult(mapping.lookupOrDefault(v));
      return value;
    });
  };
  for (Operation &op : forall.getTerminator().getYieldingOps()) {
    auto insert = cast<tensor::ParallelInsertSliceOp>(op);
    auto dest = cast<BlockArgument>(insert.getDest());
    mapping.map(dest,
                tensor::InsertSliceOp::create(
                    rewriter, insert.getLoc(),
                    mapping.lookupOrDefault(insert.getSource()),
                    mapping.lookup(dest), mapped(insert.getMixedOffsets()),
                    mapped(insert.getMixedSizes()),
                    mapped(insert.getMixedStrides())));
  }
  scf::YieldOp::create(
      rewriter, loc,
      llvm::map_to_vector(forall.getRegionIterArgs(), [&](BlockArgument arg) {
        return mapping.lookup(arg);
      }));
  rewriter.replaceOp(forall, loops.front().getResults());
}

LogicalResult normalize(RewriterBase &rewriter, Operation *op) {
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tensor::GenerateOp generate) {
        return normalizeGenerate(rewriter, generate);
      })
      .Case([&](tensor::ReshapeOp reshape) {
        normalizeReshape(rewriter, reshape);
        return success();
      })
      .Case([&](scf::ForallOp forall) {
        normalizeForall(rewriter, forall);
        return success();
      })
      .Case([&](linalg::SoftmaxOp softmax) {
        normalizeSoftmax(rewriter, softmax);
        return success();
      })
      .Case([&](linalg::GenericOp generic) {
        (void)swapIntoConvolution(rewriter, generic);
        return success();
      })
      .Default(success());
}

struct NormalizeTensorOpsPass
    : public mlir::dt::impl::NormalizeTensorOpsPassBase<
          NormalizeTensorOpsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<tensor::GenerateOp, tensor::ReshapeOp, linalg::SoftmaxOp,
              scf::ForallOp, linalg::GenericOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops)
      if (failed(normalize(rewriter, op)))
        return signalPassFailure();
  }
};
} // namespace
