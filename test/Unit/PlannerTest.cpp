//===- PlannerTest.cpp - Redistribution plans on concrete per-rank data ---===//
//
// Plans random redistributions and executes them on concrete per-rank data
// with a reference implementation of what each collective means, then checks
// that every rank ends with exactly its shard of the global tensor under the
// target sharding (uneven shards, several axes on one dim, partial values).
//
//===----------------------------------------------------------------------===//

#include "dt/Sharding/Planner.h"

#include "dt/Sharding/Exchange.h"

#include <gtest/gtest.h>

#include <random>

using dt::Placement;
using dt::PlanStep;
using dt::ReductionKind;

namespace {

/// A dense row-major tensor of doubles.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  static Tensor zeros(std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t e : shape)
      n *= e;
    return {std::move(shape), std::vector<double>(n, 0)};
  }
  int64_t index(const std::vector<int64_t> &at) const {
    int64_t i = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      i = i * shape[d] + at[d];
    return i;
  }
  /// Calls f(index vector) for every element.
  template <typename F>
  void forEach(F f) const {
    if (data.empty())
      return;
    std::vector<int64_t> at(shape.size(), 0);
    while (true) {
      f(at);
      size_t d = shape.size();
      while (d > 0) {
        --d;
        if (++at[d] < shape[d])
          break;
        at[d] = 0;
        if (d == 0)
          return;
      }
      if (shape.empty())
        return;
    }
  }
};

Tensor box(const Tensor &t, const std::vector<int64_t> &offset,
           const std::vector<int64_t> &shape) {
  Tensor out = Tensor::zeros(shape);
  out.forEach([&](const std::vector<int64_t> &at) {
    std::vector<int64_t> src(at);
    for (size_t d = 0; d < at.size(); ++d)
      src[d] += offset[d];
    out.data[out.index(at)] = t.data[t.index(src)];
  });
  return out;
}

Tensor sliceDim(const Tensor &t, int64_t dim, dt::ChunkRange range) {
  std::vector<int64_t> offset(t.shape.size(), 0), shape(t.shape);
  offset[dim] = range.offset;
  shape[dim] = range.size;
  return box(t, offset, shape);
}

Tensor concat(const std::vector<Tensor> &parts, int64_t dim) {
  std::vector<int64_t> shape(parts[0].shape);
  shape[dim] = 0;
  for (const Tensor &p : parts)
    shape[dim] += p.shape[dim];
  Tensor out = Tensor::zeros(shape);
  int64_t base = 0;
  for (const Tensor &p : parts) {
    p.forEach([&](const std::vector<int64_t> &at) {
      std::vector<int64_t> dst(at);
      dst[dim] += base;
      out.data[out.index(dst)] = p.data[p.index(at)];
    });
    base += p.shape[dim];
  }
  return out;
}

double combine(ReductionKind kind, double a, double b) {
  switch (kind) {
  case ReductionKind::Max:
    return std::max(a, b);
  case ReductionKind::Min:
    return std::min(a, b);
  default:
    return a + b;
  }
}

struct Simulation {
  std::vector<int64_t> mesh;
  std::vector<Tensor> local; // per rank
  std::vector<int64_t> globalShape;
  std::vector<Placement> state; // the layout `local` holds

  /// The ranks of `rank`'s group on `axis`, in coordinate order.
  std::vector<int64_t> group(int64_t rank, int64_t axis) const {
    std::vector<int64_t> coords = dt::meshCoords(mesh, rank), members;
    for (int64_t c = 0; c < mesh[axis]; ++c) {
      coords[axis] = c;
      members.push_back(dt::linearRank(mesh, coords));
    }
    return members;
  }

  Tensor reduce(const std::vector<int64_t> &members, ReductionKind kind) const {
    Tensor acc = local[members[0]];
    for (size_t i = 1; i < members.size(); ++i)
      for (size_t e = 0; e < acc.data.size(); ++e)
        acc.data[e] = combine(kind, acc.data[e], local[members[i]].data[e]);
    return acc;
  }

