//===- Planner.cpp - Cheapest route between two shardings -----------------===//

#include "dt/Sharding/Planner.h"

#include "dt/Sharding/Exchange.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

namespace dt {

/// Steps cost at least this, so that among equally cheap routes the one with
/// fewer steps wins.
static constexpr double kStepSeconds = 1e-12;

std::string PlanStep::str() const {
  std::string axisText = "axis " + std::to_string(axis);
  switch (kind) {
  case Kind::AllGather:
    return "all_gather(" + axisText + ", dim " + std::to_string(dim) + ")";
  case Kind::AllReduce:
    return "all_reduce(" + axisText + ", " +
           std::string(reductionKindName(reduction)) + ")";
  case Kind::ReduceScatter:
    return "reduce_scatter(" + axisText + ", " +
           std::string(reductionKindName(reduction)) + ", dim " +
           std::to_string(dim) + ")";
  case Kind::AllToAll:
    return "all_to_all(" + axisText + ", dim " + std::to_string(srcDim) +
           " -> " + std::to_string(dim) + ")";
  case Kind::LocalSlice:
    return "local_slice(" + axisText + ", dim " + std::to_string(dim) + ")";
  case Kind::ToPartial:
    return "to_partial(" + axisText + ", " +
           std::string(reductionKindName(reduction)) + ")";
  case Kind::Exchange:
    return "exchange(-> [" + joinPlacements(to) + "])";
  }
  return "";
}

size_t Plan::numCollectives() const {
  return std::count_if(steps.begin(), steps.end(), [](const PlanStep &s) {
    return s.kind != PlanStep::Kind::LocalSlice &&
           s.kind != PlanStep::Kind::ToPartial;
  });
}

namespace {
using State = std::vector<Placement>;

/// Prices steps for one problem.
struct StepPricer {
  const PlanProblem &problem;

  /// Bytes of the piece the group of `axis` holds together in `state`.
  double groupBytes(const State &state, int64_t axis) const {
    State withoutAxis = state;
    withoutAxis[axis] = Placement::replicate();
    double elements = 1;
    for (int64_t extent :
         maxLocalShape(problem.globalShape, problem.meshShape, withoutAxis))
      elements *= static_cast<double>(extent);
    return elements * static_cast<double>(problem.elementBytes);
  }

