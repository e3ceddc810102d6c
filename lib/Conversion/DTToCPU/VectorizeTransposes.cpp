//===- VectorizeTransposes.cpp - dt-vectorize-transposes ------------------===//
//
// A copy that moves the innermost dim (a transpose of a matrix's rows and
// columns, an NHWC image into NCHW) reads along one buffer's rows and
// writes down the other's columns: as scalar loops LLVM vectorizes it with
// a gather or a scatter, an element a row apart each. Here it is copied in
// square blocks: each block's rows are loaded whole from the input,
// transposed in registers by a network of shuffles, computed on by the
// op's body (with the op's other inputs, read along the output's rows or an
// element a row) and stored whole into the output's rows; the edges that do
// not fill a block stay the op they were, on subviews.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dt {
#define GEN_PASS_DEF_VECTORIZETRANSPOSESPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The output's rows up to which blocks are copied in the input's order.
constexpr int64_t kShortRowBytes = 512;

namespace {
/// A copy on buffers that `op` makes, read at one permutation of its loops
/// and written at another, whose innermost dims are different loops.
struct TransposingCopy {
  linalg::LinalgOp op;
  /// The input read transposed. Any other is read along the output's rows
  /// (its own innermost dim at the output's) or at one element a row.
  OpOperand *source;
  /// The output's innermost loop (a column of the input) and the input's
  /// (a column of the output).
  unsigned outputRow, inputRow;
  /// The side of a block, in elements.
  int64_t block;
};
} // namespace

/// Whether `type` is a buffer of static shape whose innermost dim is
/// contiguous (a vector loads or stores a run of it).
static bool hasContiguousRows(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() || memref.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(memref.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// Whether `op`'s body computes its element from the input's alone, by ops
/// that apply to vectors element by element (a copy yields the input's
/// element as it is; a fused one converts or scales it): values from
/// outside the body are the same for every element.
static bool hasElementwiseBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body)
    return false;
  for (Operation &inner : body->without_terminator()) {
    if (inner.getNumRegions() != 0 || inner.getNumResults() != 1 ||
        (!OpTrait::hasElementwiseMappableTraits(&inner) &&
         !inner.hasTrait<OpTrait::ConstantLike>()))
      return false;
    for (Type type : inner.getOperandTypes())
      if (!type.isIntOrIndexOrFloat())
        return false;
    if (!inner.getResult(0).getType().isIntOrIndexOrFloat())
      return false;
  }
  return true;
}

/// The width of `element` if a vector of it loads or stores a row of a
/// buffer (8 to 64 bits, a power of two).
static std::optional<unsigned> vectorElementWidth(Type element) {
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8 ||
      !llvm::isPowerOf2_32(element.getIntOrFloatBitWidth()) ||
      element.getIntOrFloatBitWidth() > 64)
    return std::nullopt;
  return element.getIntOrFloatBitWidth();
}

/// The loop `map` reads its operand's innermost dim at, if it has dims.
static std::optional<unsigned> innermostLoop(AffineMap map) {
  if (map.getNumResults() == 0)
    return std::nullopt;
  return cast<AffineDimExpr>(map.getResults().back()).getPosition();
}

