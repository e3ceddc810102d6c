//===- LowerRedistribute.cpp - dt-lower-redistribute ----------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"
#include "dt/Sharding/Exchange.h"
#include "dt/Sharding/Planner.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"

#include "llvm/ADT/MapVector.h"

#include <cmath>

namespace mlir::dt {
#define GEN_PASS_DEF_LOWERREDISTRIBUTEPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;
using ::dt::PlanStep;

/// The sharding after `step`.
static ShardingAttr afterStep(ShardingAttr before, const PlanStep &step) {
  std::vector<Placement> after = ::dt::placementsAfter(
      std::vector<Placement>(before.getPlacements().begin(),
                             before.getPlacements().end()),
      step);
  return ShardingAttr::get(before.getContext(), before.getMesh(), after);
}

/// Emits the collective of `step` on `value`.
static Value emitStep(OpBuilder &b, Location loc, Value value,
                      const PlanStep &step, const MeshInfo &mesh,
                      FlatSymbolRefAttr meshRef) {
  auto type = cast<RankedTensorType>(value.getType());
  RankedTensorType resultType =
      withSharding(type, afterStep(getShardingEncoding(type), step));
  ArrayAttr axes = b.getStrArrayAttr({mesh.axisNames[step.axis]});
  auto reduction = ReductionKindAttr::get(b.getContext(), step.reduction);
  switch (step.kind) {
  case PlanStep::Kind::AllGather:
    return AllGatherOp::create(b, loc, resultType, value, meshRef, axes,
                               b.getI64IntegerAttr(step.dim),
                               /*extent=*/IntegerAttr(),
                               /*outer_axes=*/ArrayAttr());
  case PlanStep::Kind::AllReduce:
    return AllReduceOp::create(b, loc, resultType, value, meshRef, axes,
                               reduction);
  case PlanStep::Kind::ReduceScatter:
    return ReduceScatterOp::create(b, loc, resultType, value, meshRef, axes,
                                   reduction, b.getI64IntegerAttr(step.dim),
                                   /*extent=*/IntegerAttr(),
                                   /*outer_axes=*/ArrayAttr());
  case PlanStep::Kind::AllToAll:
    return AllToAllOp::create(b, loc, resultType, value, meshRef, axes,
                              b.getI64IntegerAttr(step.dim),
                              b.getI64IntegerAttr(step.srcDim),
                              /*extent=*/IntegerAttr(),
                              /*outer_axes=*/ArrayAttr(),
                              /*split_extent=*/IntegerAttr(),
                              /*split_outer_axes=*/ArrayAttr());
  case PlanStep::Kind::LocalSlice:
    return LocalSliceOp::create(b, loc, resultType, value, meshRef, axes,
                                b.getI64IntegerAttr(step.dim),
                                /*extent=*/IntegerAttr(),
                                /*outer_axes=*/ArrayAttr());
  case PlanStep::Kind::ToPartial:
    return ToPartialOp::create(b, loc, resultType, value, meshRef, axes,
                               reduction);
  case PlanStep::Kind::Exchange: {
    ShardingAttr source = getShardingEncoding(type);
    SmallVector<StringRef> names;
    for (int64_t axis :
         ::dt::exchangeAxes(mesh.shape, source.getPlacements(), step.to))
      names.push_back(mesh.axisNames[axis]);
    return ExchangeOp::create(b, loc, resultType, value, meshRef,
                              b.getStrArrayAttr(names), source,
                              getShardingEncoding(resultType),
                              b.getDenseI64ArrayAttr(type.getShape()));
  }
  }
  return value;
}

/// `reduce(a) + reduce(b)` is `reduce(a + b)` for partial sums: one
/// collective instead of two. Applies to `arith.addf`/`arith.subf` of two
/// single-use redistributions of equally typed P(sum) values to one sharding.
static bool mergeSummedReductions(Operation *op) {
  if (!isa<arith::AddFOp, arith::SubFOp>(op))
    return false;
  auto lhs = op->getOperand(0).getDefiningOp<RedistributeOp>();
  auto rhs = op->getOperand(1).getDefiningOp<RedistributeOp>();
  if (!lhs || !rhs || lhs == rhs || !lhs->hasOneUse() || !rhs->hasOneUse() ||
      lhs.getInput().getType() != rhs.getInput().getType() ||
      lhs.getType() != rhs.getType())
    return false;
  ShardingAttr source = lhs.getSourceSharding();
  ShardingAttr target = lhs.getTargetSharding();
  // Only sums are linear here, and only axes that reduce change.
  for (auto [from, to] : llvm::zip(source.getPlacements(), target.getPlacements()))
    if (from != to && !(from.isPartial() &&
                        from.reduction() == ::dt::ReductionKind::Sum))
      return false;
  OpBuilder builder(op);
  Operation *combined = builder.clone(*op);
  combined->setOperands({lhs.getInput(), rhs.getInput()});
  combined->getResult(0).setType(lhs.getInput().getType());
  auto merged = RedistributeOp::create(builder, op->getLoc(), lhs.getType(),
                                       combined->getResult(0));
  op->getResult(0).replaceAllUsesWith(merged.getResult());
  op->erase();
  lhs.erase();
  rhs.erase();
  return true;
}

/// A `type` tensor on `mesh`, as the planner sees it.
static ::dt::PlanProblem planProblem(RankedTensorType type,
                                     const MeshInfo &mesh, bool exchange) {
  return {std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
          elementBytes(type.getElementType()),
          std::vector<int64_t>(mesh.shape.begin(), mesh.shape.end()),
          mesh.topology, exchange};
}

static std::vector<Placement> placementsOf(ShardingAttr sharding) {
  return {sharding.getPlacements().begin(), sharding.getPlacements().end()};
}

/// The cheapest plan that moves a `type` tensor from `from` to `to`.
static std::optional<::dt::Plan> planFor(RankedTensorType type,
                                         const MeshInfo &mesh,
                                         ShardingAttr from, ShardingAttr to,
                                         bool exchange) {
  return ::dt::planRedistribution(planProblem(type, mesh, exchange),
                                  placementsOf(from), placementsOf(to));
}

/// `[S(0), R]`.
static std::string placementList(ShardingAttr sharding) {
  return "[" + ::dt::joinPlacements(sharding.getPlacements()) + "]";
}

/// `step` for explanations, with the axis by name: `all_gather on "x" dim
/// 0`, `reduce_scatter on "x" sum dim 1`, `all_to_all on "x" dim 0 -> 1`.
static std::string describeStep(const PlanStep &step, const MeshInfo &mesh) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto reduction = [&] { return ::dt::reductionKindName(step.reduction); };
  std::string axis = "\"" + mesh.axisNames[step.axis] + "\"";
  switch (step.kind) {
  case PlanStep::Kind::AllGather:
    os << "all_gather on " << axis << " dim " << step.dim;
    break;
  case PlanStep::Kind::AllReduce:
    os << "all_reduce on " << axis << " " << reduction();
    break;
  case PlanStep::Kind::ReduceScatter:
    os << "reduce_scatter on " << axis << " " << reduction() << " dim "
       << step.dim;
    break;
  case PlanStep::Kind::AllToAll:
    os << "all_to_all on " << axis << " dim " << step.srcDim << " -> "
       << step.dim;
    break;
  case PlanStep::Kind::LocalSlice:
    os << "local_slice on " << axis << " dim " << step.dim;
    break;
  case PlanStep::Kind::ToPartial:
    os << "to_partial on " << axis << " " << reduction();
    break;
  case PlanStep::Kind::Exchange:
    os << "exchange to [" << ::dt::joinPlacements(step.to) << "]";
    break;
  }
  return text;
}

