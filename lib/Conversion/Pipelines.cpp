//===- Pipelines.cpp - dt-lower-to-cpu and dt-lower-to-cuda ---------------===//
//
// Local program on tensors -> LLVM dialect, for each target. Both start the
// same way: 16-bit sums accumulate in f32; elementwise ops become linalg
// generics and fuse; one-shot bufferization (function boundaries included,
// results as out-params) gives every function the buffer signature the
// entry points need;
// ownership-based deallocation frees temporaries; matmuls call a library,
// which also takes their zero fills and bias/relu epilogues.
//
// CPU: everything else becomes loops that LLVM's vectorizer sees after
// translation (dt-compile runs LLVM at -O3).
//
// CUDA: buffers move to device memory, loops become kernels (one thread per
// point of each parallel loop nest), and upstream's NVVM pipeline compiles
// the kernels into a fatbin embedded in the host module.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::dt;

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTargetMC();

static constexpr const char *kNVPTXTriple = "nvptx64-nvidia-cuda";

namespace {
/// Both pipelines' `explain` option.
constexpr const char *kExplainDescription =
    "A remark at each convolution and convolution adjoint: the matmul it "
    "became, or why it stays loops; at each transpose a matmul reads "
    "through instead; at each contraction that stays loops, why; and, on "
    "the CPU, at each reduction split into lanes, the order it sums in";
struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  Option<std::string> entryPrefix{
      *this, "entry-prefix",
      llvm::cl::desc("Prefix of the entry points' names"),
      llvm::cl::init("dt_spmd_")};
  Option<bool> timeKernels{
      *this, "time-kernels",
      llvm::cl::desc("Time each loop nest and matmul for dt-run --profile "
                     "(dt-compile --profile-kernels)"),
      llvm::cl::init(false)};
  Option<bool> fillBucketsInPlace{
      *this, "fill-buckets-in-place",
      llvm::cl::desc("Let the ops that make a combined collective's members "
                     "write them into its buffer (dt-fill-buckets-in-place)"),
      llvm::cl::init(true)};
  Option<bool> explain{*this, "explain", llvm::cl::desc(kExplainDescription),
                       llvm::cl::init(false)};
  Option<bool> roundEachHalfOp{
      *this, "round-each-half-op",
      llvm::cl::desc("Round every bf16 and f16 operation's result to its "
                     "type, as PyTorch eager does, not once where a fused "
                     "kernel stores it (dt-compile --round-each-half-op)"),
      llvm::cl::init(false)};
};
struct LowerToCUDAOptions : public PassPipelineOptions<LowerToCUDAOptions> {
  Option<std::string> entryPrefix{
      *this, "entry-prefix",
      llvm::cl::desc("Prefix of the entry points' names"),
      llvm::cl::init("dt_spmd_")};
  Option<std::string> gpuArch{*this, "gpu-arch",
                              llvm::cl::desc("SM to compile kernels for"),
                              llvm::cl::init("sm_90")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary: fatbin (cubin + PTX), bin or isa (PTX)"),
      llvm::cl::init("fatbin")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};
  Option<bool> anySize{
      *this, "any-size",
      llvm::cl::desc("Cooperative reduction, row and split kernels whatever "
                     "the sizes (dt-gpu-reduction-kernels{any-size})"),
      llvm::cl::init(false)};
  Option<bool> explain{*this, "explain", llvm::cl::desc(kExplainDescription),
                       llvm::cl::init(false)};
};
} // namespace