  /// Each rank's target piece, assembled from the parts Exchange.h says it
  /// receives, each read out of the sender's piece.
  Tensor exchanged(int64_t rank, const std::vector<Placement> &to) const {
    std::vector<int64_t> coords = dt::meshCoords(mesh, rank);
    dt::ShardBox wanted = dt::shardBox(globalShape, mesh, to, coords);
    Tensor out = Tensor::zeros(wanted.shape);
    std::vector<bool> written(out.data.size(), false);
    for (const dt::ExchangePart &part :
         dt::exchangeReceives(globalShape, mesh, state, to, coords)) {
      Tensor piece = box(local[part.peer], part.from, part.box.shape);
      piece.forEach([&](const std::vector<int64_t> &i) {
        std::vector<int64_t> dst(i);
        for (size_t d = 0; d < dst.size(); ++d)
          dst[d] += part.to[d];
        int64_t e = out.index(dst);
        EXPECT_FALSE(written[e]) << "rank " << rank << " receives twice";
        written[e] = true;
        out.data[e] = piece.data[piece.index(i)];
      });
    }
    EXPECT_EQ(std::count(written.begin(), written.end(), false), 0)
        << "rank " << rank << " misses part of its piece";
    return out;
  }

  void run(const PlanStep &step) {
    std::vector<Placement> after = dt::placementsAfter(state, step);
    if (step.kind == PlanStep::Kind::Exchange) {
      std::vector<Tensor> next(local.size());
      for (int64_t rank = 0; rank < static_cast<int64_t>(local.size()); ++rank)
        next[rank] = exchanged(rank, step.to);
      local = std::move(next);
      state = std::move(after);
      return;
    }
    state = std::move(after);
    std::vector<Tensor> next(local.size());
    int64_t n = mesh[step.axis];
    for (int64_t rank = 0; rank < static_cast<int64_t>(local.size()); ++rank) {
      std::vector<int64_t> members = group(rank, step.axis);
      int64_t me = dt::meshCoords(mesh, rank)[step.axis];
      const Tensor &mine = local[rank];
      switch (step.kind) {
      case PlanStep::Kind::AllGather: {
        std::vector<Tensor> parts;
        for (int64_t m : members)
          parts.push_back(local[m]);
        next[rank] = concat(parts, step.dim);
        break;
      }
      case PlanStep::Kind::AllReduce:
        next[rank] = reduce(members, step.reduction);
        break;
      case PlanStep::Kind::ReduceScatter: {
        Tensor full = reduce(members, step.reduction);
        next[rank] = sliceDim(full, step.dim,
                              dt::chunkOf(full.shape[step.dim], n, me));
        break;
      }
      case PlanStep::Kind::AllToAll: {
        std::vector<Tensor> received;
        for (int64_t m : members) {
          const Tensor &theirs = local[m];
          received.push_back(sliceDim(
              theirs, step.dim, dt::chunkOf(theirs.shape[step.dim], n, me)));
        }
        next[rank] = concat(received, step.srcDim);
        break;
      }
      case PlanStep::Kind::LocalSlice:
        next[rank] =
            sliceDim(mine, step.dim, dt::chunkOf(mine.shape[step.dim], n, me));
        break;
      case PlanStep::Kind::ToPartial:
        next[rank] = mine;
        if (step.reduction == ReductionKind::Sum && me != 0)
          std::fill(next[rank].data.begin(), next[rank].data.end(), 0.0);
        break;
      case PlanStep::Kind::Exchange:
        break;
      }
    }
    local = std::move(next);
  }
};

/// The ranks that hold partial pieces of the same values as `rank`: those
/// that differ only in partial axes.
std::vector<int64_t> partialGroup(const std::vector<int64_t> &mesh,
                                  const std::vector<Placement> &placements,
                                  int64_t rank) {
  std::vector<int64_t> members;
  std::vector<int64_t> mine = dt::meshCoords(mesh, rank);
  for (int64_t other = 0; other < dt::meshSize(mesh); ++other) {
    std::vector<int64_t> theirs = dt::meshCoords(mesh, other);
    bool same = true;
    for (size_t a = 0; a < mesh.size(); ++a)
      same &= placements[a].isPartial() || theirs[a] == mine[a];
    if (same)
      members.push_back(other);
  }
  return members;
}

