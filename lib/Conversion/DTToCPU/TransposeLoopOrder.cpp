//===- TransposeLoopOrder.cpp - dt-transpose-loop-order -------------------===//
//
// convert-linalg-to-loops nests an op's loops in the order of its
// iteration space, which for linalg.transpose (and any one-input map that
// reads its input permuted) is the output's: the innermost loop writes
// along the output's row and reads the input down a column, one cache line
// per element, each a row apart, so that a power-of-two row maps them all
// to one cache set. Read along the input's rows instead (the writes are
// the strided ones, which the store buffers absorb), the same copy runs
// several times faster (Passes.td has the numbers).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::dt {
#define GEN_PASS_DEF_TRANSPOSELOOPORDERPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The stride (in elements) of `operand`'s dim that `map` reads at `loop`,
/// when static.
static std::optional<int64_t> strideAlong(OpOperand &operand, AffineMap map,
                                          unsigned loop) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  std::optional<unsigned> dim =
      map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
  if (!dim || ShapedType::isDynamic(strides[*dim]))
    return std::nullopt;
  return strides[*dim];
}

/// The loops of `op` in the order its input holds its dims, when `op` is a
/// map on buffers of one input, read at a permutation of its loops, into
/// one output it writes over at another, and the output's stride along the
/// input's row is shorter than the input's along the output's row (the
/// strided side of the copy steps less far).
static std::optional<SmallVector<unsigned>>
inputOrder(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() < 2)
    return std::nullopt;
  OpOperand *input = op.getDpsInputOperand(0);
  OpOperand *output = op.getDpsInitOperand(0);
  if (op.payloadUsesValueFromOperand(output))
    return std::nullopt;
  AffineMap inputMap = op.getMatchingIndexingMap(input);
  AffineMap outputMap = op.getMatchingIndexingMap(output);
  if (!inputMap.isPermutation() || !outputMap.isPermutation())
    return std::nullopt;
  unsigned inputRow = cast<AffineDimExpr>(inputMap.getResults().back())
                          .getPosition(),
           outputRow = cast<AffineDimExpr>(outputMap.getResults().back())
                           .getPosition();
  std::optional<int64_t> written = strideAlong(*output, outputMap, inputRow);
  std::optional<int64_t> read = strideAlong(*input, inputMap, outputRow);
  // An identity input map: its loops are in that order already.
  if (inputRow == outputRow || inputMap.isIdentity() || !written || !read ||
      *written >= *read)
    return std::nullopt;
  return llvm::map_to_vector(inputMap.getResults(), [](AffineExpr result) {
    return cast<AffineDimExpr>(result).getPosition();
  });
}

namespace {
struct TransposeLoopOrderPass
    : public mlir::dt::impl::TransposeLoopOrderPassBase<
          TransposeLoopOrderPass> {
  mlir::dt::Statistic numReordered{
      this, "reordered", "Transposing copies made to read along their rows"};
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, SmallVector<unsigned>>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<SmallVector<unsigned>> order = inputOrder(op))
        work.emplace_back(op, std::move(*order));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, order] : work) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic =
          isa<linalg::GenericOp>(op)
              ? FailureOr<linalg::GenericOp>(cast<linalg::GenericOp>(op))
              : linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic) ||
          failed(linalg::interchangeGenericOp(rewriter, *generic, order)))
        continue;
      ++numReordered;
    }
  }
};
} // namespace
