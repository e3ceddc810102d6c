//===- LowerBoundsChecks.cpp - dt-lower-bounds-checks ---------------------===//
//
// A dt.bounds_check becomes an unsigned compare, a report in a branch not
// taken, and a clamp to 0 that keeps the guarded access inside its tensor.
// Host code reports through the runtime, which fails the rank's job; a GPU
// kernel cannot call the host, so it asserts (__assertfail after NVVM).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Dialect/DT/IR/DTOps.h"

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
  op.getLoc()->walk([&](Location loc) {
    auto file = dyn_cast<FileLineColLoc>(loc);
    if (!file)
      return WalkResult::advance();
    text += " (at " + file.getFilename().str() + ":" +
            std::to_string(file.getLine()) + ":" +
            std::to_string(file.getColumn()) + ")";
    return WalkResult::interrupt();
  });
  return text;
}

struct LowerBoundsChecksPass
    : public mlir::dt::impl::LowerBoundsChecksPassBase<LowerBoundsChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<BoundsCheckOp> checks;
    module.walk([&](BoundsCheckOp op) { checks.push_back(op); });
    for (BoundsCheckOp op : checks) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value bound = arith::ConstantIndexOp::create(b, loc, op.getBound());
      Value outside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                            op.getIndex(), bound);
      std::string message = describeCheck(op);
      if (op->getParentOfType<gpu::GPUFuncOp>()) {
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             op.getIndex(), bound);
        cf::AssertOp::create(b, loc, inside,
                             "dt: index out of bounds [0, " +
                                 std::to_string(op.getBound()) + ") in " +
                                 message);
      } else {
        auto report = scf::IfOp::create(b, loc, outside);
        b.setInsertionPointToStart(&report.getThenRegion().front());
        auto i64 = b.getI64Type();
        func::FuncOp callee = getOrInsertRuntimeFunction(
            module, kIndexOutOfRange,
            b.getFunctionType(
                {i64, i64, LLVM::LLVMPointerType::get(&getContext())}, {}));
        Value index = arith::IndexCastOp::create(b, loc, i64, op.getIndex());
        Value limit = arith::ConstantIntOp::create(b, loc, op.getBound(), 64);
        func::CallOp::create(
            b, loc, callee,
            ValueRange{index, limit, messageAddress(b, message, loc)});
        b.setInsertionPointAfter(report);
      }
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      op.replaceAllUsesWith(
          arith::SelectOp::create(b, loc, outside, zero, op.getIndex())
              .getResult());
      op.erase();
    }
  }

  /// The address of a NUL-terminated constant holding `message`, at `b`'s
  /// insertion point; one global per distinct message.
  Value messageAddress(OpBuilder &b, StringRef message, Location loc) {
    ModuleOp module = getOperation();
    LLVM::GlobalOp &global = messages[message];
    if (!global) {
      OpBuilder atTop = OpBuilder::atBlockBegin(module.getBody());
      std::string text = message.str();
      text.push_back('\0');
      auto type = LLVM::LLVMArrayType::get(atTop.getI8Type(), text.size());
      std::string name;
      do
        name = "dt_bounds_message_" + std::to_string(nextMessage++);
      while (module.lookupSymbol(name));
      global = LLVM::GlobalOp::create(atTop, loc, type, /*isConstant=*/true,
                                      LLVM::Linkage::Internal, name,
                                      atTop.getStringAttr(text));
    }
    return LLVM::AddressOfOp::create(b, loc, global);
  }

  llvm::StringMap<LLVM::GlobalOp> messages;
  unsigned nextMessage = 0;
};
} // namespace
