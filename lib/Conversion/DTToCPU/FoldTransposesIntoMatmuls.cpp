//===- FoldTransposesIntoMatmuls.cpp - dt-fold-transposes-into-matmuls ----===//
//
// A backward pass written out by hand is full of `matmul(transpose(x), dy)`
// and `matmul(dy, transpose(w))`. The libraries read either operand
// transposed for free (BLAS's trans flags, cuBLASLt's layouts), so a copy
// that only permutes a matmul's operand is folded into the matmul's
// indexing map instead: the matmul reads the copy's input where the copy
// would have put each element, and the copy goes when nothing else reads
// it.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dt {
#define GEN_PASS_DEF_FOLDTRANSPOSESINTOMATMULSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// Where a permuting copy reads each element it writes: its input, and the
/// map from the copy's result dims to the input's.
struct Permuted {
  Value input;
  AffineMap resultToInput;
};

/// `value` as a copy of another tensor with its dims permuted, when its
/// producer is one: linalg.transpose, or an all-parallel op of one input
/// that yields its input's element unchanged, both read at permutations.
std::optional<Permuted> permutedCopy(Value value) {
  auto op = value.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return std::nullopt;
  OpOperand *input = op.getDpsInputOperand(0);
  Block *body = op.getBlock();
  Operation *yield = body->getTerminator();
  if (!body->without_terminator().empty() || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != op.getMatchingBlockArgument(input))
    return std::nullopt;
  AffineMap inputMap = op.getMatchingIndexingMap(input);
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!inputMap.isPermutation() || !outputMap.isPermutation())
    return std::nullopt;
  return Permuted{input->get(),
                  inputMap.compose(inversePermutation(outputMap))};
}

struct FoldTransposesIntoMatmulsPass
    : public mlir::dt::impl::FoldTransposesIntoMatmulsPassBase<
          FoldTransposesIntoMatmulsPass> {
  mlir::dt::Statistic numFolded{
      this, "folded", "Permuted copies a matmul reads through its map instead"};
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && isLibraryGemm(op, vectors))
        matmuls.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls)
      fold(rewriter, op);
  }

  /// Reads each input of `op` that a permuting copy makes from the copy's
  /// input instead, where the library still takes the result as it is.
  void fold(IRRewriter &rewriter, linalg::LinalgOp op) {
    SmallVector<Value> inputs(op.getDpsInputs());
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Operation *> copies;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      std::optional<Permuted> copy = permutedCopy(input);
      if (!copy)
        continue;
      copies.push_back(input.getDefiningOp());
      inputs[i] = copy->input;
      maps[i] = copy->resultToInput.compose(maps[i]);
    }
    if (copies.empty())
      return;
    rewriter.setInsertionPoint(op);
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
        maps, op.getIteratorTypesArray());
    rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                               generic.getRegion().begin());
    if (!isLibraryGemm(generic, vectors)) {
      // A batch no longer outermost, say: the library would need a copy.
      rewriter.eraseOp(generic);
      return;
    }
    if (explain) {
      std::string at = sourceLocation(op.getLoc());
      for (Operation *copy : copies)
        // Generalized by now: named for what it does.
        copy->emitRemark() << "transpose, not copied: the matmul"
                           << (at.empty() ? "" : " at " + at)
                           << " reads its input transposed (the library's "
                              "trans flags)";
    }
    rewriter.replaceOp(op, generic);
    for (Operation *copy :
         llvm::SmallSetVector<Operation *, 2>(copies.begin(), copies.end()))
      if (copy->use_empty())
        rewriter.eraseOp(copy);
    numFolded += copies.size();
  }
};
} // namespace
