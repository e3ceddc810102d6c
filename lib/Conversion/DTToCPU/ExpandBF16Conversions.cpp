//===- ExpandBF16Conversions.cpp - dt-expand-bf16-conversions -------------===//
//
// bf16 <-> f32 and f64 in integer arithmetic, so that no bf16 arithmetic is
// left for LLVM. LLVM rounds to bf16 with an instruction only where the CPU
// has one (AVX512-BF16: Cooper Lake, Zen 4 and later); elsewhere it calls
// the compiler runtime's `__truncsfbf2` or `__truncdfbf2`, which the
// system's libgcc may not have (GCC 12's, Debian 12's, has neither): the
// artifact would not load. It also narrows arithmetic on extended bf16
// values back to bf16 (a clamp of a loaded bf16 became a bf16 min, rounded
// through `__truncsfbf2`), which an extension made of integer operations
// does not invite.
//
// f32 is rounded to nearest even on its bits (a NaN kept quiet, its sign
// and top payload bits as they were); f64 goes through f32 rounded to odd
// first, so that the two roundings give the correctly rounded result of
// one. An extension shifts the bits into the top half of an f32.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::dt {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONSPASS
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

/// A scalar or vector one from f32 or f64 to bf16 with its rounding mode
/// left to LLVM's default: nearest, ties to even. (Tensors are loops by the
/// time this runs.)
static bool isToBF16(arith::TruncFOp op) {
  Type from = getElementTypeOrSelf(op.getIn().getType());
  return !op.getRoundingmodeAttr() &&
         isa<FloatType, VectorType>(op.getIn().getType()) &&
         (from.isF32() || from.isF64()) &&
         getElementTypeOrSelf(op.getType()).isBF16();
}

/// The i32 constant `v`, splat to `type`'s shape where it is a vector.
static Value splatI32(OpBuilder &b, Location loc, Type type, int32_t v) {
  TypedAttr attr = b.getI32IntegerAttr(v);
  if (auto vector = dyn_cast<VectorType>(type))
    attr = DenseElementsAttr::get(vector, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

/// `d` rounded to f32 by round-to-odd: toward zero, then the lowest bit set
/// when that was inexact. NaN and infinities pass as the nearest rounding
/// gives them.
static Value roundToOddF32(OpBuilder &b, Location loc, Value d) {
  Type f32 = withElement(d.getType(), b.getF32Type());
  Type i32 = withElement(d.getType(), b.getI32Type());
  auto splat = [&](int32_t v) { return splatI32(b, loc, i32, v); };
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

/// `f` (f32) rounded to bf16, nearest with ties to even, on its bits: add
/// 0x7fff and the lowest bit kept, then drop the low 16 bits. A carry into
/// the exponent rounds the largest finite values to infinity, as it should;
/// a NaN, which the carry could turn into an infinity, keeps its top bits
/// with its quiet bit set.
static Value roundToBF16(OpBuilder &b, Location loc, Value f) {
  Type i32 = withElement(f.getType(), b.getI32Type());
  auto splat = [&](int32_t v) { return splatI32(b, loc, i32, v); };
  Value bits = arith::BitcastOp::create(b, loc, i32, f);
  Value high = arith::ShRUIOp::create(b, loc, bits, splat(16));
  Value kept = arith::AndIOp::create(b, loc, high, splat(1));
  Value bias = arith::AddIOp::create(b, loc, kept, splat(0x7fff));
  Value sum = arith::AddIOp::create(b, loc, bits, bias);
  Value rounded = arith::ShRUIOp::create(b, loc, sum, splat(16));
  Value quiet = arith::OrIOp::create(b, loc, high, splat(0x40));
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, f, f);
  Value result = arith::SelectOp::create(b, loc, nan, quiet, rounded);
  Value i16 = arith::TruncIOp::create(
      b, loc, withElement(f.getType(), b.getI16Type()), result);
  return arith::BitcastOp::create(
      b, loc, withElement(f.getType(), b.getBF16Type()), i16);
}

/// `h` (bf16) as f32, exactly: its bits are the f32's top half.
static Value extendBF16(OpBuilder &b, Location loc, Value h) {
  Type i32 = withElement(h.getType(), b.getI32Type());
  Value bits = arith::BitcastOp::create(
      b, loc, withElement(h.getType(), b.getI16Type()), h);
  Value wide = arith::ExtUIOp::create(b, loc, i32, bits);
  Value shifted =
      arith::ShLIOp::create(b, loc, wide, splatI32(b, loc, i32, 16));
  return arith::BitcastOp::create(
      b, loc, withElement(h.getType(), b.getF32Type()), shifted);
}

/// An extension from bf16 to f32 or f64, scalar or vector.
static bool isFromBF16(arith::ExtFOp op) {
  Type to = getElementTypeOrSelf(op.getType());
  return isa<FloatType, VectorType>(op.getIn().getType()) &&
         getElementTypeOrSelf(op.getIn().getType()).isBF16() &&
         (to.isF32() || to.isF64());
}

namespace {
struct ExpandBF16ConversionsPass
    : public mlir::dt::impl::ExpandBF16ConversionsPassBase<
          ExpandBF16ConversionsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> conversions;
    getOperation().walk([&](Operation *op) {
      auto truncation = dyn_cast<arith::TruncFOp>(op);
      auto extension = dyn_cast<arith::ExtFOp>(op);
      if ((truncation && isToBF16(truncation)) ||
          (extension && isFromBF16(extension)))
        conversions.push_back(op);
    });
    for (Operation *op : conversions) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value in = op->getOperand(0);
      Type type = op->getResult(0).getType();
      Value result;
      if (isa<arith::TruncFOp>(op)) {
        if (getElementTypeOrSelf(in.getType()).isF64())
          in = roundToOddF32(b, loc, in);
        result = roundToBF16(b, loc, in);
      } else {
        result = extendBF16(b, loc, in);
        if (result.getType() != type)
          result = arith::ExtFOp::create(b, loc, type, result);
      }
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }
};
} // namespace
