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
// so the output and filter are matrices by a collapse of their dims. An
// output that holds its channel before the image's dims (NCHW) is a matmul
// per image, [N, M] = [N, K] x [K, M], the images being its batch (which
// the filter does not read) where the images are large enough
// (kMinImagePixels); smaller ones, and a grouped one whose channel sits
// between its dims, are made with the channel last and transposed back. col
// is laid out so that its copy runs along the input's rows. The
// convolution's body (multiply, accumulate, with its casts) becomes the
// contraction's as it is.
//
// A grouped convolution's groups (a dim the input, the filter and the
// output all read) are the matmul's batch, one library call for every
// group:
//
//   out[M, g, N] += col[M, g, K] * filter[g, K, N]
//
// each operand's dims in the order it holds them (the library steps over
// the group's stride), so that NHWGC/GFHWC needs no transpose at all. A
// depthwise convolution stays loops (kMinGroupOutputChannels).
//
// A convolution's adjoint, the gradient of its input as the chain rule
// writes it (each product added where the forward read the input),
//
//   dx[n, h + kh, w + kw, c] += dy[n, h, w, f] * filter[kh, kw, c, f]
//
// is a matmul into col, the patches' gradients, and a col2im that adds
// each patch into the image where the patches overlap (Caffe's col2im):
//
//   col[n, h, w, kh, kw, c] = dy[M, F] * filter[N, F]  (one library call)
//   dx[n, h + kh, w + kw, c] += col[n, h, w, kh, kw, c]  (memory-bound)
//
// The gradient of a 3x3 convolution of 64 channels by 64 filters ran at 25
// GFLOP/s here as loops (4.5 written NCHW, whose loops run across the
// image's rows), at 80-90 so.
//
// A convolution or adjoint whose col would pass col-chunk-bytes is made a
// chunk of images at a time (upstream's tiling, scf.for over its first
// input's first dim), and where one image's col passes it, a chunk of that
// image's rows at a time (a second scf.for, over the rows its window
// reads), each chunk's col made and read while in the cache; a 16-bit
// output that several chunks add into is summed in f32 across them.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Dialect/DT/Transforms/HalfSums.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
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
/// the filter's, `n` the output channel, and `group` a grouped
/// convolution's groups, the matmul's batch (one matmul per group).
struct ConvAsMatmul {
  SmallVector<unsigned> m, k;
  unsigned n;
  std::optional<unsigned> group;
  /// The bytes of its im2col copy.
  double colBytes;

  /// The loops col holds: the matmul's rows and sums, and the groups.
  SmallVector<unsigned> colLoops() const {
    SmallVector<unsigned> loops(m);
    llvm::append_range(loops, k);
    if (group)
      loops.push_back(*group);
    return loops;
  }
};

/// What a dim of the matmul's operands is: its batch (a group), a row, a
/// column, or summed.
enum class Role { Batch, M, N, K };

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

/// The fewest output channels a group needs for its convolution to become
/// a batched matmul. With fewer, the matmuls are too thin to pay for the
/// im2col copy, and the loops are as fast or faster: 8x32x32 images of 32
/// groups by 3x3 windows here, 2 channels in and 4 out took 7.1 ms as
/// matmuls and 7.3 as loops, 4 in and 2 out 11.6 against 6.0, 4 and 4
/// 11.7 against 15.1, 4 and 8 9.7 against 30.
constexpr int64_t kMinGroupOutputChannels = 4;

/// The fewest output pixels an image needs for a convolution whose output
/// holds its channel before its pixels (NCHW) to be a matmul per image,
/// made as it is. With fewer, each matmul is too short, and one matmul of
/// every image's pixels by the channels and a transpose of its product are
/// faster. 3x3 convolutions here, transposed / per image (best of 7 calls,
/// in turns in one process, dt-bench-pair): 32 images of 30x30 pixels out,
/// 64 channels to 64, 1.57x; 8 of 56x56, 1.06x; 16 of 28x28, 256 to 256,
/// 1.16x; 16 of 20x20, 128 to 128, 1.08x; 32 of 14x14, 1.21x (32 to 32,
/// 1.18x); 64 of 10x10, 1.13x; 64 of 7x7, 256 to 256, 0.84x; 256 of 4x4,
/// 128 to 128, 0.89x.
constexpr int64_t kMinImagePixels = 64;