/// `op` as a transposing copy whose blocks of `vectorBits`-wide rows (a
/// power of two, from 2 to 16 elements) fit at least once along both rows,
/// if it is one.
static std::optional<TransposingCopy>
matchTransposingCopy(linalg::LinalgOp op, unsigned vectorBits) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() < 2)
    return std::nullopt;
  OpOperand *output = op.getDpsInitOperand(0);
  AffineMap outputMap = op.getMatchingIndexingMap(output);
  std::optional<unsigned> width =
      vectorElementWidth(getElementTypeOrSelf(output->get().getType()));
  if (!width || !outputMap.isPermutation() ||
      !hasContiguousRows(output->get().getType()) ||
      op.payloadUsesValueFromOperand(output) || !hasElementwiseBody(op))
    return std::nullopt;
  unsigned outputRow = *innermostLoop(outputMap);
  Value outputRoot = bufferRoot(output->get());
  OpOperand *source = nullptr;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    AffineMap map = op.getMatchingIndexingMap(input);
    // (A copy within one buffer keeps its loops' order of reads and
    // writes.)
    if (!type || !type.hasStaticShape() || !map.isProjectedPermutation() ||
        bufferRoot(input->get()) == outputRoot)
      return std::nullopt;
    std::optional<unsigned> innermost = innermostLoop(map);
    bool alongRows = innermost == outputRow;
    if (!alongRows && map.isPermutation() && !source) {
      source = input;
    } else if (!alongRows) {
      // One element a row: read at neither the output's innermost loop
      // nor (a second transposed input) a stride along it.
      if (map.isFunctionOfDim(outputRow) ||
          !type.getElementType().isIntOrFloat())
        return std::nullopt;
      continue;
    }
    std::optional<unsigned> inputWidth =
        vectorElementWidth(type.getElementType());
    if (!inputWidth || !hasContiguousRows(type))
      return std::nullopt;
    width = std::max(*width, *inputWidth);
  }
  if (!source)
    return std::nullopt;
  unsigned inputRow = *innermostLoop(op.getMatchingIndexingMap(source));
  int64_t block =
      std::clamp<int64_t>(llvm::bit_floor(vectorBits / *width), 2, 16);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges[inputRow] < block || ranges[outputRow] < block)
    return std::nullopt;
  return TransposingCopy{op, source, outputRow, inputRow, block};
}

/// `rows`, the rows of a square block, made its columns: at each step `h`
/// (a power of two), rows i and i + h (bit h of i clear) swap their
/// elements at columns with bit h set and clear, so that element (i, j)
/// goes to (i ^ h, j ^ h) where bit h of i and j differ. After every bit,
/// (i, j) is at (j, i). Each swap is one two-input shuffle per row, which
/// the backend selects as an unpack, a blend or a lane permute.
static void transposeInRegisters(OpBuilder &builder, Location loc,
                                 MutableArrayRef<Value> rows) {
  int64_t side = rows.size();
  for (int64_t h = side / 2; h >= 1; h /= 2) {
    SmallVector<int64_t> low, high;
    for (int64_t j = 0; j < side; ++j) {
      bool set = j & h;
      low.push_back(set ? side + j - h : j);
      high.push_back(set ? side + j : j + h);
    }
    for (int64_t i = 0; i < side; ++i) {
      if (i & h)
        continue;
      Value x = rows[i], y = rows[i + h];
      rows[i] = vector::ShuffleOp::create(builder, loc, x, y, low);
      rows[i + h] = vector::ShuffleOp::create(builder, loc, x, y, high);
    }
  }
}

/// `copy`'s body applied to a block's rows: `lanes` holds, for each input's
/// block argument, its vector at each row (the rows of the result).
static SmallVector<Value>
applyBody(OpBuilder &builder, Location loc, linalg::LinalgOp copy,
          ArrayRef<std::pair<Value, SmallVector<Value>>> lanes) {
  int64_t side = lanes.front().second.size();
  int64_t width =
      cast<VectorType>(lanes.front().second.front().getType()).getNumElements();
  Block *body = copy.getBlock();
  // A value from outside the body, or a constant in it, is every lane's.
  IRMapping broadcasts;
  auto broadcast = [&](Value scalar) {
    if (!broadcasts.contains(scalar))
      broadcasts.map(scalar,
                     vector::BroadcastOp::create(
                         builder, loc,
                         VectorType::get({width}, scalar.getType()), scalar));
  };
  auto fromOutside = [&](Value value) {
    return value.getParentBlock() != body;
  };
  for (Operation &op : body->without_terminator()) {
    if (op.hasTrait<OpTrait::ConstantLike>()) {
      Value constant = builder.clone(op)->getResult(0);
      broadcast(constant);
      broadcasts.map(op.getResult(0), broadcasts.lookup(constant));
      continue;
    }
    for (Value operand : op.getOperands())
      if (fromOutside(operand))
        broadcast(operand);
  }
  Value yielded = body->getTerminator()->getOperand(0);
  if (fromOutside(yielded))
    broadcast(yielded);
  SmallVector<Value> results;
  for (int64_t row = 0; row < side; ++row) {
    IRMapping lanewise = broadcasts;
    for (const auto &[argument, rows] : lanes)
      lanewise.map(argument, rows[row]);
    for (Operation &op : body->without_terminator()) {
      if (lanewise.contains(op.getResult(0)))
        continue;
      Value result = builder.clone(op, lanewise)->getResult(0);
      result.setType(VectorType::get({width}, result.getType()));
    }
    results.push_back(lanewise.lookup(yielded));
  }
  return results;
}

