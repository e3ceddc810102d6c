//===- WidenPredicateCollectives.cpp - dt-widen-predicate-collectives -----===//
//
// The runtime's collectives move and reduce f16, bf16, f32, f64, i32 and i64
// elements. A collective on i1 (a mask the planner moves because it is
// smaller than the values it selects, or a P(max) predicate) runs on i32
// instead: extended before, truncated after. Max and min over 0 and 1 are
// or and and, the only partial kinds an i1 may have.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_WIDENPREDICATECOLLECTIVESPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct WidenPredicateCollectivesPass
    : public mlir::dt::impl::WidenPredicateCollectivesPassBase<
          WidenPredicateCollectivesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> predicates;
    getOperation().walk([&](Operation *op) {
      if (isRuntimeCollective(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isInteger(1))
        predicates.push_back(op);
    });
    for (Operation *op : predicates) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Type wide = b.getI32Type();
      Value input = op->getOperand(0);
      Value widened = arith::ExtUIOp::create(
          b, loc, cast<RankedTensorType>(input.getType()).clone(wide), input);
      Operation *collective = b.clone(*op);
      collective->setOperand(0, widened);
      Value result = op->getResult(0);
      collective->getResult(0).setType(
          cast<RankedTensorType>(result.getType()).clone(wide));
      Value narrowed = arith::TruncIOp::create(b, loc, result.getType(),
                                               collective->getResult(0));
      result.replaceAllUsesWith(narrowed);
      op->erase();
    }
  }
};
} // namespace