/// `op` as a matmul, when it is a convolution of static float tensors that
/// multiplies and accumulates, with one output channel and at most one
/// group dim whose groups each sum over channels into
/// kMinGroupOutputChannels or more (a depthwise convolution stays loops).
/// A convolution that stays loops says why in `whyNot`; an op that is none
/// (a pooling, a matmul) leaves it empty.
std::optional<ConvAsMatmul> matchConvolution(linalg::LinalgOp op,
                                             std::string &whyNot) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAccumulateConvolution(op))
    return std::nullopt;
  auto stays = [&](const Twine &why) {
    whyNot = why.str();
    return std::nullopt;
  };
  if (op.hasDynamicShape())
    return stays("its shapes are not static");
  if (!llvm::all_of(op->getOperandTypes(), [](Type type) {
        return isa<FloatType>(getElementTypeOrSelf(type));
      }))
    return stays("its elements are not floats, which no library multiplies");
  if (op.hasIndexSemantics())
    return stays("its body reads the loop indices");
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims))
    return stays("linalg cannot tell its image, window and channel dims");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  bool sumsChannels = llvm::any_of(
      dims->inputChannel, [&](unsigned loop) { return ranges[loop] > 1; });
  if (dims->depth.size() > 1)
    return stays("it has several dims of groups");
  if (dims->outputChannel.size() > 1)
    return stays("it has several dims of output channels");
  if (dims->outputChannel.empty() || (!dims->depth.empty() && !sumsChannels))
    return stays("depthwise, nothing is summed across channels (its loops "
                 "vectorize along them)");
  int64_t groupChannels = ranges[dims->outputChannel.front()];
  if (!dims->depth.empty() && groupChannels < kMinGroupOutputChannels)
    return stays(Twine(groupChannels) +
                 " output channels a group, fewer than " +
                 Twine(kMinGroupOutputChannels) +
                 ": its matmuls would be too thin to pay for the im2col copy");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<SmallVector<unsigned>> filterLoops = loopsOf(maps[1]);
  std::optional<SmallVector<unsigned>> outputLoops = loopsOf(maps[2]);
  if (!filterLoops || !outputLoops)
    return stays("its filter or output is read at more than a loop index");
  ConvAsMatmul conv;
  conv.n = dims->outputChannel.front();
  if (!dims->depth.empty())
    conv.group = dims->depth.front();
  // The input must not depend on the output channel: col has no n.
  if (maps[0].isFunctionOfDim(conv.n))
    return stays("its input depends on its output channel");
  auto isMatmulDim = [&](unsigned loop) {
    return loop == conv.n || loop == conv.group;
  };
  conv.m = llvm::filter_to_vector(
      *outputLoops, [&](unsigned loop) { return !isMatmulDim(loop); });
  conv.k = llvm::filter_to_vector(
      *filterLoops, [&](unsigned loop) { return !isMatmulDim(loop); });
  // Every loop is a row, a column, summed or a group: the output holds m, n
  // and the group, the filter k, n and the group, and no loop is in both m
  // and k.
  unsigned shared = conv.group ? 2 : 1;
  if (conv.m.size() + conv.k.size() + shared != op.getNumLoops() ||
      outputLoops->size() != conv.m.size() + shared ||
      filterLoops->size() != conv.k.size() + shared ||
      llvm::any_of(conv.m,
                   [&](unsigned m) { return llvm::is_contained(conv.k, m); }))
    return stays("its loops are not a matmul's rows, columns, sums and groups");
  Type element = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  conv.colBytes = element.getIntOrFloatBitWidth() / 8;
  for (unsigned loop : conv.colLoops())
    conv.colBytes *= static_cast<double>(ranges[loop]);
  return conv;
}

//===----------------------------------------------------------------------===//
// Chunks
//===----------------------------------------------------------------------===//

/// A loop a convolution (or adjoint) is made in chunks along: `size` of
/// its `extent` iterations a chunk.
struct ChunkLoop {
  unsigned loop;
  int64_t size, extent;
};

/// A convolution (or adjoint) made a chunk at a time, so that each chunk's
/// col is made, multiplied and (an adjoint's) added up while it is in the
/// cache, where a whole batch's col goes to memory and back: along its
/// `images` (the loop its first input's first dim reads) and, where one
/// image's col alone passes the budget, along its `rows` too (the longest
/// loop of the first dim an operand reads through a window), each chunk of
/// images in chunks of rows.
struct Chunks {
  std::optional<ChunkLoop> images, rows;
  /// Where `rows` was found, for --explain: the operand (0 and 1 its
  /// inputs, 2 its output) and its dim.
  unsigned rowsOperand = 0, rowsDim = 0;
  /// Whether its 16-bit output, which several chunks add into, is summed in
  /// f32 across them and rounded once (widenChunkedSum).
  bool widened = false;

  SmallVector<ChunkLoop, 2> loops() const {
    SmallVector<ChunkLoop, 2> loops;
    for (const std::optional<ChunkLoop> &chunk : {images, rows})
      if (chunk)
        loops.push_back(*chunk);
    return loops;
  }

  /// The share of col a chunk holds.
  double share() const {
    double share = 1;
    for (const ChunkLoop &chunk : loops())
      share *= static_cast<double>(chunk.size) / chunk.extent;
    return share;
  }
};

/// The most iterations of `extent` that divide it (every chunk of one
/// static shape) and whose col, `perIteration` bytes each, fits in
/// `chunkBytes`; at least one.
int64_t chunkSize(int64_t extent, double perIteration, int64_t chunkBytes) {
  for (int64_t d = extent; d > 1; --d)
    if (extent % d == 0 && static_cast<double>(d) * perIteration <=
                               static_cast<double>(chunkBytes))
      return d;
  return 1;
}

/// Whether `op` can be made in chunks along `loop`: every operand reads it
/// at one dim at most, and where `plain`, at that dim alone.
bool chunkable(linalg::LinalgOp op, unsigned loop, bool plain) {
  return llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap map) {
    int reads = 0;
    for (AffineExpr result : map.getResults()) {
      if (!result.isFunctionOfDim(loop))
        continue;
      if (++reads > 1 || (plain && !isa<AffineDimExpr>(result)))
        return false;
    }
    return true;
  });
}

/// How small a share of col-chunk-bytes a chunk of rows may take (one
/// kMinRowsChunkShare-th of it): the rows that divide an image's evenly
/// can be few (a prime number of them: one), and a matmul of so few rows
/// runs far below the library's rate.
/// 3x3 convolutions of 64 channels by 64 filters here (Zen 3, dt-bench-pair,
/// best calls): 2 images of 112x112 pixels out (col 14 MiB an image), in
/// chunks of 8 rows (2 MiB) 25.8 ms, of 4 (1 MiB) and 2 (512 KiB) as
/// fast, whole images 32.2 ms; but 4 images of 13x13 by 384 filters (2.3
/// MiB an image), in chunks of one row (176 KiB) 38.7 ms, whole images 23.4.
constexpr double kMinRowsChunkShare = 4;

