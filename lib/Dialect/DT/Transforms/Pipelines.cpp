//===- Pipelines.cpp - dt pass pipelines ----------------------------------===//

#include "dt/Dialect/DT/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dt;

namespace {
struct ShardPipelineOptions
    : public PassPipelineOptions<ShardPipelineOptions> {
  Option<std::string> topology{
      *this, "topology",
      llvm::cl::desc("File describing the links of mesh axes (docs/Design.md)"),
      llvm::cl::init("")};
  Option<bool> exchange{
      *this, "exchange",
      llvm::cl::desc("Let plans change layouts point to point (dt.exchange)"),
      llvm::cl::init(true)};
  Option<unsigned> search{
      *this, "search",
      llvm::cl::desc("The most whole plans dt-propagate's plan search may "
                     "price (0: no search)"),
      llvm::cl::init(kDefaultPlanSearch)};
};
} // namespace

void mlir::dt::buildShardPipeline(OpPassManager &pm, StringRef topologyFile,
                                  bool exchange, unsigned search) {
  pm.addPass(createNormalizeTensorOpsPass());
  PropagatePassOptions propagate;
  propagate.topology = topologyFile.str();
  propagate.search = search;
  pm.addPass(createPropagatePass(propagate));
  pm.addPass(createInsertRedistributePass({topologyFile.str()}));
  // The proof runs on the program with every change of sharding explicit.
  pm.addPass(createCheckPass());
  pm.addPass(createLowerRedistributePass(
      {topologyFile.str(), /*explain=*/false, exchange}));
  // Identical collectives of one value (they are pure) become one.
  pm.addPass(createCSEPass());
  pm.addPass(createPartitionPass());
  pm.addPass(createWidenPartialSumsPass());
  pm.addPass(createCombineCollectivesPass({topologyFile.str()}));
}

void mlir::dt::registerDTPipelines() {
  PassPipelineRegistration<ShardPipelineOptions>(
      "dt-shard",
      "Global annotated program -> the SPMD program of one rank "
      "(normalize-tensor-ops, propagate, "
      "insert-redistribute, check, lower-redistribute, cse, partition, "
      "widen-partial-sums, "
      "combine-collectives)",
      [](OpPassManager &pm, const ShardPipelineOptions &options) {
        buildShardPipeline(pm, options.topology, options.exchange,
                           options.search);
      });
}
