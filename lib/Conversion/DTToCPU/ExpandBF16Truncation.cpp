//===- ExpandBF16Truncation.cpp - dt-expand-bf16-truncation ---------------===//
//
// f64 -> bf16 by way of f32 rounded to odd: LLVM would call libgcc's
// `__truncdfbf2`, which the system's libgcc may not have. Rounding to odd
// first (to f32: 24 bits, at least two more than bf16's 8) and to nearest
// even second gives the correctly rounded result of one rounding.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::dt {
#define GEN_PASS_DEF_EXPANDBF16TRUNCATIONPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// `type` with its element type replaced by `element` (scalar or vector).
static Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// A scalar or vector one with its rounding mode left to LLVM's default:
/// nearest, ties to even. (Tensors are loops by the time this runs.)
static bool isF64ToBF16(arith::TruncFOp op) {
  return !op.getRoundingmodeAttr() &&
         isa<FloatType, VectorType>(op.getIn().getType()) &&
         getElementTypeOrSelf(op.getIn().getType()).isF64() &&
         getElementTypeOrSelf(op.getType()).isBF16();
}

/// `d` rounded to f32 by round-to-odd: toward zero, then the lowest bit set
/// when that was inexact. NaN and infinities pass as the nearest rounding
/// gives them.
static Value roundToOddF32(OpBuilder &b, Location loc, Value d) {
  Type f32 = withElement(d.getType(), b.getF32Type());
  Type i32 = withElement(d.getType(), b.getI32Type());
  auto splat = [&](int32_t v) -> Value {
    TypedAttr attr = b.getI32IntegerAttr(v);
    if (auto vector = dyn_cast<VectorType>(i32))
      attr = DenseElementsAttr::get(vector, attr);
    return arith::ConstantOp::create(b, loc, attr);
  };
  Value nearest = arith::TruncFOp::create(b, loc, f32, d);
  // Rounded away from zero: step back one f32 toward zero (the bits of a
  // magnitude count up from zero, for either sign; infinity steps to the
  // largest finite value).
  Value back = arith::ExtFOp::create(b, loc, d.getType(), nearest);
  Value away = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                     math::AbsFOp::create(b, loc, back),
                                     math::AbsFOp::create(b, loc, d));
  Value bits = arith::BitcastOp::create(b, loc, i32, nearest);
  Value stepped = arith::SubIOp::create(b, loc, bits, splat(1));
  Value towardZero = arith::SelectOp::create(b, loc, away, stepped, bits);
  Value truncated = arith::BitcastOp::create(b, loc, f32, towardZero);
  Value inexact = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::ONE,
      arith::ExtFOp::create(b, loc, d.getType(), truncated), d);
  Value odd = arith::OrIOp::create(b, loc, towardZero, splat(1));
  Value rounded = arith::SelectOp::create(b, loc, inexact, odd, towardZero);
  return arith::BitcastOp::create(b, loc, f32, rounded);
}

namespace {
struct ExpandBF16TruncationPass
    : public mlir::dt::impl::ExpandBF16TruncationPassBase<
          ExpandBF16TruncationPass> {
  void runOnOperation() override {
    SmallVector<arith::TruncFOp> truncations;
    getOperation().walk([&](arith::TruncFOp op) {
      if (isF64ToBF16(op))
        truncations.push_back(op);
    });
    for (arith::TruncFOp op : truncations) {
      OpBuilder b(op);
      Value odd = roundToOddF32(b, op.getLoc(), op.getIn());
      op.getInMutable().assign(odd);
    }
  }
};
} // namespace