/// How `op`, whose col takes `colBytes` and holds the loops `colLoops`, is
/// made in chunks of at most `chunkBytes` of col each (as Chunks says), or
/// in the smallest it allows where even those pass it: one image, or rows
/// of one image that take a kMinRowsChunkShare of `chunkBytes` or more.
/// None where col fits whole, `chunkBytes` is 0, or no loop can be
/// chunked.
std::optional<Chunks> chooseChunks(linalg::LinalgOp op,
                                   ArrayRef<unsigned> colLoops, double colBytes,
                                   int64_t chunkBytes) {
  if (chunkBytes <= 0 || colBytes <= static_cast<double>(chunkBytes))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Chunks chunks;
  double perChunk = colBytes;
  // The images: the loop the first input's first dim reads alone.
  std::optional<unsigned> images;
  if (maps[0].getNumResults() > 0)
    if (auto dim = dyn_cast<AffineDimExpr>(maps[0].getResult(0)))
      if (llvm::is_contained(colLoops, dim.getPosition()) &&
          ranges[dim.getPosition()] > 1 &&
          chunkable(op, dim.getPosition(), /*plain=*/true))
        images = dim.getPosition();
  if (images) {
    int64_t extent = ranges[*images];
    int64_t size = chunkSize(extent, colBytes / extent, chunkBytes);
    chunks.images = ChunkLoop{*images, size, extent};
    perChunk *= static_cast<double>(size) / extent;
    if (perChunk <= static_cast<double>(chunkBytes))
      return chunks;
  }
  // The rows: of the first dim an operand reads through a window (a sum of
  // loops: the image's rows and the window's), the longest loop col holds.
  std::optional<unsigned> rows;
  for (auto [operand, map] : llvm::enumerate(maps)) {
    for (auto [dim, result] : llvm::enumerate(map.getResults())) {
      if (isa<AffineDimExpr, AffineConstantExpr>(result))
        continue;
      for (unsigned loop : colLoops)
        if (loop != images && result.isFunctionOfDim(loop) &&
            ranges[loop] > 1 && (!rows || ranges[loop] > ranges[*rows]) &&
            chunkable(op, loop, /*plain=*/false))
          rows = loop;
      if (rows) {
        chunks.rowsOperand = operand;
        chunks.rowsDim = dim;
        break;
      }
    }
    if (rows)
      break;
  }
  if (rows) {
    int64_t extent = ranges[*rows];
    double perRow = perChunk / static_cast<double>(extent);
    int64_t size = chunkSize(extent, perRow, chunkBytes);
    if (static_cast<double>(size) * perRow >=
        static_cast<double>(chunkBytes) / kMinRowsChunkShare)
      chunks.rows = ChunkLoop{*rows, size, extent};
  }
  if (!chunks.images && !chunks.rows)
    return std::nullopt;
  return chunks;
}

/// Whether `op` sums over `loop` (a reduction: a filter gradient's images).
bool isSummed(linalg::LinalgOp op, unsigned loop) {
  return op.getIteratorTypesArray()[loop] == utils::IteratorType::reduction;
}

/// Whether several of `chunks` add into some of `op`'s output: a chunked
/// loop is summed, or its output reads one at a sum of loops (an adjoint's
/// rows, whose chunks' outputs overlap).
bool chunksShareOutput(linalg::LinalgOp op, const Chunks &chunks) {
  AffineMap output = op.getIndexingMapsArray().back();
  return llvm::any_of(chunks.loops(), [&](const ChunkLoop &chunk) {
    return isSummed(op, chunk.loop) ||
           llvm::any_of(output.getResults(), [&](AffineExpr result) {
             return result.isFunctionOfDim(chunk.loop) &&
                    !isa<AffineDimExpr>(result);
           });
  });
}

/// `op`, whose 16-bit output several of `chunks` add into, made to sum in
/// f32 (its result rounded once after, as one library call over the whole
/// would), so that no chunk rounds what the next adds to; `op` itself
/// where it needs none. Fails where it cannot be widened.
FailureOr<linalg::LinalgOp>
widenChunkedSum(RewriterBase &rewriter, linalg::LinalgOp op, Chunks &chunks) {
  OpOperand &init = op.getDpsInitsMutable()[0];
  std::optional<HalfSum> sum = matchHalfSum(op, init);
  if (!sum || !chunksShareOutput(op, chunks))
    return op;
  FailureOr<linalg::GenericOp> wide = widenHalfSums(
      rewriter, op, {{init.getOperandNumber() - op.getNumDpsInputs(), *sum}});
  if (failed(wide))
    return failure();
  chunks.widened = true;
  return cast<linalg::LinalgOp>(wide->getOperation());
}

/// `op` tiled into a nest of scf.for over `chunks`, the fill that makes its
/// output fused into each chunk where the chunks are of its output (no
/// chunked loop summed) and cover it whole (its output read at loops: an
/// adjoint's, written at sums of them, may have rows it never writes,
/// which only the whole fill makes); the tiled op, in the innermost loop.
FailureOr<linalg::LinalgOp> tileIntoChunks(RewriterBase &rewriter,
                                           linalg::LinalgOp op,
                                           const Chunks &chunks) {
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
  SmallVector<unsigned> summed;
  for (const ChunkLoop &chunk : chunks.loops()) {
    sizes[chunk.loop] = rewriter.getIndexAttr(chunk.size);
    if (isSummed(op, chunk.loop))
      summed.push_back(chunk.loop);
  }
  bool coversOutput = llvm::all_of(
      op.getIndexingMapsArray().back().getResults(),
      [](AffineExpr result) { return isa<AffineDimExpr>(result); });
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(sizes);
  tiling.setReductionDims(summed);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (summed.empty() && coversOutput && isDestination &&
            isa<linalg::FillOp>(producer.getOwner()))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  auto chunk = cast<linalg::LinalgOp>(tiled->tiledAndFusedOps.front());
  for (OpResult result : op->getResults())
    rewriter.replaceAllUsesWith(result, tiled->replacements.lookup(result));
  rewriter.eraseOp(op);
  return chunk;
}

