//===- ConvolutionsToMatmuls.cpp - dt-convolutions-to-matmuls -------------===//
//
// A convolution is a matmul of its input's patches (im2col) by its filter:
// with M the output's batch and image dims, N its channel and K the
// filter's window and input-channel dims,
//
//   out[M, N] += col[M, K] * filter[K, N],  col[m, k] = in[<conv's map>(m, k)]
//
// Rewritten so on tensors, before bufferization, the contraction is one
// BLAS or cuBLASLt call (dt-convert-matmul-to-blas), where the convolution's
// seven loops ran at a few GFLOP/s. Any layout of the input, filter and
// output (NHWC/HWCF, NCHW/FCHW, 1-D, 3-D), with any strides and dilations
// (they live in the input's indexing map, which col's generic keeps): the
// M and K dims are taken in the order the output and the filter hold them,
// so the output and filter are matrices by a collapse of their dims, and a
// transpose is made only where the output channel sits between them (NCHW's
// output: the product comes as NHWC and is transposed back). col is laid
// out so that its copy runs along the input's rows. The
// convolution's body (multiply, accumulate, with its casts) becomes the
// contraction's as it is.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dt {
#define GEN_PASS_DEF_CONVOLUTIONSTOMATMULSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// A convolution's loops as a matmul's: `m` in the output's order, `k` in
/// the filter's, `n` the output channel.
struct ConvAsMatmul {
  SmallVector<unsigned> m, k;
  unsigned n;
  /// Where n is among the output's dims and the filter's.
  unsigned nInOutput, nInFilter;
};

/// The loops of the dims `map` reads, when each of its results is a loop.
std::optional<SmallVector<unsigned>> loopsOf(AffineMap map) {
  SmallVector<unsigned> loops;
  for (AffineExpr result : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim)
      return std::nullopt;
    loops.push_back(dim.getPosition());
  }
  return loops;
}

/// `op` as a matmul, when it is a convolution of static float tensors that
/// multiplies and accumulates, with one output channel and no depthwise
/// dims (those stay loops), whose col matrix stays under `maxColBytes`.
std::optional<ConvAsMatmul> matchConvolution(linalg::LinalgOp op,
                                             int64_t maxColBytes) {
  auto isStaticFloats = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.hasStaticShape() &&
           isa<FloatType>(tensor.getElementType());
  };
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 ||
      !llvm::all_of(op->getOperandTypes(), isStaticFloats) ||
      op.hasIndexSemantics() || !isMultiplyAccumulateConvolution(op))
    return std::nullopt;
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims) || !dims->depth.empty() || dims->outputChannel.size() != 1)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<SmallVector<unsigned>> filterLoops = loopsOf(maps[1]);
  std::optional<SmallVector<unsigned>> outputLoops = loopsOf(maps[2]);
  if (!filterLoops || !outputLoops)
    return std::nullopt;
  ConvAsMatmul conv;
  conv.n = dims->outputChannel.front();
  // The input must not depend on the output channel: col has no n.
  if (maps[0].isFunctionOfDim(conv.n))
    return std::nullopt;
  for (auto [i, loop] : llvm::enumerate(*outputLoops)) {
    if (loop == conv.n)
      conv.nInOutput = i;
    else
      conv.m.push_back(loop);
  }
  for (auto [i, loop] : llvm::enumerate(*filterLoops)) {
    if (loop == conv.n)
      conv.nInFilter = i;
    else
      conv.k.push_back(loop);
  }
  // Every loop is a row, a column or summed: the output holds m and n, the
  // filter k and n, and no loop is in both.
  if (conv.m.size() + conv.k.size() + 1 != op.getNumLoops() ||
      outputLoops->size() != conv.m.size() + 1 ||
      filterLoops->size() != conv.k.size() + 1 ||
      llvm::any_of(conv.m,
                   [&](unsigned m) { return llvm::is_contained(conv.k, m); }))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Type element = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  double colBytes = element.getIntOrFloatBitWidth() / 8;
  for (unsigned loop : llvm::concat<unsigned>(conv.m, conv.k))
    colBytes *= static_cast<double>(ranges[loop]);
  if (colBytes > static_cast<double>(maxColBytes))
    return std::nullopt;
  return conv;
}

