//===- DT.td - The dt dialect, all definitions -------------*- tablegen -*-===//

#ifndef DT_DIALECT_DT_IR_DT_TD
#define DT_DIALECT_DT_IR_DT_TD

include "dt/Dialect/DT/IR/DTDialect.td"
include "dt/Dialect/DT/IR/DTAttrs.td"
include "dt/Dialect/DT/IR/DTOps.td"

#endif // DT_DIALECT_DT_IR_DT_TD
