//===- Planner.h - Cheapest route between two shardings ---------*- C++ -*-===//
//
// Plans a redistribution as a shortest path over placement states: each step
// changes one mesh axis with one collective (or a local slice / local zeroing)
// and costs what the alpha-beta model says for the tensor as that axis's
// group sees it at that point; or, from any state with the target's partial
// axes, one exchange (Exchange.h) goes straight to the target (or to the
// target with its partial axes replicated), priced part by part. Steps keep the
// nesting invariant of several axes on one dim (an axis can only gather,
// scatter or move the innermost piece of a dim), so every intermediate state is
// a valid layout, uneven shards included.
//
// Plain C++17: no LLVM/MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef DT_SHARDING_PLANNER_H
#define DT_SHARDING_PLANNER_H

#include "dt/Sharding/CostModel.h"
#include "dt/Sharding/ShardLayout.h"

#include <optional>
#include <string>
#include <vector>

namespace dt {

/// One step of a plan, on mesh axis `axis`.
struct PlanStep {
  enum class Kind : uint8_t {
    AllGather,     ///< S(dim) -> R
    AllReduce,     ///< P(k) -> R
    ReduceScatter, ///< P(k) -> S(dim)
    AllToAll,      ///< S(srcDim) -> S(dim)
    LocalSlice,    ///< R -> S(dim), no communication
    ToPartial,     ///< R -> P(k), no communication (zeros off the group's
                   ///< first rank for sum; the value itself for max/min)
    Exchange,      ///< Any layout -> `to` with the same partial axes, by
                   ///< point-to-point copies (Exchange.h); `axis` unused
  };
  Kind kind;
  int64_t axis = 0;
  int64_t dim = 0;    ///< The dim gathered, scattered, sliced, or moved to.
  int64_t srcDim = 0; ///< AllToAll: the dim moved from.
  ReductionKind reduction = ReductionKind::Sum;
  std::vector<Placement> to; ///< Exchange: the placements it ends in.
  double seconds = 0;      ///< Estimated time of this step.
  double bytesPerRank = 0; ///< Bytes each rank sends.

  std::string str() const;
};

struct Plan {
  std::vector<PlanStep> steps;
  double seconds = 0;
  double bytesPerRank = 0;
  size_t numCollectives() const;
};

/// A tensor on a mesh, as the planner needs to know it.
struct PlanProblem {
  std::vector<int64_t> globalShape;
  int64_t elementBytes = 4;
  std::vector<int64_t> meshShape;
  Topology topology;
  /// Whether plans may use exchanges (a runtime without them: false).
  bool exchange = true;
};

/// The cheapest plan from `source` to `target` (one placement per mesh axis),
/// or nullopt when there is none (a partial target of another kind than a
/// partial source is reached through R, so every pair has a plan).
std::optional<Plan> planRedistribution(const PlanProblem &problem,
                                       const std::vector<Placement> &source,
                                       const std::vector<Placement> &target);

/// The plan DTensor takes: each axis that differs, in mesh order, with the
/// one-step collective of DESIGN.md's table (through R where there is none),
/// ignoring nesting constraints. The reference the planner must not exceed in
/// bytes, and the baseline of the comparison table in docs/.
Plan greedyPerAxisPlan(const PlanProblem &problem,
                       const std::vector<Placement> &source,
                       const std::vector<Placement> &target);

/// The placements after `step`.
std::vector<Placement> placementsAfter(const std::vector<Placement> &before,
                                       const PlanStep &step);

/// True when every step of `plan` is one the planner allows at that point
/// (nesting of several axes on one dim respected) and it ends at `target`.
bool isValidPlan(const PlanProblem &problem, const std::vector<Placement> &source,
                 const std::vector<Placement> &target, const Plan &plan);

} // namespace dt

#endif // DT_SHARDING_PLANNER_H