/// `copy`'s operands at loops [lower, upper), as subviews.
static SmallVector<Value> subviewsAt(OpBuilder &builder, Location loc,
                                     linalg::LinalgOp copy,
                                     ArrayRef<int64_t> lower,
                                     ArrayRef<int64_t> upper) {
  SmallVector<Value> operands;
  for (OpOperand &operand : copy->getOpOperands()) {
    AffineMap map = copy.getMatchingIndexingMap(&operand);
    SmallVector<OpFoldResult> offsets, sizes,
        strides(map.getNumResults(), builder.getIndexAttr(1));
    for (AffineExpr result : map.getResults()) {
      unsigned loop = cast<AffineDimExpr>(result).getPosition();
      offsets.push_back(builder.getIndexAttr(lower[loop]));
      sizes.push_back(builder.getIndexAttr(upper[loop] - lower[loop]));
    }
    operands.push_back(memref::SubViewOp::create(builder, loc, operand.get(),
                                                 offsets, sizes, strides));
  }
  return operands;
}

/// The copy at loops [lower, upper) as the op it was, on subviews.
static void copyEdge(OpBuilder &builder, linalg::LinalgOp copy,
                     ArrayRef<int64_t> lower, ArrayRef<int64_t> upper) {
  for (auto [low, high] : llvm::zip(lower, upper))
    if (low >= high)
      return;
  SmallVector<Value> operands =
      subviewsAt(builder, copy.getLoc(), copy, lower, upper);
  Operation *edge = builder.clone(*copy);
  edge->setOperands(operands);
}

