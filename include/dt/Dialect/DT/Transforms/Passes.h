//===- Passes.h - dt transformation passes ----------------------*- C++ -*-===//

#ifndef DT_DIALECT_DT_TRANSFORMS_PASSES_H
#define DT_DIALECT_DT_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dt {

#define GEN_PASS_DECL
#include "dt/Dialect/DT/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dt/Dialect/DT/Transforms/Passes.h.inc"

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_PASSES_H
