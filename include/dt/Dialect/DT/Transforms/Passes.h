//===- Passes.h - dt transformation passes ----------------------*- C++ -*-===//
//
// Each pass includes the dialects it works on, so this header stays light.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_TRANSFORMS_PASSES_H
#define DT_DIALECT_DT_TRANSFORMS_PASSES_H

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/PlanSearch.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::dt {

#define GEN_PASS_DECL
#include "dt/Dialect/DT/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dt/Dialect/DT/Transforms/Passes.h.inc"

/// The `dt-shard` pipeline: dt-propagate, dt-insert-redistribute, dt-check,
/// dt-lower-redistribute, CSE (shares identical collectives), dt-partition,
/// dt-widen-partial-sums, dt-combine-collectives.
/// `exchange`: whether plans may use dt.exchange; `search`: the most plans
/// dt-propagate's plan search prices (0: none).
void buildShardPipeline(OpPassManager &pm, StringRef topologyFile = "",
                        bool exchange = true,
                        unsigned search = kDefaultPlanSearch);

/// Partitions one function over `mesh` (what dt-partition does to each).
LogicalResult partitionFunction(func::FuncOp func, MeshOp mesh,
                                bool explain = false);

/// Whether `type` (or its element type) is a float narrower than f64: what
/// dt-widen-to-f64 spells in f64.
bool isNarrowerThanF64(Type type);

/// Registers `dt-shard` with the pass registry.
void registerDTPipelines();

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_PASSES_H
