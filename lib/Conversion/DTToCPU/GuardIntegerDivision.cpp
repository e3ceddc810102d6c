//===- GuardIntegerDivision.cpp - dt-guard-integer-division ---------------===//
//
// An integer division by zero traps on the CPU (SIGFPE). The program never
// divides by zero where it means to (that would be undefined), but a rank
// computes on the padding of its uneven shards too, and padding is zero: a
// remainder by a tensor split 3, 3, 2 over three ranks divides by the last
// rank's padding (found by scripts/fuzz-programs.py). So a divisor that is
// not a nonzero constant becomes select(d == 0, 1, d): the padding's
// results are discarded, and a zero divisor the program itself holds was
// undefined anyway. Index arithmetic (dt's own, by nonzero extents) is left
// alone.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::dt {
#define GEN_PASS_DEF_GUARDINTEGERDIVISIONPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct GuardIntegerDivisionPass
    : public mlir::dt::impl::GuardIntegerDivisionPassBase<
          GuardIntegerDivisionPass> {
  mlir::dt::Statistic numGuarded{this, "guarded",
                                 "Divisions given a divisor guard"};
  void runOnOperation() override {
    SmallVector<Operation *> divisions;
    getOperation().walk([&](Operation *op) {
      if (!isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
               arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op))
        return;
      Value divisor = op->getOperand(1);
      APInt value;
      if (!isa<IntegerType>(divisor.getType()) ||
          (matchPattern(divisor, m_ConstantInt(&value)) && !value.isZero()))
        return;
      divisions.push_back(op);
    });
    for (Operation *op : divisions) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value divisor = op->getOperand(1);
      Type type = divisor.getType();
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
      Value one = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 1));
      Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           divisor, zero);
      op->setOperand(1, arith::SelectOp::create(b, loc, isZero, one, divisor));
      ++numGuarded;
    }
  }
};
} // namespace