/// The part both targets share: tensors -> buffers with out-params (a
/// bucket's members made in it, `fillBucketsInPlace`), freed by ownership,
/// matmuls as library calls (reading transposed operands in place), and
/// the C entry points; with `explain`, a remark at each convolution and at
/// each transpose a matmul reads through. On a GPU (`gpu`, emulated or not)
/// an NCHW convolution stays one library call, not one per image, a large
/// one is made whole, not in chunks of images, and a transpose feeding a
/// matrix-vector product (a kernel there) stays. With `elideRoundings`
/// (the CPU's, unless every 16-bit operation is to round), the roundings
/// the program writes are marked for cpuTail's dt-elide-half-roundings.
static std::string bufferizationPipeline(StringRef entryPrefix,
                                         StringRef matmulLibrary,
                                         const LoweringOptions &options,
                                         bool gpu, bool elideRoundings) {
  // Upstream passes are named by their textual form, which is their stable
  // interface across LLVM releases. Tables of values fewer loops need are
  // made on the CPU (on a GPU each would be one more kernel; not measured).
  std::string hoist = gpu ? ""
                          : (llvm::Twine("dt-hoist-invariant-math") +
                             (options.explain ? "{explain=1}" : "") + ",")
                                .str();
  return (llvm::Twine("dt-convolutions-to-matmuls{per-image=") +
          (gpu ? "0 col-chunk-bytes=0" : "1") +
          (options.explain ? " explain=1" : "") + "}" +
          ",func.func(convert-elementwise-to-linalg),dt-generalize-"
          "elementwise," +
          (elideRoundings ? "dt-mark-half-roundings," : "") +
          "dt-widen-half-sums" + (gpu ? "" : "{extrema=1}") +
          ",dt-guard-integer-division,"
          "func.func(dt-fuse-elementwise," +
          hoist +
          "canonicalize),"
          "dt-fold-transposes-into-matmuls{vectors=" +
          (gpu ? "0" : "1") + (options.explain ? " explain=1" : "") + "}" +
          ",dt-unshare-fills,dt-read-only-arguments,"
          "one-shot-bufferize{bufferize-function-boundaries "
          "allow-return-allocs-from-loops "
          "function-boundary-type-conversion=identity-layout-map},"
          "dt-distinct-result-buffers,"
          "buffer-results-to-out-params{hoist-static-allocs "
          "modify-public-functions}," +
          (options.fillBucketsInPlace ? "dt-fill-buckets-in-place," : "") +
          // buffer-deallocation-pipeline, with deallocs of several buffers
          // lowered without upstream's helper, whose bookkeeping buffers
          // would be device memory on the CUDA target.
          "expand-realloc{emit-deallocs=false},canonicalize,"
          "ownership-based-buffer-deallocation,canonicalize,"
          "dt-split-deallocations,buffer-deallocation-simplification,dt-lower-"
          "deallocations,"
          "bufferization-lower-deallocations,cse,canonicalize,"
          "dt-convert-matmul-to-blas{library=" +
          matmulLibrary + (options.explain ? " explain=1" : "") +
          "},dt-emit-entry-points{prefix=" + entryPrefix + "}")
      .str();
}

/// The CPU tail's loops and LLVM lowering, after bf16 arithmetic is f32
/// (cpuTail).
static constexpr const char *kCPUTailLoops =
    "dt-expand-bf16-conversions,"
    "dt-vectorize-transposes,dt-transpose-loop-order,"
    "func.func(convert-linalg-to-loops),"
    "dt-keep-row-loops,"
    "convert-scf-to-cf,"
    "expand-strided-metadata,lower-affine,convert-vector-to-llvm,"
    "finalize-memref-to-llvm{use-aligned-alloc use-generic-functions},"
    "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,"
    "convert-complex-to-llvm,"
    "convert-index-to-llvm,convert-cf-to-llvm,dt-separate-entry-blocks,"
    "convert-func-to-llvm,dt-kernel-tasks,"
    "dt-kernel-noalias,reconcile-unrealized-casts,dt-descriptor-slots";

/// Buffers and loops -> LLVM dialect on the CPU. Buffers are allocated
/// through MLIR's generic functions, which the runtime defines with a cache
/// for large blocks (runtime/lib/HostMemory.cpp).
/// (dt-outline-kernels comes first, with `{time=1}` when the kernels are
/// timed.) bf16 arithmetic and math are computed in f32, as LLVM would
/// promote them, and every rounding to bf16 is integer arithmetic
/// (dt-expand-bf16-conversions): without AVX512-BF16, LLVM would call a
/// compiler-runtime helper that Debian 12's libgcc lacks. On the CPU target
/// (`elideRoundings`), f16 arithmetic is computed in f32 too, and a
/// kernel's 16-bit intermediate values stay in f32 (dt-elide-half-
/// roundings). The emulated GPU rounds each, as the GPU does: its f16
/// arithmetic stays f16 for LLVM to promote and round, since upstream's
/// fold of `extf(truncf(x))` between the emulation's own conversions
/// (both `contract`) would elide an emulated f16 rounding.
static std::string cpuTail(bool elideRoundings) {
  return std::string(
             ",convert-complex-to-standard,dt-lower-bounds-checks,"
             "dt-approximate-math,"
             "math-extend-to-supported-types{extra-types=f16 target-type=f32},"
             "arith-emulate-unsupported-floats{source-types=") +
         (elideRoundings ? "bf16,f16" : "bf16") + " target-type=f32}," +
         (elideRoundings ? "dt-elide-half-roundings," : "") + kCPUTailLoops;
}

LogicalResult
mlir::dt::buildLowerToCPUPipeline(OpPassManager &pm, StringRef entryPrefix,
                                  const CPUTargetOptions &target) {
  pm.addPass(createLowerAxisIndexPass());
  pm.addPass(createWidenPredicateCollectivesPass());
  pm.addPass(createDecomposeAggregatesPass());
  bool elideRoundings = !target.roundEachHalfOp;
  std::string pipeline =
      bufferizationPipeline(entryPrefix, "blas", target, /*gpu=*/false,
                            elideRoundings) +
      ",dt-split-reductions" + (target.explain ? "{explain=1}" : "") +
      ",dt-free-after-last-use,dt-outline-kernels" +
      (target.timeKernels ? "{time=1}" : "") + ",dt-parallel-kernels" +
      (target.explain ? "{explain=1}" : "") + cpuTail(elideRoundings);
  return parsePassPipeline(pipeline, pm);
}

