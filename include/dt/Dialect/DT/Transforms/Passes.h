//===- Passes.h - dt transformation passes ----------------------*- C++ -*-===//

#ifndef DT_DIALECT_DT_TRANSFORMS_PASSES_H
#define DT_DIALECT_DT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::dt {

#define GEN_PASS_DECL
#include "dt/Dialect/DT/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dt/Dialect/DT/Transforms/Passes.h.inc"

/// The `dt-shard` pipeline: dt-propagate, dt-insert-redistribute, dt-check,
/// dt-lower-redistribute, CSE (shares identical collectives), dt-partition.
void buildShardPipeline(OpPassManager &pm, StringRef topologyFile = "");

/// Registers `dt-shard` with the pass registry.
void registerDTPipelines();

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_PASSES_H