bool isLeader(const std::vector<int64_t> &mesh,
              const std::vector<Placement> &placements, int64_t rank) {
  std::vector<int64_t> coords = dt::meshCoords(mesh, rank);
  for (size_t a = 0; a < mesh.size(); ++a)
    if (placements[a].isPartial() && coords[a] != 0)
      return false;
  return true;
}

struct Case {
  dt::PlanProblem problem;
  std::vector<Placement> source, target;
  ReductionKind kind;
};

Case randomCase(std::mt19937 &rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c;
  c.problem.globalShape.resize(pick(1, 3));
  for (int64_t &e : c.problem.globalShape)
    e = pick(0, 7);
  c.problem.meshShape.resize(pick(1, 3));
  for (int64_t &s : c.problem.meshShape)
    s = pick(1, 4);
  c.problem.topology = dt::Topology::defaults(c.problem.meshShape);
  c.kind = std::vector<ReductionKind>{ReductionKind::Sum, ReductionKind::Max,
                                      ReductionKind::Min}[pick(0, 2)];
  int64_t rank = c.problem.globalShape.size();
  auto randomPlacement = [&]() {
    int64_t choice = pick(0, rank + 1);
    if (choice < rank)
      return Placement::shard(choice);
    return choice == rank ? Placement::replicate() : Placement::partial(c.kind);
  };
  for (size_t a = 0; a < c.problem.meshShape.size(); ++a) {
    c.source.push_back(randomPlacement());
    c.target.push_back(randomPlacement());
  }
  return c;
}

/// Runs `plan` on random data laid out as `c.source` and checks the result.
::testing::AssertionResult executesCorrectly(const Case &c,
                                             const std::vector<PlanStep> &steps,
                                             std::mt19937 &rng) {
  const auto &mesh = c.problem.meshShape;
  Tensor global = Tensor::zeros(c.problem.globalShape);
  for (double &v : global.data)
    v = std::uniform_int_distribution<int>(-50, 50)(rng);
  Simulation sim{mesh, {}, c.problem.globalShape, c.source};
  int64_t ranks = dt::meshSize(mesh);
  sim.local.resize(ranks);
  for (int64_t r = 0; r < ranks; ++r) {
    dt::ShardBox b = dt::shardBox(c.problem.globalShape, mesh, c.source,
                                  dt::meshCoords(mesh, r));
    sim.local[r] = box(global, b.offset, b.shape);
  }
  // Split partial values: the leader of each partial group makes the
  // reduction come out right.
  for (int64_t r = 0; r < ranks; ++r) {
    if (isLeader(mesh, c.source, r))
      continue;
    for (double &v : sim.local[r].data) {
      double noise = std::uniform_int_distribution<int>(1, 9)(rng);
      v = c.kind == ReductionKind::Sum   ? noise
          : c.kind == ReductionKind::Max ? v - noise
                                         : v + noise;
    }
  }
  if (c.kind == ReductionKind::Sum)
    for (int64_t r = 0; r < ranks; ++r) {
      if (!isLeader(mesh, c.source, r))
        continue;
      for (int64_t other : partialGroup(mesh, c.source, r))
        if (other != r)
          for (size_t e = 0; e < sim.local[r].data.size(); ++e)
            sim.local[r].data[e] -= sim.local[other].data[e];
    }
  for (const PlanStep &step : steps)
    sim.run(step);
  for (int64_t r = 0; r < ranks; ++r) {
    dt::ShardBox b = dt::shardBox(c.problem.globalShape, mesh, c.target,
                                  dt::meshCoords(mesh, r));
    Tensor expected = box(global, b.offset, b.shape);
    Tensor got = sim.reduce(partialGroup(mesh, c.target, r), c.kind);
    if (got.shape != expected.shape)
      return ::testing::AssertionFailure() << "rank " << r << " has the wrong shape";
    if (got.data != expected.data)
      return ::testing::AssertionFailure() << "rank " << r << " has the wrong values";
  }
  return ::testing::AssertionSuccess();
}

