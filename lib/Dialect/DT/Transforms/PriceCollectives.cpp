//===- PriceCollectives.cpp - dt-price-collectives ------------------------===//
//
// Records on each collective of the local program the alpha-beta estimate
// of one run, for dt-run --profile to print beside the time measured.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"

namespace mlir::dt {
#define GEN_PASS_DEF_PRICECOLLECTIVESPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;
using ::dt::CollectiveKind;

namespace {
struct PriceCollectivesPass
    : public mlir::dt::impl::PriceCollectivesPassBase<PriceCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    MeshCache meshes(topology);
    auto record = [](Operation *op, double seconds) {
      op->setAttr(DTDialect::kModelSecondsAttrName,
                  FloatAttr::get(Float64Type::get(op->getContext()), seconds));
    };
    WalkResult result = getOperation()->walk([&](Operation *op) {
      // A local slice moves nothing between ranks.
      if (isa<LocalSliceOp>(op)) {
        record(op, 0.0);
        return WalkResult::advance();
      }
      if (auto exchange = dyn_cast<ExchangeOp>(op)) {
        const MeshInfo *mesh = meshes.lookup(op, exchange.getMeshAttr());
        if (!mesh)
          return WalkResult::interrupt();
        if (std::optional<::dt::ExchangeCost> cost =
                exchangeCostOf(exchange, *mesh))
          record(op, cost->seconds);
        return WalkResult::advance();
      }
      std::optional<CollectiveKind> kind = collectiveKindOf(op);
      if (!kind)
        return WalkResult::advance();
      auto inType = cast<RankedTensorType>(op->getOperand(0).getType());
      auto outType = cast<RankedTensorType>(op->getResult(0).getType());
      if (getShardingEncoding(outType)) {
        op->emitOpError("is still in global form: run dt-partition before "
                        "dt-price-collectives");
        return WalkResult::interrupt();
      }
      const MeshInfo *mesh =
          meshes.lookup(op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
      if (!mesh)
        return WalkResult::interrupt();
      AxisGroup group =
          axisGroup(*mesh, op->getAttrOfType<ArrayAttr>("axes"));
      double bytes = localRingBytes(*kind, inType, outType, group.size);
      record(op, ::dt::ringSeconds(*kind, group.size, bytes,
                                   mesh->topology.groupLink(group.axes)));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
