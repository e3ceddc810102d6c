//===- LowerToCPU.cpp - dt-lower-to-cpu -----------------------------------===//
//
// Local program on tensors -> LLVM dialect. Elementwise ops become linalg
// generics and fuse; one-shot bufferization (function boundaries included,
// results as out-params) gives every function the buffer signature the
// entry points need; ownership-based deallocation frees temporaries;
// matmuls call BLAS; everything else becomes loops that LLVM's vectorizer
// sees after translation (dt-compile runs LLVM at -O3).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dt;

namespace {
struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  Option<std::string> entryPrefix{
      *this, "entry-prefix",
      llvm::cl::desc("Prefix of the entry points' names"),
      llvm::cl::init("dt_spmd_")};
};
} // namespace

LogicalResult mlir::dt::buildLowerToCPUPipeline(OpPassManager &pm,
                                       StringRef entryPrefix) {
  pm.addPass(createLowerAxisIndexPass());
  pm.addPass(createDecomposeAggregatesPass());
  // Upstream passes are named by their textual form, which is their stable
  // interface across LLVM releases.
  std::string pipeline =
      "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops,"
      "canonicalize),"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "dt-distinct-result-buffers,"
      "buffer-results-to-out-params{hoist-static-allocs "
      "modify-public-functions},"
      "buffer-deallocation-pipeline,"
      "dt-convert-matmul-to-blas,"
      "dt-emit-entry-points{prefix=" +
      entryPrefix.str() +
      "},"
      "func.func(convert-linalg-to-loops),convert-scf-to-cf,"
      "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
      "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "reconcile-unrealized-casts";
  return parsePassPipeline(pipeline, pm);
}

void mlir::dt::registerDTConversionPipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "dt-lower-to-cpu",
      "Local SPMD program (or plain program) on tensors -> LLVM dialect with "
      "C entry points, for the CPU target",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        (void)buildLowerToCPUPipeline(pm, options.entryPrefix);
      });
}