/// An empty tensor of `value`'s type with its dims permuted: dim i is dim
/// `permutation[i]` of `value`.
Value emptyPermuted(OpBuilder &b, Location loc, Value value,
                    ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  return tensor::EmptyOp::create(b, loc,
                                 applyPermutation(type.getShape(), permutation),
                                 type.getElementType());
}

/// `value` permuted so that its dim i is the dim `permutation[i]` of
/// `value` (linalg.transpose).
Value transpose(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> permutation) {
  Value empty = emptyPermuted(b, loc, value, permutation);
  return linalg::TransposeOp::create(b, loc, value, empty, permutation)
      ->getResult(0);
}

/// The reassociation that collapses a tensor of `rank` dims into two: the
/// first `split` dims, and the rest.
SmallVector<ReassociationIndices> twoGroups(unsigned split, unsigned rank) {
  return {llvm::to_vector(llvm::seq<int64_t>(0, split)),
          llvm::to_vector(llvm::seq<int64_t>(split, rank))};
}

/// The permutation that moves dim `from` of a tensor of `rank` dims to the
/// end (inverted, from the end back to `from`).
SmallVector<int64_t> moveToEnd(unsigned from, unsigned rank) {
  SmallVector<int64_t> permutation;
  for (unsigned d = 0; d < rank; ++d)
    if (d != from)
      permutation.push_back(d);
  permutation.push_back(from);
  return permutation;
}

