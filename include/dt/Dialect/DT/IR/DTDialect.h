//===- DTDialect.h - The dt dialect -----------------------------*- C++ -*-===//

#ifndef DT_DIALECT_DT_IR_DTDIALECT_H
#define DT_DIALECT_DT_IR_DTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dt/Dialect/DT/IR/DTDialect.h.inc"

namespace mlir {
class DialectRegistry;
namespace dt {

/// Registers the dt dialect and the interfaces it attaches to upstream ops
/// (the module-level checks of shardings inside `func.func`).
void registerDTDialect(DialectRegistry &registry);

} // namespace dt
} // namespace mlir

#endif // DT_DIALECT_DT_IR_DTDIALECT_H
