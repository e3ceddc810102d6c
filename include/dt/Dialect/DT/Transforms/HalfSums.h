//===- HalfSums.h - 16-bit float sums accumulated in f32 --------*- C++ -*-===//
//
// A linalg body that adds each term to a 16-bit float init rounds the
// accumulator at every step. dt accumulates such a sum in f32 and rounds it
// once: dt-widen-half-sums every sum the lowering meets, and
// dt-widen-partial-sums a partial sum that ranks add up, which then stays in
// f32 until they have.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_TRANSFORMS_HALFSUMS_H
#define DT_DIALECT_DT_TRANSFORMS_HALFSUMS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::dt {

/// The ops by which a body accumulates into one init: an `arith.addf` of
/// the init's block argument (or a running maximum or minimum:
/// `arith.maximumf`, `minimumf`, `maxnumf`, `minnumf`), and perhaps a
/// select between that result and the argument (dt-partition's mask of an
/// uneven shard's padding rows).
struct HalfSum {
  Operation *combine = nullptr;
  arith::SelectOp select;
};

/// How the body of `op` accumulates `init`, if `init` is a 16-bit float
/// that the body only adds to (or, with `extrema`, only takes the maximum
/// or minimum with): the init's block argument is used by that op alone,
/// or by that and a select whose other value is its result, and the result
/// (or the select) is yielded as the init's result and used nowhere else.
/// A maximum or minimum in f32 of 16-bit values is one of them, so widening
/// it changes no value: it saves a rounding at every step.
std::optional<HalfSum> matchHalfSum(linalg::LinalgOp op, OpOperand &init,
                                    bool extrema = false);

/// A tensor shaped like `value` (and with its encoding), of `elementType`,
/// with nothing in it.
Value emptyLike(OpBuilder &b, Location loc, Value value, Type elementType);

/// `value` converted elementwise to `elementType` (extf or truncf) into a
/// fresh tensor.
Value convertElements(OpBuilder &b, Location loc, Value value,
                      Type elementType);

/// The f32 init a widened sum starts from: a fill of the widened scalar
/// when `init` was a fill, else `init` converted.
Value widenInit(OpBuilder &b, Location loc, Value init);

/// Rewrites `op`, whose inits at `sums` (init index, how it accumulates)
/// add up 16-bit floats (or take their maximum or minimum), to accumulate
/// those in f32: returns the new
/// generic, whose results at `sums` are f32; `op`'s results are replaced by
/// them, each sum rounded once into a fresh 16-bit tensor. Each sum starts
/// from its init widened (widenInit), or from the f32 value `wideInits`
/// gives at its position, when given. Fails, changing nothing, when `op`
/// has no generic form.
FailureOr<linalg::GenericOp>
widenHalfSums(RewriterBase &rewriter, linalg::LinalgOp op,
              ArrayRef<std::pair<unsigned, HalfSum>> sums,
              ValueRange wideInits = {});

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_HALFSUMS_H