/// `plan` for explanations: its steps, then `[time, bytes per rank]`.
static std::string describePlan(const ::dt::Plan &plan, const MeshInfo &mesh) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(plan.steps, os, [&](const PlanStep &step) {
    os << describeStep(step, mesh);
  });
  if (plan.steps.empty())
    os << "nothing";
  os << " [" << formatSeconds(plan.seconds) << ", "
     << formatBytes(plan.bytesPerRank) << " per rank]";
  return text;
}

/// A value redistributed for several users: a later redistribution starts
/// from an earlier one's result when that costs less. A partial sum reduced
/// to R for one user is then sliced for another (free), not reduced again.
/// Each redistribution that does is recorded in `reusing`, with where the
/// one it starts from is.
static LogicalResult
reuseEarlierRedistributions(ArrayRef<RedistributeOp> redistributes,
                            MeshCache &meshes, DominanceInfo &dominance,
                            DenseMap<Operation *, LocationAttr> &reusing,
                            bool exchange) {
  llvm::MapVector<Value, SmallVector<RedistributeOp, 2>> bySource;
  for (RedistributeOp op : redistributes)
    bySource[op.getInput()].push_back(op);
  for (auto &[source, ops] : bySource) {
    if (ops.size() < 2)
      continue;
    const MeshInfo *mesh =
        meshes.lookup(ops.front(), ops.front().getSourceSharding().getMesh());
    if (!mesh)
      return failure();
    auto type = cast<RankedTensorType>(source.getType());
    for (RedistributeOp later : ops) {
      std::optional<::dt::Plan> direct =
          planFor(type, *mesh, later.getSourceSharding(),
                  later.getTargetSharding(), exchange);
      double best = direct ? direct->seconds : INFINITY;
      RedistributeOp from;
      for (RedistributeOp earlier : ops) {
        if (earlier == later || earlier.getInput() != source ||
            !dominance.properlyDominates(earlier.getOperation(), later))
          continue;
        std::optional<::dt::Plan> via =
            planFor(type, *mesh, earlier.getTargetSharding(),
                    later.getTargetSharding(), exchange);
        if (via && via->seconds < best) {
          best = via->seconds;
          from = earlier;
        }
      }
      if (from) {
        later.getInputMutable().assign(from.getResult());
        reusing[later] = from.getLoc();
      }
    }
  }
  return success();
}

