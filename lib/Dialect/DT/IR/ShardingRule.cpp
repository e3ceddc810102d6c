//===- ShardingRule.cpp - Factor-based sharding rules of ops --------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;
using ::dt::ReductionKind;

#include "dt/Dialect/DT/IR/DTInterfaces.cpp.inc"

void ShardingRule::finalize() {
  auto markDiagonals = [&](ArrayRef<SmallVector<int64_t, 4>> tensors) {
    for (const auto &dims : tensors)
      for (auto [i, factor] : llvm::enumerate(dims))
        if (factor != kNoFactor &&
            llvm::count(ArrayRef<int64_t>(dims), factor) > 1)
          factors[factor].kind = FactorKind::NeedsReplication;
  };
  markDiagonals(operandFactors);
  markDiagonals(resultFactors);
}

SmallVector<AxisChoice> mlir::dt::enumerateAxisChoices(const ShardingRule &rule) {
  SmallVector<AxisChoice> choices = {AxisChoice::replicate()};
  for (auto [i, factor] : llvm::enumerate(rule.factors))
    if (factor.kind != ShardingRule::FactorKind::NeedsReplication)
      choices.push_back(AxisChoice::shard(i));
  for (unsigned i = 0, e = rule.partialRules.size(); i < e; ++i)
    choices.push_back(AxisChoice::partial(i));
  return choices;
}

Placement mlir::dt::placementUnder(const ShardingRule &rule, AxisChoice choice,
                                   bool isResult, unsigned index) {
  bool isAccumulator = !isResult && llvm::is_contained(rule.accumulators, index);
  switch (choice.kind) {
  case AxisChoice::Kind::Replicate:
    return Placement::replicate();
  case AxisChoice::Kind::ShardFactor: {
    const auto &dims =
        isResult ? rule.resultFactors[index] : rule.operandFactors[index];
    for (auto [dim, factor] : llvm::enumerate(dims))
      if (factor == static_cast<int64_t>(choice.index))
        return Placement::shard(dim);
    const ShardingRule::Factor &factor = rule.factors[choice.index];
    if (factor.kind == ShardingRule::FactorKind::Reduction &&
        (isResult || isAccumulator))
      return Placement::partial(factor.reduction);
    return Placement::replicate();
  }
  case AxisChoice::Kind::Partial: {
    const ShardingRule::PartialRule &partial = rule.partialRules[choice.index];
    if (isResult || isAccumulator ||
        llvm::is_contained(partial.operands, index))
      return Placement::partial(partial.kind);
    return Placement::replicate();
  }
  }
  return Placement::replicate();
}

FailureOr<ShardingRule> mlir::dt::getShardingRule(Operation *op) {
  if (auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op))
    return ruleOp.getShardingRule();
  return failure();
}

//===----------------------------------------------------------------------===//
// Linearity
//===----------------------------------------------------------------------===//

/// Sum of states where partial sums add: Linear + Linear stays Linear, but
/// Linear + Constant would add the constant once per rank.
static Linearity additive(Linearity a, Linearity b) {
  if (a == Linearity::Zero)
    return b;
  if (b == Linearity::Zero)
    return a;
  if (a == Linearity::Constant && b == Linearity::Constant)
    return Linearity::Constant;
  if (a == Linearity::Linear && b == Linearity::Linear)
    return Linearity::Linear;
  return Linearity::Invalid;
}

static bool isLinearOrZero(Linearity l) {
  return l == Linearity::Linear || l == Linearity::Zero;
}

static Linearity transferSum(Operation *op, ArrayRef<Linearity> in) {
  if (isa<arith::AddFOp, arith::AddIOp, arith::SubFOp, arith::SubIOp>(op))
    return additive(in[0], in[1]);
  if (isa<arith::MulFOp, arith::MulIOp>(op)) {
    if (in[0] == Linearity::Zero || in[1] == Linearity::Zero)
      return Linearity::Zero;
    if (in[0] == Linearity::Linear && in[1] == Linearity::Linear)
      return Linearity::Invalid;
    return in[0] == Linearity::Linear || in[1] == Linearity::Linear
               ? Linearity::Linear
               : Linearity::Constant;
  }
  if (isa<arith::DivFOp>(op)) {
    if (in[1] != Linearity::Constant)
      return Linearity::Invalid;
    return in[0];
  }
  if (isa<arith::NegFOp, arith::ExtFOp, arith::TruncFOp>(op))
    return in[0];
  if (isa<arith::SelectOp>(op)) {
    if (in[0] != Linearity::Constant)
      return Linearity::Invalid;
    if (isLinearOrZero(in[1]) && isLinearOrZero(in[2]))
      return in[1] == Linearity::Zero && in[2] == Linearity::Zero
                 ? Linearity::Zero
                 : Linearity::Linear;
    return Linearity::Invalid;
  }
  return Linearity::Invalid;
}

/// For max and min: ops that commute with taking the max (min) over ranks.
static Linearity transferExtremum(Operation *op, ArrayRef<Linearity> in,
                                  ReductionKind kind) {
  bool isMax = kind == ReductionKind::Max;
  bool combines =
      isMax ? isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp,
                  arith::MaxUIOp>(op)
            : isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp,
                  arith::MinUIOp>(op);
  // max_r f(x_r) = f(max_r x_r) for f non-decreasing in x; a Constant
  // operand is the same on every rank.
  bool monotone = combines || isa<arith::ExtFOp, arith::TruncFOp, math::ExpOp,
                                  math::TanhOp, arith::AddFOp, arith::AddIOp>(op);
  if (isa<arith::SubFOp, arith::SubIOp>(op))
    monotone = in[1] != Linearity::Linear; // x - c, not c - x
  if (isa<arith::SelectOp>(op))
    monotone = in[0] == Linearity::Constant;
  if (!monotone)
    return Linearity::Invalid;
  // x + y of two maxima is not the max of the sums.
  if (isa<arith::AddFOp, arith::AddIOp>(op) && in[0] == Linearity::Linear &&
      in[1] == Linearity::Linear)
    return Linearity::Invalid;
  return Linearity::Linear;
}

Linearity mlir::dt::transferLinearity(Operation *op, ArrayRef<Linearity> in,
                                      ReductionKind kind) {
  if (llvm::is_contained(in, Linearity::Invalid))
    return Linearity::Invalid;
  if (llvm::none_of(in, [](Linearity l) { return l == Linearity::Linear; })) {
    // Values that do not depend on partial operands stay replicated; a
    // product with zero or a sum of zeros stays zero.
    if (isa<arith::MulFOp, arith::MulIOp>(op) &&
        llvm::is_contained(in, Linearity::Zero))
      return Linearity::Zero;
    if (isa<arith::AddFOp, arith::AddIOp, arith::SubFOp, arith::SubIOp,
            arith::NegFOp>(op) &&
        llvm::all_of(in, [](Linearity l) { return l == Linearity::Zero; }))
      return Linearity::Zero;
    return Linearity::Constant;
  }
  if (kind == ReductionKind::Sum)
    return transferSum(op, in);
  if (kind == ReductionKind::Max || kind == ReductionKind::Min)
    return transferExtremum(op, in, kind);
  return Linearity::Invalid; // P(avg) never flows through ops.
}