/// Says in `remark` how `chunks` make a convolution or adjoint `op`.
void explainChunks(InFlightDiagnostic &remark, linalg::LinalgOp op,
                   const std::optional<Chunks> &chunks) {
  if (!chunks)
    return;
  if (const std::optional<ChunkLoop> &images = chunks->images)
    remark << "in " << images->extent / images->size << " chunks of "
           << images->size << " along its first input's first dim (of "
           << images->extent << "), ";
  if (const std::optional<ChunkLoop> &rows = chunks->rows) {
    static constexpr StringLiteral kOperands[] = {"first input", "second input",
                                                  "output"};
    std::string read;
    llvm::raw_string_ostream(read)
        << op.getIndexingMapsArray()[chunks->rowsOperand].getResult(
               chunks->rowsDim);
    remark << (chunks->images ? "each in " : "in ") << rows->extent / rows->size
           << " chunks of " << rows->size << " along d" << rows->loop << " (of "
           << rows->extent << "), which its " << kOperands[chunks->rowsOperand]
           << "'s dim " << chunks->rowsDim << " reads at " << read << ", ";
  }
  if (chunks->widened)
    remark << "summed in f32 across its chunks and rounded once, ";
  remark << "each ";
}

//===----------------------------------------------------------------------===//
// A convolution
//===----------------------------------------------------------------------===//

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

/// The positions in `loops` of those in `wanted`, in the order `loops`
/// holds them.
SmallVector<int64_t> positionsOf(ArrayRef<unsigned> loops,
                                 ArrayRef<unsigned> wanted) {
  SmallVector<int64_t> positions;
  for (auto [i, loop] : llvm::enumerate(loops))
    if (llvm::is_contained(wanted, loop))
      positions.push_back(i);
  return positions;
}

/// Whether `positions`, ascending, follow one another.
bool consecutive(ArrayRef<int64_t> positions) {
  return positions.empty() || positions.back() - positions.front() + 1 ==
                                  static_cast<int64_t>(positions.size());
}

/// An operand of the matmul: a tensor of the convolution's loops collapsed
/// into one dim per role (a run of row or summed loops into one), and the
/// role of each of its dims.
struct MatmulOperand {
  Value value;
  SmallVector<Role> roles;
};

/// The extent of `operand`'s dim of `role`.
int64_t extentOf(const MatmulOperand &operand, Role role) {
  auto type = cast<RankedTensorType>(operand.value.getType());
  return type.getDimSize(llvm::find(operand.roles, role) -
                         operand.roles.begin());
}

/// `value`, whose dim i reads `loops[i]`, collapsed into a MatmulOperand:
/// the loops of one role must follow one another.
MatmulOperand collapseByRole(OpBuilder &b, Location loc, Value value,
                             ArrayRef<unsigned> loops,
                             function_ref<Role(unsigned)> roleOf) {
  MatmulOperand operand;
  SmallVector<ReassociationIndices> groups;
  for (auto [i, loop] : llvm::enumerate(loops)) {
    Role role = roleOf(loop);
    if (operand.roles.empty() || operand.roles.back() != role) {
      operand.roles.push_back(role);
      groups.emplace_back();
    }
    groups.back().push_back(i);
  }
  operand.value = tensor::CollapseShapeOp::create(b, loc, value, groups);
  return operand;
}

/// A generic `c[batch, m, n] += a[batch, m, k] * b[batch, k, n]` over the
/// MatmulOperands, each read in the order of its roles (the batch only when
/// `batched`), with no body yet: the one contraction
/// dt-convert-matmul-to-blas makes a library call.
linalg::GenericOp createMatmul(OpBuilder &b, Location loc,
                               const MatmulOperand &lhs,
                               const MatmulOperand &rhs,
                               const MatmulOperand &out, bool batched) {
  MLIRContext *ctx = b.getContext();
  unsigned batch = batched ? 1 : 0;
  auto matmulMap = [&](ArrayRef<Role> roles) {
    SmallVector<AffineExpr> results;
    for (Role role : roles) {
      unsigned dim = role == Role::Batch ? 0
                     : role == Role::M   ? batch
                     : role == Role::N   ? batch + 1
                                         : batch + 2;
      results.push_back(getAffineDimExpr(dim, ctx));
    }
    return AffineMap::get(batch + 3, 0, results, ctx);
  };
  SmallVector<utils::IteratorType> iterators(batch + 2,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
      b, loc, out.value.getType(), ValueRange{lhs.value, rhs.value}, out.value,
      {matmulMap(lhs.roles), matmulMap(rhs.roles), matmulMap(out.roles)},
      iterators);
}

/// `value`, whose dim i reads `loops[i]`, transposed so that the loops of
/// each role follow one another in the order of `roles`, each role's in the
/// order `value` holds them, unless they already follow one another; `loops`
/// permuted alike. Whether it was transposed.
bool groupByRole(OpBuilder &b, Location loc, Value &value,
                 SmallVector<unsigned> &loops,
                 function_ref<Role(unsigned)> roleOf, ArrayRef<Role> roles) {
  SmallVector<int64_t> permutation;
  bool grouped = true;
  for (Role role : roles) {
    SmallVector<int64_t> positions;
    for (auto [i, loop] : llvm::enumerate(loops))
      if (roleOf(loop) == role)
        positions.push_back(i);
    grouped &= consecutive(positions);
    permutation.append(positions);
  }
  if (grouped)
    return false;
  value = transpose(b, loc, value, permutation);
  loops = applyPermutation(loops, permutation);
  return true;
}

/// `op`'s location under `name`, so that dt-run --profile says what each
/// kernel and call made from it is (im2col, col2im, transpose, ...).
Location namedLoc(Operation *op, StringRef name) {
  return NameLoc::get(StringAttr::get(op->getContext(), name), op->getLoc());
}

