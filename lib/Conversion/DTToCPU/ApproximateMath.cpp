//===- ApproximateMath.cpp - dt-approximate-math --------------------------===//
//
// On the CPU, `math.exp` and its kin become calls to libm, one element at a
// time: LLVM cannot vectorize a loop around them, and an exp that underflows
// (a softmax over scores far below the row's maximum) takes libm's errno
// path as well. Here the ones whose polynomial approximation upstream
// provides and whose error was measured (docs/Runtime.md, "Transcendental
// functions") become arithmetic, which vectorizes with the loop around it;
// 16-bit ones are computed in f32 first.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dt {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The functions approximated: each within 2.4 f32 epsilons of the exact
/// result, relative, over its normal range (measured against f64 libm).
static bool isApproximatedName(StringRef name) {
  name.consume_front("math.");
  return llvm::is_contained({"exp", "log", "tanh", "erf"}, name);
}

static bool isApproximated(Operation *op) {
  return isa_and_nonnull<math::MathDialect>(op->getDialect()) &&
         isApproximatedName(op->getName().getStringRef());
}

namespace {
struct ApproximateMathPass
    : public mlir::dt::impl::ApproximateMathPassBase<ApproximateMathPass> {
  mlir::dt::Statistic numApproximated{
      this, "approximated", "Math ops replaced by a polynomial approximation"};
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isApproximated(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    // A 16-bit one is computed in f32 (as LLVM would), and approximated there.
    populateMathF32ExpansionPatterns(patterns, isApproximatedName);
    populateMathPolynomialApproximationPatterns(patterns, isApproximatedName);
    // Only these ops and what their rewrites create: nothing else in the
    // program is folded or rewritten on the way.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.enableFolding(false);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
    int64_t left = 0;
    getOperation().walk([&](Operation *op) { left += isApproximated(op); });
    // What is left is f64, which stays with libm.
    numApproximated += ops.size() - left;
  }
};
} // namespace