std::string describe(const Case &c, const dt::Plan &plan) {
  auto placements = [](const std::vector<Placement> &ps) {
    std::string s = "[";
    for (size_t i = 0; i < ps.size(); ++i)
      s += (i ? ", " : "") + ps[i].str();
    return s + "]";
  };
  std::string s = "shape";
  for (int64_t e : c.problem.globalShape)
    s += " " + std::to_string(e);
  s += ", mesh";
  for (int64_t e : c.problem.meshShape)
    s += " " + std::to_string(e);
  s += ", " + placements(c.source) + " -> " + placements(c.target) + ":";
  for (const PlanStep &step : plan.steps)
    s += " " + step.str();
  return s;
}

TEST(PlannerTest, RandomPlansComputeTheTargetShards) {
  std::mt19937 rng(424242);
  int checkedBytes = 0, withExchange = 0;
  for (int iteration = 0; iteration < 10000; ++iteration) {
    Case c = randomCase(rng);
    std::optional<dt::Plan> plan =
        dt::planRedistribution(c.problem, c.source, c.target);
    ASSERT_TRUE(plan) << iteration;
    ASSERT_TRUE(executesCorrectly(c, plan->steps, rng))
        << "case " << iteration << ": " << describe(c, *plan);
    withExchange += std::any_of(plan->steps.begin(), plan->steps.end(),
                                [](const PlanStep &step) {
                                  return step.kind == PlanStep::Kind::Exchange;
                                });
    // Where DTensor's per-axis route is a valid route (it ignores the
    // nesting of several axes on one dim, so it is not always), the plan is
    // never slower. With links of equal bandwidth and no latency, time is
    // bytes, and the plan never sends more either. (With the default links
    // the planner may send more bytes over a fast axis to send fewer over a
    // slow one: faster, but more bytes.)
    dt::Plan greedy = dt::greedyPerAxisPlan(c.problem, c.source, c.target);
    if (dt::isValidPlan(c.problem, c.source, c.target, greedy)) {
      std::mt19937 copy = rng;
      ASSERT_TRUE(executesCorrectly(c, greedy.steps, copy)) << describe(c, greedy);
      ++checkedBytes;
      EXPECT_LE(plan->seconds, greedy.seconds * (1 + 1e-9) + 1e-15)
          << describe(c, *plan);
      dt::PlanProblem bandwidthOnly = c.problem;
      bandwidthOnly.topology =
          dt::Topology::uniform(c.problem.meshShape.size(), {0, 1});
      std::optional<dt::Plan> byBytes =
          dt::planRedistribution(bandwidthOnly, c.source, c.target);
      dt::Plan greedyBytes =
          dt::greedyPerAxisPlan(bandwidthOnly, c.source, c.target);
      ASSERT_TRUE(executesCorrectly(c, byBytes->steps, copy))
          << describe(c, *byBytes);
      EXPECT_LE(byBytes->bytesPerRank, greedyBytes.bytesPerRank * (1 + 1e-9) + 1e-9)
          << describe(c, *byBytes) << " vs " << describe(c, greedyBytes);
    }
  }
  EXPECT_GT(checkedBytes, 5000);
  EXPECT_GT(withExchange, 100);
}