/// Rewrites `op`, a convolution matched as `conv` (a chunk of it, one of
/// `chunks`, where it is made in chunks); with `explain`, a remark says what
/// it became. With `perImage`, an NCHW output of large enough images is a
/// matmul per image.
void rewrite(RewriterBase &rewriter, linalg::LinalgOp op,
             const ConvAsMatmul &conv, const std::optional<Chunks> &chunks,
             bool perImage, bool explain) {
  MLIRContext *ctx = op.getContext();
  auto named = [&](StringRef name) { return namedLoc(op, name); };
  Location loc = named("convolution");
  rewriter.setInsertionPoint(op);
  Value input = op.getDpsInputs()[0], filter = op.getDpsInputs()[1],
        init = op.getDpsInits()[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> outputLoops = *loopsOf(maps[2]),
                        filterLoops = *loopsOf(maps[1]);
  // An output that holds its channel before the image's dims (NCHW, CHW)
  // of kMinImagePixels or more is made as it is, a matmul per image of
  // [N, M] = [N, K] x [K, M]: the loops before the channel (the batch of
  // images) are the matmul's batch, which the filter does not read, and
  // col is [images, K, M], so that its copy runs along the input's rows.
  SmallVector<int64_t> outputM = positionsOf(outputLoops, conv.m);
  auto channel = llvm::find(outputLoops, conv.n);
  SmallVector<unsigned> pixels(std::next(channel), outputLoops.end());
  int64_t imagePixels = 1;
  for (unsigned loop : pixels)
    imagePixels *= ranges[loop];
  bool channelsFirst = perImage && !conv.group && !pixels.empty() &&
                       imagePixels >= kMinImagePixels;
  SmallVector<unsigned> images;
  if (channelsFirst)
    images.assign(outputLoops.begin(), channel);
  auto roleOf = [&](unsigned loop) {
    if (loop == conv.group || llvm::is_contained(images, loop))
      return Role::Batch;
    if (loop == conv.n)
      return Role::N;
    return llvm::is_contained(conv.m, loop) ? Role::M : Role::K;
  };
  auto parallel = [](unsigned n) {
    return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
  };
  SmallVector<unsigned> group;
  if (conv.group)
    group.push_back(*conv.group);

  // col[m..., g, k...] = input[map(m, g, k)]: the input's map over the
  // loops of m, the group and k, renumbered (n reads nothing), without the
  // loops of one trip (at 0), so that a 1x1 convolution of stride 1 reads
  // its input as it is; with them where that would leave the input read
  // along a dim at a loop alone, over less than its extent (a generic must
  // span such a dim: a stride that skips the last rows of the image).
  // col is [M, K], or [K, M] where the input's last dim (the one it holds
  // contiguous) is read at a row's loop alone (a filter's gradient: the
  // image's channels are its rows), so that the copy reads the input along
  // its rows; the library then reads col transposed. A group sits between
  // the two: the library steps over it from one group's matrix to the next.
  auto inputType = cast<RankedTensorType>(input.getType());
  auto lastRead = dyn_cast<AffineDimExpr>(maps[0].getResults().back());
  bool kFirst = lastRead && llvm::is_contained(conv.m, lastRead.getPosition());
  SmallVector<unsigned> colLoops;
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
    if (channelsFirst) {
      colLoops = images.empty() ? SmallVector<unsigned>() : kept(images);
      colLoops.append(kept(conv.k));
      colLoops.append(kept(pixels));
    } else {
      colLoops = kept(kFirst ? conv.k : conv.m);
      colLoops.append(group);
      colLoops.append(kept(kFirst ? conv.m : conv.k));
    }
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
  MatmulOperand a = collapseByRole(rewriter, loc, col, colLoops, roleOf);

  // The filter as [K, N] or [N, K] (and the group, before or after either)
  // where its k loops follow one another; else transposed to [g, K..., N]
  // first.
  groupByRole(rewriter, named("transpose"), filter, filterLoops, roleOf,
              {Role::Batch, Role::K, Role::N});
  MatmulOperand b = collapseByRole(rewriter, loc, filter, filterLoops, roleOf);

  // The output as [M, N] (and the group, before or after M) where its m
  // loops follow one another and n is last; else transposed to
  // [M..., g, N] first, and back after (a fill is made again in that
  // shape: the usual zeros, or a bias of one value).
  SmallVector<int64_t> toMatmul;
  if (!channelsFirst &&
      (!consecutive(outputM) || outputLoops.back() != conv.n)) {
    toMatmul = outputM;
    toMatmul.append(positionsOf(outputLoops, group));
    toMatmul.append(positionsOf(outputLoops, conv.n));
  }
  Value acc = init;
  if (!toMatmul.empty()) {
    if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
      acc = linalg::FillOp::create(rewriter, loc, fill.getInputs(),
                                   emptyPermuted(rewriter, loc, init, toMatmul))
                .getResult(0);
    } else {
      acc = transpose(rewriter, named("transpose"), init, toMatmul);
    }
    outputLoops = applyPermutation(outputLoops, toMatmul);
  }
  auto accType = cast<RankedTensorType>(acc.getType());
  MatmulOperand c = collapseByRole(rewriter, loc, acc, outputLoops, roleOf);

  // out[g, m, n] += col[g, m, k] * filter[g, k, n], each operand's dims in
  // the order it holds them, with the convolution's own body.
  bool batched = conv.group || !images.empty();
  auto matmul = createMatmul(rewriter, loc, a, b, c, batched);
  rewriter.cloneRegionBefore(op->getRegion(0), matmul.getRegion(),
                             matmul.getRegion().end());

  Value result = tensor::ExpandShapeOp::create(
      rewriter, loc, accType, matmul->getResult(0),
      cast<tensor::CollapseShapeOp>(c.value.getDefiningOp())
          .getReassociationIndices());
  if (!toMatmul.empty())
    result = transpose(rewriter, named("transpose"), result,
                       invertPermutationVector(toMatmul));

  if (explain) {
    InFlightDiagnostic remark = op.emitRemark();
    remark << op->getName() << ": ";
    explainChunks(remark, op, chunks);
    remark << "one library matmul";
    if (conv.group)
      remark << " batched over " << extentOf(c, Role::Batch) << " groups";
    else if (!images.empty())
      remark << " per image (" << extentOf(c, Role::Batch) << ")";
    remark << ", [" << extentOf(c, Role::M) << " x " << extentOf(a, Role::K)
           << "] x [" << extentOf(a, Role::K) << " x " << extentOf(c, Role::N)
           << "]" << (batched ? " each" : "") << ", of ";
    if (col == input) {
      remark << "its input as it is";
    } else {
      auto colType = cast<RankedTensorType>(col.getType());
      remark << "an im2col copy of its input ("
             << formatBytes(static_cast<double>(colType.getNumElements()) *
                            colType.getElementTypeBitWidth() / 8)
             << ")";
    }
    if (filter != op.getDpsInputs()[1])
      remark << "; the filter transposed first";
    if (!toMatmul.empty())
      remark << "; the output made with its channels last and transposed "
                "back";
    if (channelsFirst)
      remark << "; the output made as it is, channels before pixels";
  }
  rewriter.replaceOp(op, result);
}

