//===- ShardingRule.h - Factor-based sharding rules of ops ------*- C++ -*-===//
//
// A sharding rule says how an op can be split across a mesh axis. Each dim of
// each tensor operand and result maps to a *factor* (a loop of the op's
// iteration space); a factor is parallel (every tensor that has it can be
// sharded along it), a reduction (sharding it leaves each rank with a partial
// result), or needs replication. Partial rules say which operands may hold
// partial values that pass through to the results, namely where the op is
// linear in them for that reduction kind.
//
// A strategy picks one choice per mesh axis: replicate, shard one factor, or
// apply one partial rule. Axes choose independently: the placements on one
// axis never constrain another, and a factor sharded by several axes shards
// its dims in mesh-axis order.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_IR_SHARDINGRULE_H
#define DT_DIALECT_DT_IR_SHARDINGRULE_H

#include "dt/Sharding/Placement.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::dt {

/// A dim with no factor: it cannot be sharded.
inline constexpr int64_t kNoFactor = -1;

struct ShardingRule {
  enum class FactorKind : uint8_t { Parallel, Reduction, NeedsReplication };

  struct Factor {
    FactorKind kind = FactorKind::Parallel;
    /// For reductions: how the partial results combine.
    ::dt::ReductionKind reduction = ::dt::ReductionKind::Sum;
    /// When set, the factor may be sharded only into a number of pieces that
    /// divides this extent (reshapes keep torch.chunk layouts only then).
    std::optional<int64_t> mustDivide;
  };

  /// Operands that may be partial (P(kind)) together, every other tensor
  /// operand replicated, giving partial results of the same kind.
  struct PartialRule {
    ::dt::ReductionKind kind;
    llvm::SmallVector<unsigned, 2> operands;
  };

  llvm::SmallVector<Factor> factors;
  /// factor of each dim of each operand and result; empty for non-tensors.
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>> operandFactors;
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>> resultFactors;
  /// Operands that are accumulated into (the inits of reductions): when a
  /// reduction factor is sharded they hold partial values too.
  llvm::SmallVector<unsigned, 1> accumulators;
  llvm::SmallVector<PartialRule, 2> partialRules;
  /// Tensors the op's body reads from above with tensor.extract (a gather's
  /// table), in order of first use. They are the rule's operands after the
  /// op's own: operandFactors, operandIsTensor and partial rules number them
  /// from op->getNumOperands() on.
  llvm::SmallVector<Value, 1> captured;

  /// Operand `i` of the rule: the op's own operand or a captured tensor.
  Value operand(Operation *op, unsigned i) const {
    unsigned own = op->getNumOperands();
    return i < own ? op->getOperand(i) : captured[i - own];
  }
  /// The op's operands, then the captured tensors.
  llvm::SmallVector<Value> operands(Operation *op) const {
    llvm::SmallVector<Value> all(op->getOperands());
    all.append(captured.begin(), captured.end());
    return all;
  }

  bool isTensorOperand(unsigned i) const {
    return i < operandIsTensor.size() && operandIsTensor[i];
  }
  bool isTensorResult(unsigned i) const {
    return i < resultIsTensor.size() && resultIsTensor[i];
  }
  llvm::SmallVector<bool> operandIsTensor, resultIsTensor;

  /// Marks factors that cannot be sharded: those mapped to two dims of one
  /// tensor (a diagonal), which no placement list can express.
  void finalize();
};

/// What one mesh axis does under a strategy.
struct AxisChoice {
  enum class Kind : uint8_t { Replicate, ShardFactor, Partial };
  Kind kind = Kind::Replicate;
  /// The factor (ShardFactor) or the index of the partial rule (Partial).
  unsigned index = 0;

  static AxisChoice replicate() { return {}; }
  static AxisChoice shard(unsigned factor) { return {Kind::ShardFactor, factor}; }
  static AxisChoice partial(unsigned rule) { return {Kind::Partial, rule}; }
  friend bool operator==(AxisChoice a, AxisChoice b) {
    return a.kind == b.kind && a.index == b.index;
  }
};

/// Every choice a mesh axis can make under `rule`, in a fixed order
/// (replicate, factors, partial rules).
llvm::SmallVector<AxisChoice> enumerateAxisChoices(const ShardingRule &rule);

/// The placement of operand (`isResult` false) or result `index` under
/// `choice`. Only meaningful for tensors.
::dt::Placement placementUnder(const ShardingRule &rule, AxisChoice choice,
                               bool isResult, unsigned index);

/// The sharding rule of `op`, from the ShardingRuleOpInterface when the op
/// implements it; failure for ops dt does not know how to shard.
FailureOr<ShardingRule> getShardingRule(Operation *op);

//===----------------------------------------------------------------------===//
// Linearity
//===----------------------------------------------------------------------===//

/// How a value depends on the operands assumed partial, for one reduction
/// kind. Partial values may only flow through ops that keep them `Linear`.
enum class Linearity : uint8_t {
  Zero,     ///< A constant zero: a valid partial sum on every rank.
  Constant, ///< Does not depend on the partial operands.
  Linear,   ///< Commutes with the reduction.
  Invalid,  ///< Would compute a wrong result on partial values.
};

/// The linearity of the result of `op` (an arith/math op on scalars or on
/// tensors) given the linearity of its operands, for reduction `kind`.
Linearity transferLinearity(Operation *op, llvm::ArrayRef<Linearity> operands,
                            ::dt::ReductionKind kind);

} // namespace mlir::dt

#endif // DT_DIALECT_DT_IR_SHARDINGRULE_H