TEST(PlannerTest, KnownRoutes) {
  dt::PlanProblem problem;
  problem.globalShape = {16, 16};
  problem.meshShape = {2, 4};
  problem.topology = dt::Topology::defaults(problem.meshShape);
  auto S = [](int64_t d) { return Placement::shard(d); };
  auto R = Placement::replicate();
  auto P = Placement::partial();
  auto route = [&](std::vector<Placement> from, std::vector<Placement> to) {
    std::optional<dt::Plan> plan = dt::planRedistribution(problem, from, to);
    std::string s;
    for (const PlanStep &step : plan->steps)
      s += (s.empty() ? "" : "; ") + step.str();
    return s;
  };
  EXPECT_EQ(route({S(0), R}, {R, R}), "all_gather(axis 0, dim 0)");
  EXPECT_EQ(route({R, P}, {R, R}), "all_reduce(axis 1, sum)");
  EXPECT_EQ(route({R, P}, {R, S(1)}), "reduce_scatter(axis 1, sum, dim 1)");
  EXPECT_EQ(route({R, S(0)}, {R, S(1)}), "all_to_all(axis 1, dim 0 -> 1)");
  EXPECT_EQ(route({R, R}, {S(1), R}), "local_slice(axis 0, dim 1)");
  EXPECT_EQ(route({R, R}, {R, P}), "to_partial(axis 1, sum)");
  // The inner axis of a nested shard gathers first.
  EXPECT_EQ(route({S(0), S(0)}, {R, R}),
            "all_gather(axis 1, dim 0); all_gather(axis 0, dim 0)");
  // P(sum) -> P(max) goes through R.
  EXPECT_EQ(route({P, R}, {Placement::partial(ReductionKind::Max), R}),
            "all_reduce(axis 0, sum); to_partial(axis 0, max)");
}

TEST(PlannerTest, ExchangesMoveOnlyWhatIsMissing) {
  dt::PlanProblem problem;
  problem.globalShape = {1024, 1024};
  problem.meshShape = {2, 4};
  problem.topology = dt::Topology::defaults(problem.meshShape);
  auto S = [](int64_t d) { return Placement::shard(d); };
  auto R = Placement::replicate();
  auto plan = [&](std::vector<Placement> from, std::vector<Placement> to) {
    return *dt::planRedistribution(problem, from, to);
  };
  // Each rank receives exactly the part of its new piece it lacks (the
  // lower bound of docs/Redistribution.md), from the ranks that hold it.
  dt::Plan widen = plan({S(0), S(0)}, {R, S(0)});
  ASSERT_EQ(widen.steps.size(), 1u);
  EXPECT_EQ(widen.steps[0].str(), "exchange(-> [R, S(0)])");
  EXPECT_EQ(widen.bytesPerRank, 1024.0 * 1024);
  // Where it receives from many peers, their latencies may cost more than
  // gathering more bytes from fewer; by bytes alone, the exchange wins.
  dt::PlanProblem bandwidthOnly = problem;
  bandwidthOnly.topology = dt::Topology::uniform(2, {0, 1});
  EXPECT_EQ(dt::planRedistribution(bandwidthOnly, {S(0), S(0)}, {S(1), S(1)})
                ->bytesPerRank,
            458752.0);
  EXPECT_EQ(dt::planRedistribution(bandwidthOnly, {S(1), S(0)}, {S(0), S(1)})
                ->bytesPerRank,
            524288.0);
  // One collective that does the same is kept.
  EXPECT_EQ(plan({R, S(0)}, {R, S(1)}).steps[0].str(),
            "all_to_all(axis 1, dim 0 -> 1)");
  EXPECT_EQ(plan({S(0), S(0)}, {R, R}).numCollectives(), 2u);
  // Without exchanges, the route of one-axis collectives.
  problem.exchange = false;
  EXPECT_EQ(plan({S(0), S(0)}, {R, S(0)}).steps.size(), 3u);
  // The groups: the axes whose pieces move, not those split alike first.
  std::vector<int64_t> mesh = {2, 2, 2};
  EXPECT_EQ(dt::exchangeAxes(mesh, std::vector<Placement>{S(0), S(0), R},
                             std::vector<Placement>{S(0), S(1), R}),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(dt::exchangeAxes(mesh, std::vector<Placement>{S(0), S(0), R},
                             std::vector<Placement>{S(1), S(0), R}),
            (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(dt::canExchange(
      mesh, std::vector<Placement>{Placement::partial(), S(0), R},
      std::vector<Placement>{R, S(1), R}));
}

} // namespace
