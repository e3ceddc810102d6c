//===- DTInterfaces.h - dt op interfaces ------------------------*- C++ -*-===//

#ifndef DT_DIALECT_DT_IR_DTINTERFACES_H
#define DT_DIALECT_DT_IR_DTINTERFACES_H

#include "dt/Dialect/DT/IR/ShardingRule.h"

#include "mlir/IR/OpDefinition.h"

#include "dt/Dialect/DT/IR/DTInterfaces.h.inc"

namespace mlir {
class DialectRegistry;
namespace dt {
/// Attaches ShardingRuleOpInterface to the upstream ops of dt's input
/// language: linalg structured ops and softmax, arith and math ops on
/// tensors, tensor.empty/expand_shape/collapse_shape/extract_slice/
/// insert_slice/concat/pad, arith.constant.
void registerShardingRuleModels(DialectRegistry &registry);
} // namespace dt
} // namespace mlir

#endif // DT_DIALECT_DT_IR_DTINTERFACES_H
