//===- HalfRoundings.cpp - dt-mark/elide-half-roundings -------------------===//
//
// A bf16 or f16 value a kernel computes and uses again at once is kept in
// f32: arith-emulate-unsupported-floats rounds every 16-bit operation's
// result and extends it again for the next (`extf(truncf(x))`), which costs
// about 8 integer operations a bf16 rounding on a CPU without AVX512-BF16
// (and two conversions an f16 one, as LLVM would promote f16 arithmetic).
// dt-elide-half-roundings uses `x` itself there, keeping the roundings
// where a value is stored and those the program wrote (marked by
// dt-mark-half-roundings before the lowering adds any): excess precision
// within a kernel, as XLA and PyTorch's inductor allow.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dt {
#define GEN_PASS_DEF_MARKHALFROUNDINGSPASS
#define GEN_PASS_DEF_ELIDEHALFROUNDINGSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The mark of a rounding the program wrote.
static constexpr StringLiteral kRounds = "dt_rounds";

/// Whether `type` is a 16-bit float type (or a shaped type of one).
static bool isHalf(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isBF16() || element.isF16();
}

/// Whether `truncate` is a rounding to bf16 or f16 that may be left out
/// where its result is extended back to `wide`: not the program's own, of a
/// value of type `wide`, with the default rounding mode.
static bool isElidable(arith::TruncFOp truncate, Type wide) {
  return !truncate->hasAttr(kRounds) && !truncate.getRoundingmodeAttr() &&
         isHalf(truncate.getType()) && truncate.getIn().getType() == wide;
}

/// `value` (16-bit) extended to `wide` before `user`: the value an elidable
/// rounding rounded, else an extension of it.
static Value widened(OpBuilder &b, Operation *user, Value value, Type wide) {
  if (auto truncate = value.getDefiningOp<arith::TruncFOp>();
      truncate && isElidable(truncate, wide))
    return truncate.getIn();
  b.setInsertionPoint(user);
  return arith::ExtFOp::create(b, user->getLoc(), wide, value);
}

namespace {
struct MarkHalfRoundingsPass
    : public mlir::dt::impl::MarkHalfRoundingsPassBase<MarkHalfRoundingsPass> {
  void runOnOperation() override {
    getOperation().walk([](arith::TruncFOp truncate) {
      if (isHalf(truncate.getType()))
        truncate->setAttr(kRounds, UnitAttr::get(truncate.getContext()));
    });
  }
};

struct ElideHalfRoundingsPass
    : public mlir::dt::impl::ElideHalfRoundingsPassBase<
          ElideHalfRoundingsPass> {
  void runOnOperation() override {
    // Each extension of a rounded value, or of a 16-bit select (which the
    // emulation leaves in 16 bits) of values: the value itself, or a select in
    // f32.
    SmallVector<arith::ExtFOp> extensions;
    getOperation().walk([&](arith::ExtFOp extend) {
      Operation *from = extend.getIn().getDefiningOp();
      if (auto truncate = dyn_cast_or_null<arith::TruncFOp>(from);
          truncate && isElidable(truncate, extend.getType()))
        extensions.push_back(extend);
      else if (isa_and_nonnull<arith::SelectOp>(from) &&
               isHalf(extend.getIn().getType()))
        extensions.push_back(extend);
    });
    OpBuilder b(&getContext());
    llvm::SetVector<Operation *> maybeDead;
    for (arith::ExtFOp extend : extensions) {
      Type wide = extend.getType();
      Operation *from = extend.getIn().getDefiningOp();
      Value value;
      if (auto select = dyn_cast<arith::SelectOp>(from)) {
        Value onTrue = widened(b, extend, select.getTrueValue(), wide);
        Value onFalse = widened(b, extend, select.getFalseValue(), wide);
        b.setInsertionPoint(extend);
        value = arith::SelectOp::create(b, select.getLoc(),
                                        select.getCondition(), onTrue, onFalse);
      } else {
        value = cast<arith::TruncFOp>(from).getIn();
      }
      extend.replaceAllUsesWith(value);
      extend.erase();
      maybeDead.insert(from);
    }
    // A rounding or select left without users, and the roundings only such
    // a select read.
    for (unsigned i = 0; i < maybeDead.size(); ++i) {
      Operation *op = maybeDead[i];
      if (!op->use_empty())
        continue;
      for (Value operand : op->getOperands())
        if (auto truncate = operand.getDefiningOp<arith::TruncFOp>())
          maybeDead.insert(truncate);
      op->erase();
    }
    // The marks have served.
    getOperation().walk(
        [](arith::TruncFOp truncate) { truncate->removeAttr(kRounds); });
  }
};
} // namespace