//===----------------------------------------------------------------------===//
// A convolution's adjoint
//===----------------------------------------------------------------------===//

/// A convolution's adjoint as a matmul into col and a col2im: the loops
/// the output reads with both inputs (a grouped convolution's groups, the
/// batch), with the first input alone (m), with the second alone (n), and
/// the loops only the inputs read (k, summed).
struct AdjointAsMatmul {
  SmallVector<unsigned> batch, m, n, k;
  /// What col holds and the col2im adds up: the output's element type, or
  /// f32 for a 16-bit output, rounded once after.
  FloatType accumulator;
  /// The bytes of col.
  double colBytes;

  /// The loops col holds: the matmul's batch, rows and columns.
  SmallVector<unsigned> colLoops() const {
    SmallVector<unsigned> loops(batch);
    llvm::append_range(loops, m);
    llvm::append_range(loops, n);
    return loops;
  }
};

/// The fewest terms (the extent of the loops only the inputs read: the
/// forward convolution's output channels) an adjoint sums a point for its
/// matmul into col to pay, where its loops vectorize along the output's
/// rows (a last dim of kMinAdjointRow or more written at a loop alone:
/// NHWC's channels). Measured here on the gradient of 8x32x32 images of C
/// channels by F 3x3 filters, as a matmul and col2im against as loops:
/// C 64, F 2: 1.7 ms against 0.24; 64/4: 2.2 against 0.53; 16/4: 0.20
/// against 0.14; 64/8: 2.7 against 2.3, but 32/8: 0.54 against 1.0; 8/4,
/// whose rows are too short to vectorize: 0.12 against 0.72; 64/16: 1.9
/// against 17; 64/64: 5.9 against 24. Written NCHW, an adjoint's loops
/// run across the rows: 64/4 took 1.4 ms against 117.
constexpr int64_t kMinAdjointTerms = 8;
constexpr int64_t kMinAdjointRow = 16;

/// How an adjoint that stays loops says why.
constexpr StringLiteral kAdjointStays =
    "a convolution's adjoint (its output written at sums of loops), but ";

