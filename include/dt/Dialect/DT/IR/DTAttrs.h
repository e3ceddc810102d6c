//===- DTAttrs.h - dt attributes --------------------------------*- C++ -*-===//

#ifndef DT_DIALECT_DT_IR_DTATTRS_H
#define DT_DIALECT_DT_IR_DTATTRS_H

#include "dt/Sharding/Placement.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TensorEncoding.h"
#include "llvm/ADT/Hashing.h"

namespace dt {
/// Lets placements be attribute parameters (hashed by ADL from llvm::hash_value).
inline llvm::hash_code hash_value(const Placement &p) {
  return llvm::hash_combine(p.kind(), p.isShard() ? p.dim() : 0,
                            p.isPartial() ? p.reduction() : ReductionKind{});
}
} // namespace dt

namespace mlir::dt {
using ::dt::Placement;
using ::dt::ReductionKind;

/// Parses/prints a reduction kind keyword (`sum`, `avg`, `max`, `min`).
ParseResult parseReductionKind(AsmParser &parser, ReductionKind &kind);
void printReductionKind(AsmPrinter &printer, ReductionKind kind);
/// While alive, collects the `: type` that MLIR's parser reads after a
/// `#dt.sharding<...>` and passes to ShardingAttr::parse. Ops whose syntax puts
/// a type after a sharding (`dt.constrain %x to #dt.sharding<...> : T`) use it
/// to get that type back. Anywhere else a trailing type is an error, since a
/// sharding has no type of its own.
class ShardingTypeCapture {
public:
  ShardingTypeCapture();
  ~ShardingTypeCapture();
  ShardingTypeCapture(const ShardingTypeCapture &) = delete;
  ShardingTypeCapture &operator=(const ShardingTypeCapture &) = delete;

  /// The captured type; null when none followed the attribute.
  Type getType() const { return type; }
  /// Called by ShardingAttr::parse; false when no capture is active.
  static bool capture(Type type);

private:
  Type type;
  ShardingTypeCapture *previous;
};
} // namespace mlir::dt

#define GET_ATTRDEF_CLASSES
#include "dt/Dialect/DT/IR/DTAttrs.h.inc"

namespace mlir::dt {

/// The dt sharding carried by `type` as its encoding, or null.
ShardingAttr getShardingEncoding(Type type);

/// `type` with its encoding replaced by `sharding` (dropped when null).
RankedTensorType withSharding(RankedTensorType type, ShardingAttr sharding);

/// The element types of the input language: f32, f16, bf16, f64, i32, i64
/// and i1.
bool isSupportedElementType(Type type);

/// Checks `sharding` against a tensor of `shape` and `elementType`: static
/// shape, each S(d) within the rank, partials meaningful for the element type.
LogicalResult verifyShardingForTensor(ShardingAttr sharding,
                                      ArrayRef<int64_t> shape, Type elementType,
                                      function_ref<InFlightDiagnostic()> emitError);

} // namespace mlir::dt

#endif // DT_DIALECT_DT_IR_DTATTRS_H