void rewrite(RewriterBase &rewriter, linalg::LinalgOp op,
             const ConvAsMatmul &conv) {
  MLIRContext *ctx = op.getContext();
  // Named, so that dt-run --profile says what each kernel and call is.
  auto named = [&](StringRef name) {
    return NameLoc::get(StringAttr::get(ctx, name), op.getLoc());
  };
  Location loc = named("convolution");
  rewriter.setInsertionPoint(op);
  Value input = op.getDpsInputs()[0], filter = op.getDpsInputs()[1],
        init = op.getDpsInits()[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numM = conv.m.size(), numK = conv.k.size();
  auto parallel = [](unsigned n) {
    return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
  };

  // col[m..., k...] = input[map(m, k)]: the input's map over the loops of
  // m and k, renumbered (n reads nothing), without the loops of one trip
  // (at 0), so that a 1x1 convolution of stride 1 reads its input as it is;
  // with them where that would leave the input read along a dim at a loop
  // alone, over less than its extent (a generic must span such a dim: a
  // stride that skips the last rows of the image).
  // col is [M, K], or [K, M] where the input's last dim (the one it holds
  // contiguous) is read at a row's loop alone (a filter's gradient: the
  // image's channels are its rows), so that the copy reads the input along
  // its rows; the library then reads col transposed.
  auto inputType = cast<RankedTensorType>(input.getType());
  auto lastRead = dyn_cast<AffineDimExpr>(maps[0].getResults().back());
  bool kFirst = lastRead && llvm::is_contained(conv.m, lastRead.getPosition());
  SmallVector<unsigned> colLoops;
  unsigned colFirst = 0;
  SmallVector<int64_t> colShape;
  AffineMap inputMap;
  for (bool dropOnes : {true, false}) {
    auto kept = [&](ArrayRef<unsigned> loops) {
      SmallVector<unsigned> longer = llvm::filter_to_vector(
          loops, [&](unsigned loop) { return !dropOnes || ranges[loop] != 1; });
      if (longer.empty())
        longer.push_back(loops.front());
      return longer;
    };
    colLoops = kept(kFirst ? conv.k : conv.m);
    colFirst = colLoops.size();
    colLoops.append(kept(kFirst ? conv.m : conv.k));
    SmallVector<AffineExpr> renumbered(op.getNumLoops(),
                                       getAffineConstantExpr(0, ctx));
    colShape.clear();
    for (auto [i, loop] : llvm::enumerate(colLoops)) {
      renumbered[loop] = getAffineDimExpr(i, ctx);
      colShape.push_back(ranges[loop]);
    }
    inputMap = maps[0].replaceDimsAndSymbols(renumbered, {}, colLoops.size(),
                                             maps[0].getNumSymbols());
    bool spans =
        llvm::all_of(llvm::enumerate(inputMap.getResults()), [&](auto result) {
          auto dim = dyn_cast<AffineDimExpr>(result.value());
          return !dim || colShape[dim.getPosition()] ==
                             inputType.getDimSize(result.index());
        });
    if (spans)
      break;
  }
  Value col = input;
  if (!inputMap.isIdentity() || inputType.getShape() != ArrayRef(colShape)) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, colShape,
                                          inputType.getElementType());
    col = linalg::GenericOp::create(
              rewriter, named("im2col"), empty.getType(), input, empty,
              {inputMap, rewriter.getMultiDimIdentityMap(colLoops.size())},
              parallel(colLoops.size()),
              [](OpBuilder &b, Location loc, ValueRange args) {
                linalg::YieldOp::create(b, loc, args[0]);
              })
              ->getResult(0);
  }
  col = tensor::CollapseShapeOp::create(rewriter, loc, col,
                                        twoGroups(colFirst, colLoops.size()));

  // The filter as [K, N] (n its last dim) or [N, K] (its first); else
  // transposed to [K..., N] first.
  unsigned filterRank = numK + 1;
  bool filterNFirst = conv.nInFilter == 0;
  if (!filterNFirst && conv.nInFilter != filterRank - 1)
    filter = transpose(rewriter, named("transpose"), filter,
                       moveToEnd(conv.nInFilter, filterRank));
  filter = tensor::CollapseShapeOp::create(
      rewriter, loc, filter,
      filterNFirst ? twoGroups(1, filterRank) : twoGroups(numK, filterRank));

  // The output as [M, N]: transposed there first when n is not its last dim
  // (a fill is made again in that shape: the usual zeros, or a bias of one
  // value).
  unsigned outputRank = numM + 1;
  bool outputNLast = conv.nInOutput == outputRank - 1;
  Value acc = init;
  if (!outputNLast) {
    SmallVector<int64_t> toEnd = moveToEnd(conv.nInOutput, outputRank);
    if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
      acc = linalg::FillOp::create(rewriter, loc, fill.getInputs(),
                                   emptyPermuted(rewriter, loc, init, toEnd))
                .getResult(0);
    } else {
      acc = transpose(rewriter, named("transpose"), init, toEnd);
    }
  }
  auto accType = cast<RankedTensorType>(acc.getType());
  acc = tensor::CollapseShapeOp::create(rewriter, loc, acc,
                                        twoGroups(numM, outputRank));

  // out[m, n] += col[m, k] (or col[k, m]) * filter[k, n] (or filter[n, k]),
  // with the convolution's own body.
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> matmulMaps = {
      AffineMap::get(3, 0, kFirst ? ArrayRef{k, m} : ArrayRef{m, k}, ctx),
      AffineMap::get(3, 0, filterNFirst ? ArrayRef{n, k} : ArrayRef{k, n}, ctx),
      AffineMap::get(3, 0, {m, n}, ctx)};
  auto matmul = linalg::GenericOp::create(
      rewriter, loc, acc.getType(), ValueRange{col, filter}, acc, matmulMaps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction});
  rewriter.cloneRegionBefore(op->getRegion(0), matmul.getRegion(),
                             matmul.getRegion().end());

  Value result = tensor::ExpandShapeOp::create(rewriter, loc, accType,
                                               matmul->getResult(0),
                                               twoGroups(numM, outputRank));
  if (!outputNLast)
    result = transpose(
        rewriter, named("transpose"), result,
        invertPermutationVector(moveToEnd(conv.nInOutput, outputRank)));
  rewriter.replaceOp(op, result);
}

struct ConvolutionsToMatmulsPass
    : public mlir::dt::impl::ConvolutionsToMatmulsPassBase<
          ConvolutionsToMatmulsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, ConvAsMatmul>> convolutions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<ConvAsMatmul> conv = matchConvolution(op, maxColBytes))
        convolutions.push_back({op, *conv});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, conv] : convolutions)
      rewrite(rewriter, op, conv);
  }
};
} // namespace