/// `op` as a convolution's adjoint: a multiply-accumulate of static float
/// tensors whose inputs are read at loops and whose output is written at
/// sums of them (`dx[n, h + kh, w + kw, c] += dy[n, h, w, f] *
/// filter[kh, kw, c, f]`), when each loop is a matmul's row, column, sum or
/// batch and it sums enough terms a point (kMinAdjointTerms). One that
/// stays loops says why in `whyNot`; any other op leaves it empty.
std::optional<AdjointAsMatmul> matchAdjoint(linalg::LinalgOp op,
                                            std::string &whyNot) {
  if (!op.hasPureTensorSemantics() || !isMultiplyAccumulateAdjoint(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto stays = [&](const Twine &why) {
    whyNot = (kAdjointStays + why).str();
    return std::nullopt;
  };
  if (op.hasDynamicShape())
    return stays("its shapes are not static");
  auto output = dyn_cast<FloatType>(getElementTypeOrSelf(op.getDpsInits()[0]));
  auto lhs = dyn_cast<FloatType>(getElementTypeOrSelf(op.getDpsInputs()[0]));
  auto rhs = dyn_cast<FloatType>(getElementTypeOrSelf(op.getDpsInputs()[1]));
  if (!output || !lhs || !rhs)
    return stays("its elements are not floats, which no library multiplies");
  if (op.hasIndexSemantics())
    return stays("its body reads the loop indices");
  AdjointAsMatmul adjoint;
  adjoint.accumulator =
      output.getWidth() >= 32 ? output : Float32Type::get(op.getContext());
  if (std::max(lhs.getWidth(), rhs.getWidth()) > adjoint.accumulator.getWidth())
    return stays("its inputs are wider than its output");
  for (unsigned loop : llvm::seq(op.getNumLoops())) {
    bool inLhs = maps[0].isFunctionOfDim(loop),
         inRhs = maps[1].isFunctionOfDim(loop),
         inOutput = maps[2].isFunctionOfDim(loop);
    if (inLhs && inRhs)
      (inOutput ? adjoint.batch : adjoint.k).push_back(loop);
    else if (inOutput && inLhs)
      adjoint.m.push_back(loop);
    else if (inOutput && inRhs)
      adjoint.n.push_back(loop);
    else
      return stays("its loops are not a matmul's rows, columns, sums and "
                   "groups");
  }
  if (adjoint.m.empty() || adjoint.n.empty() || adjoint.k.empty())
    return stays("its product has no rows, columns or sum to be a matmul");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t terms = 1;
  for (unsigned loop : adjoint.k)
    terms *= ranges[loop];
  auto lastDim = dyn_cast<AffineDimExpr>(maps[2].getResults().back());
  if (terms < kMinAdjointTerms && lastDim &&
      ranges[lastDim.getPosition()] >= kMinAdjointRow)
    return stays("it sums " + Twine(terms) + " terms a point, fewer than " +
                 Twine(kMinAdjointTerms) +
                 ", and its loops run along its output's rows");
  adjoint.colBytes = adjoint.accumulator.getWidth() / 8;
  for (unsigned loop : adjoint.colLoops())
    adjoint.colBytes *= static_cast<double>(ranges[loop]);
  return adjoint;
}

/// Rewrites `op`, a convolution's adjoint matched as `adjoint`, into
///
///   col[batch, m, n] = lhs[batch, m, k] * rhs[batch, k, n]  (a matmul)
///   out[<op's output map>] += col[batch, m, n]              (col2im)
///
/// (a chunk of it, one of `chunks`, where it is made in chunks); with
/// `explain`, a remark says what it became.
void rewriteAdjoint(RewriterBase &rewriter, linalg::LinalgOp op,
                    const AdjointAsMatmul &adjoint,
                    const std::optional<Chunks> &chunks, bool explain) {
  MLIRContext *ctx = op.getContext();
  auto named = [&](StringRef name) { return namedLoc(op, name); };
  Location loc = named("adjoint");
  rewriter.setInsertionPoint(op);
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1],
        init = op.getDpsInits()[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> lhsLoops = *loopsOf(maps[0]),
                        rhsLoops = *loopsOf(maps[1]);
  auto roleOf = [&](unsigned loop) {
    if (llvm::is_contained(adjoint.batch, loop))
      return Role::Batch;
    if (llvm::is_contained(adjoint.m, loop))
      return Role::M;
    return llvm::is_contained(adjoint.n, loop) ? Role::N : Role::K;
  };
  bool lhsMoved = groupByRole(rewriter, named("transpose"), lhs, lhsLoops,
                              roleOf, {Role::Batch, Role::M, Role::K});
  bool rhsMoved = groupByRole(rewriter, named("transpose"), rhs, rhsLoops,
                              roleOf, {Role::Batch, Role::K, Role::N});

  // col[batch, m, n], each role's loops in the order the inputs hold them;
  // or [batch, n, m] where the output's last dim steps fastest along a
  // row's loop (NCHW: the image's width, not the window's), so that the
  // col2im runs along the rows of both col and the output.
  std::optional<unsigned> fastest;
  for (unsigned loop : llvm::seq(op.getNumLoops()))
    if (maps[2].getResults().back().isFunctionOfDim(loop) &&
        (!fastest || ranges[loop] > ranges[*fastest]))
      fastest = loop;
  bool rowsLast = fastest && roleOf(*fastest) == Role::M;
  SmallVector<unsigned> colLoops;
  auto take = [&](ArrayRef<unsigned> loops, Role role) {
    for (unsigned loop : loops)
      if (roleOf(loop) == role)
        colLoops.push_back(loop);
  };
  take(lhsLoops, Role::Batch);
  take(rowsLast ? rhsLoops : lhsLoops, rowsLast ? Role::N : Role::M);
  take(rowsLast ? lhsLoops : rhsLoops, rowsLast ? Role::M : Role::N);
  SmallVector<int64_t> colShape = llvm::map_to_vector(
      colLoops, [&](unsigned loop) { return ranges[loop]; });
  FloatType accumulator = adjoint.accumulator;
  Value zero = arith::ConstantOp::create(rewriter, loc,
                                         rewriter.getZeroAttr(accumulator));
  Value colInit =
      linalg::FillOp::create(
          rewriter, loc, zero,
          tensor::EmptyOp::create(rewriter, loc, colShape, accumulator)
              .getResult())
          .getResult(0);
  // The library's rows are col's first dims: with n first, the second
  // input's loops, so that it writes col row by row.
  auto matmulRole = [&](unsigned loop) {
    Role role = roleOf(loop);
    if (rowsLast && role != Role::Batch && role != Role::K)
      return role == Role::M ? Role::N : Role::M;
    return role;
  };
  MatmulOperand a = collapseByRole(rewriter, loc, lhs, lhsLoops, matmulRole);
  MatmulOperand b = collapseByRole(rewriter, loc, rhs, rhsLoops, matmulRole);
  MatmulOperand c =
      collapseByRole(rewriter, loc, colInit, colLoops, matmulRole);
  if (rowsLast)
    std::swap(a, b);
  linalg::GenericOp matmul =
      createMatmul(rewriter, loc, a, b, c, !adjoint.batch.empty());
  {
    // acc + x * y, in the accumulator's type (as the libraries multiply).
    OpBuilder::InsertionGuard guard(rewriter);
    Block *body =
        rewriter.createBlock(&matmul.getRegion(), {},
                             {getElementTypeOrSelf(a.value),
                              getElementTypeOrSelf(b.value), accumulator},
                             {loc, loc, loc});
    auto widened = [&](Value value) -> Value {
      if (value.getType() == accumulator)
        return value;
      return arith::ExtFOp::create(rewriter, loc, accumulator, value);
    };
    Value product =
        arith::MulFOp::create(rewriter, loc, widened(body->getArgument(0)),
                              widened(body->getArgument(1)));
    linalg::YieldOp::create(rewriter, loc,
                            ValueRange{arith::AddFOp::create(
                                rewriter, loc, body->getArgument(2), product)});
  }
  Value col = tensor::ExpandShapeOp::create(
      rewriter, loc, colInit.getType(), matmul->getResult(0),
      cast<tensor::CollapseShapeOp>(c.value.getDefiningOp())
          .getReassociationIndices());

  // out[<op's output map>] += col: the output map over col's loops (k reads
  // nothing). A loop the output reads only in sums writes an element more
  // than once: a reduction.
  SmallVector<AffineExpr> renumbered(op.getNumLoops(),
                                     getAffineConstantExpr(0, ctx));
  for (auto [i, loop] : llvm::enumerate(colLoops))
    renumbered[loop] = getAffineDimExpr(i, ctx);
  AffineMap outputMap =
      maps[2].replaceDimsAndSymbols(renumbered, {}, colLoops.size(), 0);
  SmallVector<utils::IteratorType> iterators;
  for (unsigned i : llvm::seq<unsigned>(0, colLoops.size()))
    iterators.push_back(
        llvm::is_contained(outputMap.getResults(), getAffineDimExpr(i, ctx))
            ? utils::IteratorType::parallel
            : utils::IteratorType::reduction);
  Type outputElement = getElementTypeOrSelf(init);
  bool widen = outputElement != accumulator;
  Value acc = widen ? widenInit(rewriter, loc, init) : init;
  Value result =
      linalg::GenericOp::create(
          rewriter, named("col2im"), acc.getType(), col, acc,
          {rewriter.getMultiDimIdentityMap(colLoops.size()), outputMap},
          iterators,
          [](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(
                b, loc,
                ValueRange{arith::AddFOp::create(b, loc, args[1], args[0])});
          })
          ->getResult(0);
  if (widen)
    result = convertElements(rewriter, loc, result, outputElement);

  if (explain) {
    InFlightDiagnostic remark = op.emitRemark();
    remark << op->getName() << ": a convolution's adjoint, ";
    explainChunks(remark, op, chunks);
    remark << "one library matmul";
    bool batched = !adjoint.batch.empty();
    if (batched)
      remark << " batched over " << extentOf(c, Role::Batch) << " groups";
    remark << ", [" << extentOf(c, Role::M) << " x " << extentOf(a, Role::K)
           << "] x [" << extentOf(a, Role::K) << " x " << extentOf(c, Role::N)
           << "]" << (batched ? " each" : "") << ", into a col matrix ("
           << formatBytes(
                  static_cast<double>(ShapedType::getNumElements(colShape)) *
                  accumulator.getWidth() / 8)
           << ") that a col2im adds into its output";
    if (lhsMoved || rhsMoved)
      remark << "; its "
             << (lhsMoved && rhsMoved ? "inputs"
                 : lhsMoved           ? "first input"
                                      : "second input")
             << " transposed first";
    if (widen)
      remark << "; in f32, rounded once";
  }
  rewriter.replaceOp(op, result);
}

struct ConvolutionsToMatmulsPass
    : public mlir::dt::impl::ConvolutionsToMatmulsPassBase<
          ConvolutionsToMatmulsPass> {
  using Base::Base;
  void runOnOperation() override {
    // Each convolution, as a matmul or with why it stays loops, in order.
    struct Convolution {
      linalg::LinalgOp op;
      std::optional<ConvAsMatmul> conv;
      std::optional<AdjointAsMatmul> adjoint;
      std::string whyNot;
    };
    SmallVector<Convolution, 0> convolutions;
    IRRewriter rewriter(&getContext());
    // A filter's gradient written with the image second reads as a
    // convolution once its inputs are swapped (dt-normalize-tensor-ops does
    // so too, for the cost model).
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk(
        [&](linalg::GenericOp generic) { generics.push_back(generic); });
    for (linalg::GenericOp generic : generics)
      (void)swapIntoConvolution(rewriter, generic);
    getOperation().walk([&](linalg::LinalgOp op) {
      Convolution c{op, std::nullopt, std::nullopt, {}};
      c.conv = matchConvolution(op, c.whyNot);
      if (!c.conv && c.whyNot.empty())
        c.adjoint = matchAdjoint(op, c.whyNot);
      if (c.conv || c.adjoint || !c.whyNot.empty())
        convolutions.push_back(std::move(c));
    });
    for (Convolution &c : convolutions) {
      if (!c.conv && !c.adjoint) {
        if (explain)
          c.op.emitRemark() << c.op->getName() << " stays loops: " << c.whyNot;
        continue;
      }
      SmallVector<unsigned> colLoops =
          c.conv ? c.conv->colLoops() : c.adjoint->colLoops();
      double colBytes = c.conv ? c.conv->colBytes : c.adjoint->colBytes;
      std::optional<Chunks> chunks =
          chooseChunks(c.op, colLoops, colBytes, colChunkBytes);
      double madeBytes = colBytes;
      if (chunks)
        madeBytes *= chunks->share();
      if (madeBytes > static_cast<double>(maxColBytes)) {
        if (explain)
          c.op.emitRemark()
              << c.op->getName() << " stays loops: "
              << (c.conv ? "its im2col copy" : kAdjointStays + "its col matrix")
              << " would take " << formatBytes(madeBytes)
              << (chunks ? " a chunk" : "") << ", over max-col-bytes ("
              << formatBytes(static_cast<double>(maxColBytes)) << ")";
        continue;
      }
      linalg::LinalgOp op = c.op;
      if (chunks) {
        FailureOr<linalg::LinalgOp> chunk =
            widenChunkedSum(rewriter, op, *chunks);
        if (succeeded(chunk) && *chunk != op) {
          // Widened, it is the same convolution with an f32 output.
          std::string whyNot;
          if (c.conv)
            c.conv = matchConvolution(*chunk, whyNot);
          else
            c.adjoint = matchAdjoint(*chunk, whyNot);
          if (!c.conv && !c.adjoint)
            chunk = failure();
        }
        if (succeeded(chunk))
          chunk = tileIntoChunks(rewriter, *chunk, *chunks);
        if (failed(chunk)) {
          c.op.emitError("dt-convolutions-to-matmuls could not split it "
                         "into chunks");
          return signalPassFailure();
        }
        op = *chunk;
      }
      if (c.conv)
        rewrite(rewriter, op, *c.conv, chunks, perImage, explain);
      else
        rewriteAdjoint(rewriter, op, *c.adjoint, chunks, explain);
    }
  }
};
} // namespace