LogicalResult mlir::dt::checkGPUArch(StringRef arch, std::string &error) {
  static const llvm::Target *nvptx = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    std::string ignored;
    return llvm::TargetRegistry::lookupTarget(llvm::Triple(kNVPTXTriple),
                                              ignored);
  }();
  if (!nvptx) {
    error = "this LLVM has no NVPTX target";
    return failure();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      nvptx->createMCSubtargetInfo(llvm::Triple(kNVPTXTriple), "", ""));
  if (subtarget->isCPUStringValid(arch))
    return success();
  std::vector<std::string> known;
  for (const llvm::SubtargetSubTypeKV &processor :
       subtarget->getAllProcessorDescriptions())
    known.push_back(processor.Key);
  error = "LLVM's NVPTX target knows " + llvm::join(known, ", ");
  return failure();
}

LogicalResult
mlir::dt::buildLowerToCUDAPipeline(OpPassManager &pm, StringRef entryPrefix,
                                   const CUDATargetOptions &target) {
  pm.addPass(createLowerAxisIndexPass());
  pm.addPass(createWidenPredicateCollectivesPass());
  pm.addPass(createDecomposeAggregatesPass());
  // The CPU emulation runs the GPU's kernels on small programs: row
  // kernels and splits at any size (and so does a GPU build with anySize,
  // to run those kernels on a GPU).
  std::string kernels = std::string(",dt-memory-to-gpu,dt-overlap-collectives,"
                                    "dt-gpu-reduction-kernels{any-size=") +
                        (target.emulateOnCPU || target.anySize ? "1" : "0") +
                        "},"
                        "func.func(convert-linalg-to-parallel-loops),"
                        "dt-launch-parallel-loops{block-size=" +
                        std::to_string(target.blockSize) +
                        "},dt-pack-device-buffers";
  if (target.emulateOnCPU)
    return parsePassPipeline(
        bufferizationPipeline(entryPrefix, "blas", target, /*gpu=*/true,
                              /*elideRoundings=*/false) +
            kernels + ",dt-emulate-gpu-on-cpu,dt-outline-kernels" +
            cpuTail(/*elideRoundings=*/false),
        pm);
  // dt-compile checks --gpu-arch before it builds this; a pipeline option
  // has no other way to fail (LLVM would abort in instruction selection).
  std::string error;
  if (failed(checkGPUArch(target.arch, error)))
    llvm::report_fatal_error("gpu-arch=" + llvm::Twine(target.arch) +
                                 " is not an SM that LLVM knows (" + error +
                                 ")",
                             /*gen_crash_diag=*/false);
  // No cubin-features: LLVM then targets the first PTX ISA that has the SM
  // (upstream's NVVM target would otherwise ask for PTX 6.0, older than any
  // SM dt compiles for).
  std::string pipeline =
      bufferizationPipeline(entryPrefix, "cublaslt", target, /*gpu=*/true,
                            /*elideRoundings=*/false) +
      kernels +
      ",convert-complex-to-standard,canonicalize,"
      "gpu-launch-sink-index-computations,gpu-kernel-outlining,"
      "dt-merge-gpu-modules,dt-lower-bounds-checks,"
      "gpu-lower-to-nvvm-pipeline{cubin-chip=" +
      target.arch + " cubin-features=\"\" cubin-format=" + target.format +
      " opt-level=3}";
  return parsePassPipeline(pipeline, pm);
}

void mlir::dt::registerDTConversionPipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "dt-lower-to-cpu",
      "Local SPMD program (or plain program) on tensors -> LLVM dialect with "
      "C entry points, for the CPU target",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        CPUTargetOptions target;
        target.timeKernels = options.timeKernels;
        target.fillBucketsInPlace = options.fillBucketsInPlace;
        target.explain = options.explain;
        target.roundEachHalfOp = options.roundEachHalfOp;
        (void)buildLowerToCPUPipeline(pm, options.entryPrefix, target);
      });
  PassPipelineRegistration<LowerToCUDAOptions>(
      "dt-lower-to-cuda",
      "Local SPMD program (or plain program) on tensors -> LLVM dialect host "
      "code with embedded CUDA kernels, cuBLASLt matmuls and runtime "
      "collectives on device buffers",
      [](OpPassManager &pm, const LowerToCUDAOptions &options) {
        CUDATargetOptions target;
        target.arch = options.gpuArch;
        target.format = options.format;
        target.blockSize = options.blockSize;
        target.anySize = options.anySize;
        target.explain = options.explain;
        (void)buildLowerToCUDAPipeline(pm, options.entryPrefix, target);
      });
}