  void price(PlanStep &step, const State &before) const {
    int64_t n = problem.meshShape[step.axis];
    const AxisLink &link = problem.topology.link(step.axis);
    double bytes = groupBytes(before, step.axis);
    std::optional<CollectiveKind> kind;
    switch (step.kind) {
    case PlanStep::Kind::AllGather:
      kind = CollectiveKind::AllGather;
      break;
    case PlanStep::Kind::AllReduce:
      kind = CollectiveKind::AllReduce;
      break;
    case PlanStep::Kind::ReduceScatter:
      kind = CollectiveKind::ReduceScatter;
      break;
    case PlanStep::Kind::AllToAll:
      kind = CollectiveKind::AllToAll;
      bytes /= static_cast<double>(n);
      break;
    case PlanStep::Kind::LocalSlice:
    case PlanStep::Kind::ToPartial:
    case PlanStep::Kind::Exchange: // Priced where it is made.
      break;
    }
    step.bytesPerRank = kind ? ringBytesPerRank(*kind, n, bytes) : 0;
    step.seconds =
        (kind ? ringSeconds(*kind, n, bytes, link) : 0) + kStepSeconds;
  }
};

} // namespace

/// True when no mesh axis after `axis` shards `dim`: `axis` holds (or would
/// hold) the innermost split of it.
static bool isInnermost(const State &state, int64_t axis, int64_t dim) {
  for (size_t b = static_cast<size_t>(axis) + 1; b < state.size(); ++b)
    if (state[b].isShard(dim))
      return false;
  return true;
}

std::vector<Placement> placementsAfter(const std::vector<Placement> &state,
                                       const PlanStep &step) {
  State next = state;
  switch (step.kind) {
  case PlanStep::Kind::AllGather:
  case PlanStep::Kind::AllReduce:
    next[step.axis] = Placement::replicate();
    break;
  case PlanStep::Kind::ReduceScatter:
  case PlanStep::Kind::AllToAll:
  case PlanStep::Kind::LocalSlice:
    next[step.axis] = Placement::shard(step.dim);
    break;
  case PlanStep::Kind::ToPartial:
    next[step.axis] = Placement::partial(step.reduction);
    break;
  case PlanStep::Kind::Exchange:
    next = step.to;
    break;
  }
  return next;
}

namespace {

/// Every valid step out of `state`. `partialKinds` are the kinds a step may
/// create (those of the target). An axis of size 1 splits nothing, so its
/// placement changes freely, without the nesting constraints.
std::vector<PlanStep> stepsFrom(const State &state, int64_t rank,
                                const std::vector<int64_t> &meshShape,
                                const std::vector<ReductionKind> &partialKinds) {
  std::vector<PlanStep> steps;
  for (int64_t axis = 0; axis < static_cast<int64_t>(state.size()); ++axis) {
    const Placement &p = state[axis];
    bool trivial = meshShape[axis] == 1;
    auto isInnermost = [&](const State &s, int64_t a, int64_t dim) {
      return trivial || dt::isInnermost(s, a, dim);
    };
    auto add = [&](PlanStep::Kind kind, int64_t dim, int64_t srcDim,
                   ReductionKind reduction) {
      PlanStep step{kind, axis, dim, srcDim, reduction};
      steps.push_back(step);
    };
    if (p.isShard()) {
      if (!isInnermost(state, axis, p.dim()))
        continue;
      add(PlanStep::Kind::AllGather, p.dim(), 0, ReductionKind::Sum);
      for (int64_t d = 0; d < rank; ++d)
        if (d != p.dim() && isInnermost(state, axis, d))
          add(PlanStep::Kind::AllToAll, d, p.dim(), ReductionKind::Sum);
    } else if (p.isPartial()) {
      add(PlanStep::Kind::AllReduce, 0, 0, p.reduction());
      for (int64_t d = 0; d < rank; ++d)
        if (isInnermost(state, axis, d))
          add(PlanStep::Kind::ReduceScatter, d, 0, p.reduction());
    } else {
      for (int64_t d = 0; d < rank; ++d)
        if (isInnermost(state, axis, d))
          add(PlanStep::Kind::LocalSlice, d, 0, ReductionKind::Sum);
      for (ReductionKind k : partialKinds)
        add(PlanStep::Kind::ToPartial, 0, 0, k);
    }
  }
  return steps;
}

/// The exchanges out of `state`, priced: to `target`, and to `target` with
/// its partial axes replicated (a to_partial follows), where the exchange
/// applies over more than one axis, the group is small enough to price,
/// and some rank receives from another. An exchange costs one step more than a
/// collective, so it never wins a tie with one.
std::vector<PlanStep> exchangesFrom(const PlanProblem &problem,
                                    const State &state, const State &target) {
  std::vector<PlanStep> steps;
  if (!problem.exchange)
    return steps;
  State replicated = target;
  for (Placement &p : replicated)
    if (p.isPartial())
      p = Placement::replicate();
  for (const State &to : {target, replicated}) {
    // Within one axis's groups, its collectives move just the pieces.
    if (to == state || !canExchange(problem.meshShape, state, to) ||
        exchangeAxes(problem.meshShape, state, to).size() < 2 ||
        (!steps.empty() && steps.back().to == to))
      continue;
    std::optional<ExchangeCost> cost =
        exchangeCost(problem.globalShape, problem.elementBytes,
                     problem.meshShape, problem.topology, state, to);
    if (!cost || cost->peers == 0)
      continue; // Too large to price, or local slices do it.
    PlanStep step{PlanStep::Kind::Exchange};
    step.to = to;
    step.seconds = cost->seconds + 2 * kStepSeconds;
    step.bytesPerRank = cost->bytesPerRank;
    steps.push_back(std::move(step));
  }
  return steps;
}

/// A dense key of a state: one digit per axis.
uint64_t keyOf(const State &state, int64_t rank) {
  uint64_t key = 0;
  uint64_t base = static_cast<uint64_t>(rank) + 5;
  for (const Placement &p : state) {
    uint64_t digit = p.isReplicate() ? 0
                     : p.isShard()   ? 1 + static_cast<uint64_t>(p.dim())
                                     : 1 + rank + static_cast<uint64_t>(p.reduction());
    key = key * base + digit;
  }
  return key;
}
} // namespace

std::optional<Plan> planRedistribution(const PlanProblem &problem,
                                       const State &source,
                                       const State &target) {
  int64_t rank = static_cast<int64_t>(problem.globalShape.size());
  std::vector<ReductionKind> partialKinds;
  for (const Placement &p : target)
    if (p.isPartial() &&
        std::find(partialKinds.begin(), partialKinds.end(), p.reduction()) ==
            partialKinds.end())
      partialKinds.push_back(p.reduction());

  StepPricer pricer{problem};
  struct Visit {
    double seconds;
    State state;
    std::optional<uint64_t> parent;
    PlanStep step;
  };
  std::unordered_map<uint64_t, Visit> best;
  using Entry = std::pair<double, uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  std::unordered_map<uint64_t, bool> done;

  uint64_t start = keyOf(source, rank), goal = keyOf(target, rank);
  best[start] = {0, source, std::nullopt, {}};
  queue.push({0, start});
  while (!queue.empty()) {
    auto [seconds, key] = queue.top();
    queue.pop();
    if (done[key])
      continue;
    done[key] = true;
    if (key == goal)
      break;
    State state = best[key].state;
    std::vector<PlanStep> steps =
        stepsFrom(state, rank, problem.meshShape, partialKinds);
    for (PlanStep &step : steps)
      pricer.price(step, state);
    for (PlanStep &exchange : exchangesFrom(problem, state, target))
      steps.push_back(std::move(exchange));
    for (const PlanStep &step : steps) {
      State next = placementsAfter(state, step);
      uint64_t nextKey = keyOf(next, rank);
      double total = seconds + step.seconds;
      auto it = best.find(nextKey);
      if (it != best.end() && it->second.seconds <= total)
        continue;
      best[nextKey] = {total, std::move(next), key, step};
      queue.push({total, nextKey});
    }
  }
  if (!done[goal])
    return std::nullopt;
  Plan plan;
  for (uint64_t key = goal; best[key].parent; key = *best[key].parent)
    plan.steps.push_back(best[key].step);
  std::reverse(plan.steps.begin(), plan.steps.end());
  for (const PlanStep &step : plan.steps) {
    plan.seconds += step.seconds;
    plan.bytesPerRank += step.bytesPerRank;
  }
  return plan;
}

Plan greedyPerAxisPlan(const PlanProblem &problem, const State &source,
                       const State &target) {
  StepPricer pricer{problem};
  Plan plan;
  State state = source;
  auto take = [&](PlanStep step) {
    pricer.price(step, state);
    state = placementsAfter(state, step);
    plan.seconds += step.seconds;
    plan.bytesPerRank += step.bytesPerRank;
    plan.steps.push_back(step);
  };
  for (int64_t axis = 0; axis < static_cast<int64_t>(source.size()); ++axis) {
    Placement from = state[axis], to = target[axis];
    if (from == to)
      continue;
    using K = PlanStep::Kind;
    if (from.isShard() && to.isShard()) {
      take({K::AllToAll, axis, to.dim(), from.dim()});
      continue;
    }
    if (from.isPartial() && to.isShard()) {
      take({K::ReduceScatter, axis, to.dim(), 0, from.reduction()});
      continue;
    }
    if (from.isShard())
      take({K::AllGather, axis, from.dim()});
    else if (from.isPartial())
      take({K::AllReduce, axis, 0, 0, from.reduction()});
    if (to.isShard())
      take({K::LocalSlice, axis, to.dim()});
    else if (to.isPartial())
      take({K::ToPartial, axis, 0, 0, to.reduction()});
  }
  return plan;
}

} // namespace dt

