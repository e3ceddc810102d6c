//===- LowerRedistribute.cpp - dt-lower-redistribute ----------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"
#include "dt/Sharding/Planner.h"

#include "mlir/IR/Builders.h"

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
  Placement next = Placement::replicate();
  switch (step.kind) {
  case PlanStep::Kind::AllGather:
  case PlanStep::Kind::AllReduce:
    break;
  case PlanStep::Kind::ReduceScatter:
  case PlanStep::Kind::AllToAll:
  case PlanStep::Kind::LocalSlice:
    next = Placement::shard(step.dim);
    break;
  case PlanStep::Kind::ToPartial:
    next = Placement::partial(step.reduction);
    break;
  }
  return before.withPlacement(step.axis, next);
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
    return b.create<AllGatherOp>(loc, resultType, value, meshRef, axes,
                                 b.getI64IntegerAttr(step.dim));
  case PlanStep::Kind::AllReduce:
    return b.create<AllReduceOp>(loc, resultType, value, meshRef, axes,
                                 reduction);
  case PlanStep::Kind::ReduceScatter:
    return b.create<ReduceScatterOp>(loc, resultType, value, meshRef, axes,
                                     reduction, b.getI64IntegerAttr(step.dim));
  case PlanStep::Kind::AllToAll:
    return b.create<AllToAllOp>(loc, resultType, value, meshRef, axes,
                                b.getI64IntegerAttr(step.dim),
                                b.getI64IntegerAttr(step.srcDim));
  case PlanStep::Kind::LocalSlice:
    return b.create<LocalSliceOp>(loc, resultType, value, meshRef, axes,
                                  b.getI64IntegerAttr(step.dim));
  case PlanStep::Kind::ToPartial:
    return b.create<ToPartialOp>(loc, resultType, value, meshRef, axes,
                                 reduction);
  }
  return value;
}

namespace {
struct LowerRedistributePass
    : public mlir::dt::impl::LowerRedistributePassBase<LowerRedistributePass> {
  using Base::Base;

  void runOnOperation() override {
    MeshCache meshes(topology);
    SmallVector<RedistributeOp> redistributes;
    getOperation()->walk(
        [&](RedistributeOp op) { redistributes.push_back(op); });
    for (RedistributeOp op : redistributes) {
      ShardingAttr source = op.getSourceSharding();
      ShardingAttr target = op.getTargetSharding();
      const MeshInfo *mesh = meshes.lookup(op, source.getMesh());
      if (!mesh)
        return signalPassFailure();
      RankedTensorType type = op.getInput().getType();
      ::dt::PlanProblem problem{
          std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
          elementBytes(type.getElementType()),
          std::vector<int64_t>(mesh->shape.begin(), mesh->shape.end()),
          mesh->topology};
      std::optional<::dt::Plan> plan = ::dt::planRedistribution(
          problem,
          std::vector<Placement>(source.getPlacements().begin(),
                                 source.getPlacements().end()),
          std::vector<Placement>(target.getPlacements().begin(),
                                 target.getPlacements().end()));
      if (!plan) {
        op.emitOpError("found no plan from ")
            << source << " to " << target;
        return signalPassFailure();
      }
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
};
} // namespace