namespace {
struct LowerRedistributePass
    : public mlir::dt::impl::LowerRedistributePassBase<LowerRedistributePass> {
  mlir::dt::Statistic numRedistributes{this, "redistributes-lowered",
                                       "Number of dt.redistribute ops lowered"};
  mlir::dt::Statistic numCollectives{
      this, "collectives-created",
      "Number of collectives (communicating steps) created"};
  mlir::dt::Statistic numMergedReductions{
      this, "reductions-merged",
      "Number of sums of two reductions turned into one reduction"};
  mlir::dt::Statistic numReused{
      this, "redistributions-reused",
      "Number of redistributions started from an earlier one's result"};
  using Base::Base;

  void runOnOperation() override {
    MeshCache meshes(topology);
    SmallVector<Operation *> sums;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::AddFOp, arith::SubFOp>(op))
        sums.push_back(op);
    });
    for (Operation *op : sums)
      numMergedReductions += mergeSummedReductions(op);
    // Chains fold first (A -> B -> C is planned as A -> C when nothing else
    // needs B), so a reduction followed by a slice becomes one
    // reduce_scatter.
    SmallVector<RedistributeOp> all, redistributes;
    getOperation()->walk([&](RedistributeOp op) { all.push_back(op); });
    DenseSet<Operation *> erased;
    for (RedistributeOp op : all) {
      if (erased.contains(op))
        continue;
      while (auto producer = op.getInput().getDefiningOp<RedistributeOp>()) {
        if (!producer->hasOneUse())
          break;
        op.getInputMutable().assign(producer.getInput());
        erased.insert(producer);
        producer.erase();
      }
      if (op.getInput().getType() == op.getType()) {
        op.getResult().replaceAllUsesWith(op.getInput());
        erased.insert(op);
        op.erase();
      }
    }
    for (RedistributeOp op : all)
      if (!erased.contains(op))
        redistributes.push_back(op);
    DominanceInfo dominance(getOperation());
    DenseMap<Operation *, LocationAttr> reusing;
    if (failed(reuseEarlierRedistributions(redistributes, meshes, dominance,
                                           reusing, exchange)))
      return signalPassFailure();
    numReused += reusing.size();
    for (RedistributeOp op : redistributes) {
      ShardingAttr source = op.getSourceSharding();
      ShardingAttr target = op.getTargetSharding();
      const MeshInfo *mesh = meshes.lookup(op, source.getMesh());
      if (!mesh)
        return signalPassFailure();
      std::optional<::dt::Plan> plan =
          planFor(op.getInput().getType(), *mesh, source, target, exchange);
      if (!plan) {
        op.emitOpError("found no plan from ")
            << source << " to " << target;
        return signalPassFailure();
      }
      if (explain)
        explainPlan(op, *plan, *mesh, reusing.lookup(op));
      OpBuilder builder(op);
      Value value = op.getInput();
      for (const PlanStep &step : plan->steps)
        value = emitStep(builder, op.getLoc(), value, step, *mesh,
                         source.getMesh());
      op.getResult().replaceAllUsesWith(value);
      op.erase();
      ++numRedistributes;
      numCollectives += plan->numCollectives();
    }
  }

  /// The remark of `explain` for `op`, lowered by `plan`; `reused` is where
  /// the earlier redistribution it starts from was, if it starts from one.
  void explainPlan(RedistributeOp op, const ::dt::Plan &plan,
                   const MeshInfo &mesh, LocationAttr reused) {
    ShardingAttr source = op.getSourceSharding();
    ShardingAttr target = op.getTargetSharding();
    RankedTensorType type = op.getType();
    std::string shape;
    llvm::raw_string_ostream os(shape);
    for (int64_t extent : type.getShape())
      os << extent << "x";
    os << type.getElementType();
    InFlightDiagnostic remark = mlir::emitRemark(op.getLoc());
    remark << placementList(source) << " -> " << placementList(target) << " of "
           << shape << ": " << describePlan(plan, mesh);
    if (reused) {
      std::string where = fileLineColumn(reused);
      remark << ", starting from the redistribution to "
             << placementList(source) << (where.empty() ? "" : " at " + where);
      return;
    }
    ::dt::PlanProblem problem = planProblem(type, mesh, exchange);
    std::vector<Placement> from = placementsOf(source),
                           to = placementsOf(target);
    ::dt::Plan greedy = ::dt::greedyPerAxisPlan(problem, from, to);
    if (llvm::equal(greedy.steps, plan.steps,
                    [](const PlanStep &a, const PlanStep &b) {
                      return a.str() == b.str();
                    }))
      return;
    remark << "; DTensor's per-axis plan: " << describePlan(greedy, mesh);
    // It ignores how several axes on one dim nest: a step on an axis that
    // is not the innermost of its dim gives another layout.
    if (!::dt::isValidPlan(problem, from, to, greedy))
      remark << ", invalid here: it ignores how several axes nest on one dim";
  }
};
} // namespace
