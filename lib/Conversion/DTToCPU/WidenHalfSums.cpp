//===- WidenHalfSums.cpp - dt-widen-half-sums -----------------------------===//
//
// A sum into a 16-bit float accumulates in f32 and rounds once. linalg's
// body (`%s = arith.addf %acc, %x : bf16`) rounds the accumulator at every
// step: a sum of 300 bf16 ones stalls at 256, and the order of the steps,
// which a distributed program changes, moves the result by several units
// in the last place of the largest partial sum. The matmuls the libraries
// take already accumulate in f32 (dt-convert-matmul-to-blas); this pass
// gives every other 16-bit sum (reductions, matrix-vector products, dots,
// softmax's row sums) the same arithmetic, as PyTorch's and cuBLAS's do:
//
//   %r = linalg.generic ins(%x : tensor<8x64xbf16>) outs(%z : tensor<8xbf16>)
//       { %s = arith.addf %acc, %v : bf16; linalg.yield %s }
//
// becomes an f32 init (a fill of the widened value, when %z was a fill,
// else %z widened), the same body with `%acc` in f32 and `%v` extended (a
// term that is a product, `%v = arith.mulf %a, %b`, multiplied in f32 from
// `%a` and `%b` extended: exact, as the libraries' products are), and an
// elementwise rounding of the f32 result into a fresh 16-bit tensor.
// The sum may also be yielded through a select that keeps `%acc` where a
// condition fails (`select %valid, %s, %acc`): dt-partition's mask of the
// padding rows of an uneven shard.
//
// With `extrema` (on the CPU), a running maximum or minimum (a softmax's
// row max) is taken in f32 the same way: the f32 extremum of 16-bit values is
// one of them, so the result is the same, without a rounding at every step (a
// bf16 row max of 4096x4096 took 8x the f32 one's time, its loop neither
// vectorized nor free of the roundings' integer arithmetic).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/Transforms/HalfSums.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::dt {
#define GEN_PASS_DEF_WIDENHALFSUMSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct WidenHalfSumsPass
    : public mlir::dt::impl::WidenHalfSumsPassBase<WidenHalfSumsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<
        std::pair<linalg::LinalgOp, SmallVector<std::pair<unsigned, HalfSum>>>>
        work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0 ||
          isLibraryGemm(op))
        return;
      SmallVector<std::pair<unsigned, HalfSum>> sums;
      for (OpOperand &init : op.getDpsInitsMutable())
        if (std::optional<HalfSum> sum = matchHalfSum(op, init, extrema))
          sums.push_back(
              {init.getOperandNumber() - op.getNumDpsInputs(), *sum});
      if (!sums.empty())
        work.emplace_back(op, std::move(sums));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, sums] : work)
      (void)widenHalfSums(rewriter, op, sums);
  }
};
} // namespace
