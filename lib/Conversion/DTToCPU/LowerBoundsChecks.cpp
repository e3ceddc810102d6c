//===- LowerBoundsChecks.cpp - dt-lower-bounds-checks ---------------------===//
//
// A dt.bounds_check becomes an unsigned compare, a report in a branch not
// taken, and a clamp to 0 that keeps the guarded access inside its tensor.
// Host code reports through the runtime, which fails the rank's job; a GPU
// kernel cannot call the host, so it asserts (__assertfail after NVVM).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_LOWERBOUNDSCHECKSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
constexpr StringLiteral kIndexOutOfRange = "dt_rt_index_out_of_range";

/// "what (at file:line:col)", or `what` alone when `loc` names no file.
std::string describeCheck(BoundsCheckOp op) {
  std::string text = op.getWhat().str();
  std::string at = sourceLocation(op.getLoc());
  if (!at.empty())
    text += " (at " + at + ")";
  return text;
}

struct LowerBoundsChecksPass
    : public mlir::dt::impl::LowerBoundsChecksPassBase<LowerBoundsChecksPass> {
  void runOnOperation() override {
    SmallVector<BoundsCheckOp> checks;
    getOperation().walk([&](BoundsCheckOp op) { checks.push_back(op); });
    for (BoundsCheckOp op : checks) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value bound = arith::ConstantIndexOp::create(b, loc, op.getBound());
      Value outside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                            op.getIndex(), bound);
      auto loop = op->getParentOfType<linalg::LinalgOp>();
      if (op->getParentOfType<gpu::GPUFuncOp>())
        assertInKernel(b, op, bound);
      else if (loop && loop.hasPureBufferSemantics())
        reportAfterLoop(b, op, outside, loop);
      else
        reportNow(b, op, outside);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      op.replaceAllUsesWith(
          arith::SelectOp::create(b, loc, outside, zero, op.getIndex())
              .getResult());
      op.erase();
    }
  }

  /// A kernel cannot call the host: it asserts (NVVM: __assertfail).
  void assertInKernel(OpBuilder &b, BoundsCheckOp op, Value bound) {
    Value inside = arith::CmpIOp::create(
        b, op.getLoc(), arith::CmpIPredicate::ult, op.getIndex(), bound);
    cf::AssertOp::create(b, op.getLoc(), inside,
                         "dt: index out of bounds [0, " +
                             std::to_string(op.getBound()) + ") in " +
                             describeCheck(op));
  }

  /// Calls the runtime in a branch not taken, at the check.
  void reportNow(OpBuilder &b, BoundsCheckOp op, Value outside) {
    Location loc = op.getLoc();
    auto report = scf::IfOp::create(b, loc, outside);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&report.getThenRegion().front());
    Value index =
        arith::IndexCastOp::create(b, loc, b.getI64Type(), op.getIndex());
    callReport(b, op, index);
  }

  /// In a loop nest (a linalg op on buffers), a call in the innermost loop
  /// would keep LLVM from vectorizing it. The body instead folds the
  /// indices out of bounds into a scalar, umax(acc, outside ? i : 0),
  /// which LLVM keeps in a register and vectorizes as a reduction (any
  /// index out of bounds is at least 1 as an unsigned number); after the
  /// loop nest, a nonzero scalar is reported.
  void reportAfterLoop(OpBuilder &b, BoundsCheckOp op, Value outside,
                       linalg::LinalgOp loop) {
    Location loc = op.getLoc();
    auto func = op->getParentOfType<FunctionOpInterface>();
    auto i64 = b.getI64Type();
    Value acc;
    {
      OpBuilder atEntry =
          OpBuilder::atBlockBegin(&func.getFunctionBody().front());
      acc = memref::AllocaOp::create(atEntry, loc, MemRefType::get({}, i64));
      Value zero = arith::ConstantIntOp::create(atEntry, loc, 0, 64);
      memref::StoreOp::create(atEntry, loc, zero, acc);
    }
    Value index = arith::IndexCastOp::create(b, loc, i64, op.getIndex());
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
    Value offending = arith::SelectOp::create(b, loc, outside, index, zero);
    Value folded = arith::MaxUIOp::create(
        b, loc, memref::LoadOp::create(b, loc, acc), offending);
    memref::StoreOp::create(b, loc, folded, acc);

    OpBuilder after(loop->getContext());
    after.setInsertionPointAfter(loop);
    Value seen = memref::LoadOp::create(after, loc, acc);
    Value found =
        arith::CmpIOp::create(after, loc, arith::CmpIPredicate::ne, seen,
                              arith::ConstantIntOp::create(after, loc, 0, 64));
    auto report = scf::IfOp::create(after, loc, found);
    after.setInsertionPointToStart(&report.getThenRegion().front());
    callReport(after, op, seen);
    // The next run of the loop nest (in a loop of the program) starts clean.
    memref::StoreOp::create(
        after, loc, arith::ConstantIntOp::create(after, loc, 0, 64), acc);
  }

  /// dt_rt_index_out_of_range(index, bound, message) at `b`.
  void callReport(OpBuilder &b, BoundsCheckOp op, Value index) {
    Location loc = op.getLoc();
    auto i64 = b.getI64Type();
    func::FuncOp callee = getOrInsertRuntimeFunction(
        getOperation(), kIndexOutOfRange,
        b.getFunctionType({i64, i64, LLVM::LLVMPointerType::get(&getContext())},
                          {}));
    Value bound = arith::ConstantIntOp::create(b, loc, op.getBound(), 64);
    func::CallOp::create(
        b, loc, callee,
        ValueRange{
            index, bound,
            getOrInsertMessage(b, getOperation(), describeCheck(op), loc)});
  }
};
} // namespace
