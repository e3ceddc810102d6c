//===- Strategy.h - Choosing an op's sharding strategy ----------*- C++ -*-===//
//
// The decision both dt-propagate and dt-insert-redistribute make for an op:
// per mesh axis, the choice of its sharding rule whose redistributions cost
// least, given the current shardings of its operands, the shardings its
// results must have, and what its users need of its results.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_TRANSFORMS_STRATEGY_H
#define DT_DIALECT_DT_TRANSFORMS_STRATEGY_H

#include "dt/Dialect/DT/IR/ShardingRule.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>
#include <optional>
#include <vector>

namespace mlir::dt {

/// Totals closer than this to the cheapest (the 0.1 us explanations print)
/// are a tie, which the wire time alone breaks, with its preferences for
/// moving nothing and for moving results. A few picoseconds of compute saved
/// by a split must not outvote those: they stand for the collectives the
/// choice leaves to later ops, which the greedy choice cannot see. The plan
/// search keeps a pin only when it saves more than this.
inline constexpr double kTieSeconds = 1e-7;

/// What is known around an op; null entries are free.
struct StrategyContext {
  SmallVector<ShardingAttr> operands;
  SmallVector<ShardingAttr> fixedResults;
  SmallVector<SmallVector<ShardingAttr, 1>> resultRequests;
  /// Per operand, the shardings other decided users in the same block need
  /// of the same value: those redistributions happen anyway, and an op that
  /// needs one of them shares it.
  SmallVector<SmallVector<ShardingAttr, 1>> sharedMoves;
  /// The partial value, if any, whose all_reduce one on mesh axis `axis`
  /// of `value` out of `partial`, made for `user` (null: before its first
  /// reader), would run in one call with (dt-combine-collectives combines
  /// them): then it adds its bytes but no latency of its own. Unset: none.
  std::function<Value(Value value, Operation *user, unsigned axis,
                      ::dt::Placement partial)>
      reductionPartner;
  /// One step of look-ahead, for ties: what the users of result `result`
  /// that have not decided yet would pay, on mesh axis `axis`, for reading
  /// it as `produced`; nullopt when no such user could say. Choices within
  /// 0.1 us of the cheapest are compared again with whatever part of it
  /// exceeds the guess already charged (that a partial or new shard is
  /// gathered), so a tie goes to the choice that spares the next op a
  /// collective. Unset: ties are broken without it.
  std::function<std::optional<double>(unsigned result, unsigned axis,
                                      ::dt::Placement produced)>
      laterCost;
  /// The same look-ahead on the operand side: what the other users of
  /// operand `operand` that have not decided would save on mesh axis `axis`
  /// if this op moved it to `moved` there (a collective they would then
  /// share instead of paying their own). In a tie of sure costs (no tied
  /// choice makes a partial result or counts on the guess), a choice that
  /// makes such a move is credited with it, so one gather serves every
  /// reader. Unset: ties are broken without it.
  std::function<double(unsigned operand, unsigned axis, ::dt::Placement moved)>
      sharedGain;
};

/// How one mesh axis chose, for explanations: every choice of the rule with
/// its modelled cost in seconds (the collectives it causes and the op's own
/// compute on each rank), or why it was ruled out.
struct AxisDecision {
  struct Considered {
    AxisChoice choice;
    double seconds = 0;
    /// The part of `seconds` that is the op's own compute on each rank (for
    /// contractions; zero for other ops).
    double computeSeconds = 0;
    /// Whether it takes an operand in a sharding another user needs anyway
    /// (that move is shared, so it costs this op nothing).
    bool sharesMove = false;
    /// When an all_reduce it causes runs in one call with another the plan
    /// has (so it costs its bytes, not its latency): the value the other
    /// reduces.
    Value joinedReductionOf;
    /// Empty when the choice was possible.
    std::string ruledOut;
    /// For a choice in a tie that the look-ahead compared: what the users
    /// not decided yet would pay next (StrategyContext::laterCost) beyond
    /// the guess already charged.
    std::optional<double> laterSeconds;
    /// For a choice in a tie that the look-ahead compared: what its operand
    /// moves would spare the operands' other users (StrategyContext::
    /// sharedGain).
    double sharedGainSeconds = 0;
  };
  unsigned axis = 0;
  AxisChoice chosen;
  std::vector<Considered> considered;
  /// The operands (rule index, runs) that move once before the loops around
  /// the op, for that many of its runs: the costs above are per run, so
  /// each run pays its share of those moves.
  SmallVector<std::pair<unsigned, int64_t>> amortized;
  /// The results (index, runs) a loop accumulates: the look-ahead charges
  /// each run its share of the one move after the loop.
  SmallVector<std::pair<unsigned, int64_t>> accumulated;
  /// Whether the look-ahead broke a tie another way than the time on the
  /// wire alone would have.
  bool brokenByLaterCost = false;
};

/// The cheapest strategy, one choice per mesh axis. Ties go to the choice
/// that changes nothing, then to the first in enumeration order. Fails (with
/// a diagnostic at `op`) when no choice gives a fixed result's placement.
/// With `explanation`, records how each axis chose.
FailureOr<SmallVector<AxisChoice>>
chooseStrategy(Operation *op, const ShardingRule &rule, const MeshInfo &mesh,
               const StrategyContext &known,
               SmallVectorImpl<AxisDecision> *explanation = nullptr);

/// What `choice` makes of the op's tensors, as `(R, S(1), S(1)) -> S(1)`:
/// the placement of each tensor operand, then of each tensor result.
std::string describeChoice(const ShardingRule &rule, AxisChoice choice);

/// The sharding of operand (`isResult` false) or result `index` under
/// `strategy`, on the mesh `meshRef`.
ShardingAttr shardingUnder(const ShardingRule &rule,
                           ArrayRef<AxisChoice> strategy, bool isResult,
                           unsigned index, FlatSymbolRefAttr meshRef);

/// The shardings an op's tensors have now, as a context whose results are
/// fixed (null entries for non-tensors).
StrategyContext currentShardings(Operation *op, const ShardingRule &rule);

/// True when every tensor operand and result of `op`, and every tensor its
/// regions use from above (a gather's table), is replicated on every mesh
/// axis: any op computes its single-device result that way, so no rule is
/// needed to prove it.
bool isFullyReplicated(Operation *op);

/// Why an op's current shardings are no strategy of its rule.
struct StrategyMismatch {
  unsigned axis;
  /// Set when the placements match a choice, but that choice shards a
  /// reshaped factor into pieces that do not divide its extent.
  std::optional<int64_t> indivisibleExtent;
  int64_t pieces = 1;
};

/// Checks that `known.operands` and `known.fixedResults` are exactly what one
/// choice per mesh axis gives; the first axis where they are not otherwise.
/// With `strategy`, fills in the choice that matched on each axis.
std::optional<StrategyMismatch>
findMismatch(const ShardingRule &rule, ArrayRef<int64_t> meshShape,
             const StrategyContext &known,
             SmallVectorImpl<AxisChoice> *strategy = nullptr);

/// How many runs of `op` share one move of its operand `value`: the move
/// goes before the loops around `op` that `value` comes from outside of
/// (redistributeOperand), so it is the product of their static trip counts
/// (a loop whose trip count is not static counts once).
int64_t runsPerMove(Value value, Operation *op);

/// Where a redistribution of `value` for `user` goes: before the user, or
/// before the outermost loop or linalg op around it that `value` comes from
/// outside of (the value is the same at every iteration and for every
/// element, so it moves once).
Operation *redistributionPoint(Value value, Operation *user);

/// Whether iter arg `i` of `loop` is an accumulator: the body yields the
/// op that adds to it (an add: arith, linalg.add or a linalg.generic adding
/// elementwise; or a linalg op reducing into it as its init), and uses it
/// nowhere else. Such a carry can hold a partial value
/// through the loop, whatever its init holds, and be reduced once after it.
bool isAccumulator(scf::ForOp loop, unsigned i);

/// How many runs of the scf.for around `value` share one move of it that
/// comes later: the loop's trip count when the value is an accumulator's
/// update, or what an add updating one adds (it leaves the loop once, after
/// the last run); 1 otherwise.
int64_t runsPerLaterMove(Value value);

/// Inserts `dt.redistribute` of `operand` to `sharding` before its owner (or
/// before the outermost loop or linalg op around the owner that the value
/// comes from outside of), unless it already has that sharding or an earlier
/// redistribution of the same value to the same sharding in the same block
/// can serve.
void redistributeOperand(OpOperand &operand, ShardingAttr sharding);

/// Moves operand `i` of `op`'s rule to `sharding` with redistributeOperand:
/// an operand of the op, or every read of a tensor its body reads from above
/// (one move, before the op, that all the reads share).
void redistributeRuleOperand(Operation *op, const ShardingRule &rule,
                             unsigned i, ShardingAttr sharding);

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_STRATEGY_H