namespace dt {
bool isValidPlan(const PlanProblem &problem, const std::vector<Placement> &source,
                 const std::vector<Placement> &target, const Plan &plan) {
  int64_t rank = static_cast<int64_t>(problem.globalShape.size());
  std::vector<ReductionKind> kinds = {ReductionKind::Sum, ReductionKind::Avg,
                                      ReductionKind::Max, ReductionKind::Min};
  State state = source;
  for (const PlanStep &step : plan.steps) {
    if (step.kind == PlanStep::Kind::Exchange) {
      if (!canExchange(problem.meshShape, state, step.to))
        return false;
      state = step.to;
      continue;
    }
    std::vector<PlanStep> legal =
        stepsFrom(state, rank, problem.meshShape, kinds);
    bool found = std::any_of(legal.begin(), legal.end(), [&](const PlanStep &s) {
      return s.kind == step.kind && s.axis == step.axis && s.dim == step.dim &&
             s.srcDim == step.srcDim &&
             (s.reduction == step.reduction ||
              (s.kind != PlanStep::Kind::AllReduce &&
               s.kind != PlanStep::Kind::ReduceScatter &&
               s.kind != PlanStep::Kind::ToPartial));
    });
    if (!found)
      return false;
    state = placementsAfter(state, step);
  }
  return state == target;
}
} // namespace dt
