//===- Pipelines.cpp - dt pass pipelines ----------------------------------===//

#include "dt/Dialect/DT/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dt;

namespace {
struct ShardPipelineOptions
    : public PassPipelineOptions<ShardPipelineOptions> {
  Option<std::string> topology{
      *this, "topology",
      llvm::cl::desc("File describing the links of mesh axes (docs/Design.md)"),
      llvm::cl::init("")};
};
} // namespace

void mlir::dt::buildShardPipeline(OpPassManager &pm,
                                  StringRef topologyFile) {
  pm.addPass(createPropagatePass({topologyFile.str()}));
  pm.addPass(createInsertRedistributePass({topologyFile.str()}));
  // The proof runs last, on what the pipeline produced.
  pm.addPass(createCheckPass());
}

void mlir::dt::registerDTPipelines() {
  PassPipelineRegistration<ShardPipelineOptions>(
      "dt-shard",
      "Global annotated program -> every sharding decided, every change "
      "explicit, proven sound (propagate, insert-redistribute, check)",
      [](OpPassManager &pm, const ShardPipelineOptions &options) {
        buildShardPipeline(pm, options.topology);
      });
}
