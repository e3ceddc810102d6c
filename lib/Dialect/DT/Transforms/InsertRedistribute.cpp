//===- InsertRedistribute.cpp - dt-insert-redistribute --------------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/Strategy.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dt {
#define GEN_PASS_DEF_INSERTREDISTRIBUTEPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct InsertRedistributePass
    : public mlir::dt::impl::InsertRedistributePassBase<InsertRedistributePass> {
  mlir::dt::Statistic numRedistributes{
      this, "redistributes-inserted", "Number of dt.redistribute ops inserted"};
  using Base::Base;

  void runOnOperation() override {
    MeshCache meshes(topology);
    bool ok = true;
    unsigned inserted = 0;
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func.isExternal() || !isMeshedFunction(func))
        return;
      func.walk([&](Operation *op) {
        // A linalg body is scalar code: its op's rule covers it.
        if (op->getParentOfType<linalg::LinalgOp>())
          return;
        if (isFullyReplicated(op))
          return;
        FailureOr<ShardingRule> rule = getShardingRule(op);
        if (failed(rule))
          return;
        StrategyContext known = currentShardings(op, *rule);
        ShardingAttr any;
        for (ShardingAttr s : llvm::concat<ShardingAttr>(known.operands,
                                                         known.fixedResults))
          if ((any = s))
            break;
        if (!any)
          return;
        const MeshInfo *mesh = meshes.lookup(op, any.getMesh());
        if (!mesh) {
          ok = false;
          return;
        }
        if (!findMismatch(*rule, mesh->shape, known))
          return;
        // The results are fixed by their types: find the cheapest way to
        // bring the operands to a strategy that produces them.
        FailureOr<SmallVector<AxisChoice>> strategy =
            chooseStrategy(op, *rule, *mesh, known);
        if (failed(strategy)) {
          ok = false;
          return;
        }
        for (auto [i, operand] : llvm::enumerate(rule->operands(op))) {
          if (!rule->isTensorOperand(i))
            continue;
          ShardingAttr need =
              shardingUnder(*rule, *strategy, false, i, any.getMesh());
          if (getShardingEncoding(operand.getType()) != need) {
            redistributeRuleOperand(op, *rule, i, need);
            ++inserted;
          }
        }
      });
    });
    if (!ok || failed(verifyEncodingsPreserved(getOperation())))
      return signalPassFailure();
    numRedistributes += inserted;
    if (inserted == 0)
      markAllAnalysesPreserved();
  }
};
} // namespace