/// Replaces `match`'s op by loops over its blocks and, where its rows do
/// not fill a block, by the op on the edges.
static void vectorize(IRRewriter &rewriter, const TransposingCopy &match) {
  linalg::LinalgOp copy = match.op;
  Location loc = copy.getLoc();
  rewriter.setInsertionPoint(copy);
  OpOperand *source = match.source;
  OpOperand *output = copy.getDpsInitOperand(0);
  AffineMap sourceMap = copy.getMatchingIndexingMap(source);
  AffineMap outputMap = copy.getMatchingIndexingMap(output);
  SmallVector<int64_t> ranges = copy.getStaticLoopRanges();
  int64_t block = match.block;
  unsigned a = match.outputRow, b = match.inputRow;
  auto whole = [&](unsigned loop) {
    return ranges[loop] - ranges[loop] % block;
  };

  // The blocks, their loops nested in the order of the output's dims (the
  // innermost loop stepping along its rows), unless the output's rows are
  // short: then in the source's (see Passes.td).
  bool shortRows = ranges[a] * getElementTypeOrSelf(output->get().getType())
                                   .getIntOrFloatBitWidth() <=
                   8 * kShortRowBytes;
  SmallVector<unsigned> order = llvm::map_to_vector(
      (shortRows ? sourceMap : outputMap).getResults(), [](AffineExpr result) {
        return cast<AffineDimExpr>(result).getPosition();
      });
  llvm::SmallDenseMap<int64_t, Value> constants;
  // Index constants, made once before the loops.
  auto constant = [&](int64_t value) {
    Value &made = constants[value];
    if (!made)
      made = arith::ConstantIndexOp::create(rewriter, loc, value);
    return made;
  };
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned loop : order) {
    bool blocked = loop == a || loop == b;
    lbs.push_back(constant(0));
    ubs.push_back(constant(blocked ? whole(loop) : ranges[loop]));
    steps.push_back(constant(blocked ? block : 1));
  }
  auto rowType =
      VectorType::get({block}, getElementTypeOrSelf(source->get().getType()));
  scf::buildLoopNest(
      rewriter, loc, lbs, ubs, steps,
      [&](OpBuilder &builder, Location loc, ValueRange ivs) {
        SmallVector<Value> at(ranges.size());
        for (auto [loop, iv] : llvm::zip(order, ivs))
          at[loop] = iv;
        // The element `offset` past the block's corner along `loop`, at
        // `map`'s dims.
        auto indices = [&](AffineMap map, unsigned loop, int64_t offset) {
          SmallVector<Value> result;
          for (AffineExpr dim : map.getResults()) {
            unsigned position = cast<AffineDimExpr>(dim).getPosition();
            Value index = at[position];
            if (position == loop && offset != 0)
              index =
                  arith::AddIOp::create(builder, loc, index, constant(offset));
            result.push_back(index);
          }
          return result;
        };
        SmallVector<Value> rows;
        for (int64_t r = 0; r < block; ++r)
          rows.push_back(vector::LoadOp::create(
              builder, loc, rowType, source->get(), indices(sourceMap, a, r)));
        transposeInRegisters(builder, loc, rows);
        SmallVector<std::pair<Value, SmallVector<Value>>> lanes;
        lanes.emplace_back(copy.getMatchingBlockArgument(source),
                           std::move(rows));
        // The other inputs at each of the output's rows in the block: a
        // vector along it, or one element for all of it (the same for
        // every row where the input is not read along the block's column).
        for (OpOperand *other : copy.getDpsInputOperands()) {
          if (other == source)
            continue;
          AffineMap map = copy.getMatchingIndexingMap(other);
          auto vectorType = VectorType::get(
              {block}, getElementTypeOrSelf(other->get().getType()));
          SmallVector<Value> values;
          for (int64_t c = 0; c < block; ++c) {
            if (c > 0 && !map.isFunctionOfDim(b)) {
              values.push_back(values.front());
            } else if (innermostLoop(map) == a) {
              values.push_back(vector::LoadOp::create(
                  builder, loc, vectorType, other->get(), indices(map, b, c)));
            } else {
              Value scalar = memref::LoadOp::create(builder, loc, other->get(),
                                                    indices(map, b, c));
              values.push_back(vector::BroadcastOp::create(builder, loc,
                                                           vectorType, scalar));
            }
          }
          lanes.emplace_back(copy.getMatchingBlockArgument(other),
                             std::move(values));
        }
        SmallVector<Value> results = applyBody(builder, loc, copy, lanes);
        for (int64_t c = 0; c < block; ++c)
          vector::StoreOp::create(builder, loc, results[c], output->get(),
                                  indices(outputMap, b, c));
      });

  // The edges: past the last whole block along the output's row (every
  // column), then past it along the input's row (the columns of the
  // blocks).
  SmallVector<int64_t> lower(ranges.size(), 0), upper(ranges);
  lower[a] = whole(a);
  copyEdge(rewriter, copy, lower, upper);
  lower[a] = 0;
  upper[a] = whole(a);
  lower[b] = whole(b);
  copyEdge(rewriter, copy, lower, upper);
  rewriter.eraseOp(copy);
}

namespace {
struct VectorizeTransposesPass
    : public mlir::dt::impl::VectorizeTransposesPassBase<
          VectorizeTransposesPass> {
  using VectorizeTransposesPassBase::VectorizeTransposesPassBase;
  mlir::dt::Statistic numVectorized{
      this, "vectorized", "Transposing copies made of blocks in registers"};
  void runOnOperation() override {
    SmallVector<TransposingCopy> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<TransposingCopy> match =
              matchTransposingCopy(op, vectorBits))
        work.push_back(*match);
    });
    IRRewriter rewriter(&getContext());
    for (const TransposingCopy &match : work) {
      vectorize(rewriter, match);
      ++numVectorized;
    }
  }
};
} // namespace
