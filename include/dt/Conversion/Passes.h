//===- Passes.h - dt conversion passes --------------------------*- C++ -*-===//
//
// The road from the local SPMD program (and the plain reference program) to
// the LLVM dialect, for the CPU and CUDA targets. The helpers the passes
// share are in Utils.h (both targets) and GPUUtils.h (CUDA); each pass
// includes the dialects it works on, so this header stays light.
//
//===----------------------------------------------------------------------===//

#ifndef DT_CONVERSION_PASSES_H
#define DT_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir {
class DialectRegistry;
namespace dt {

#define GEN_PASS_DECL
#include "dt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dt/Conversion/Passes.h.inc"

/// Bufferization models of the local-form collectives: each reads its input
/// and writes a fresh buffer through a call of the runtime.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

/// What the lowerings of both targets share.
struct LoweringOptions {
  /// A combined collective's members made in its buffer
  /// (dt-fill-buckets-in-place).
  bool fillBucketsInPlace = true;
  /// A remark at each convolution and convolution adjoint: the matmul it
  /// became, or why it stays loops (dt-compile --explain).
  bool explain = false;
};

/// What `dt-lower-to-cpu` makes besides the code.
struct CPUTargetOptions : LoweringOptions {
  /// Each loop nest and matmul timed for dt-run --profile.
  bool timeKernels = false;
  /// Every bf16 and f16 operation's result rounded to its type, as PyTorch
  /// eager rounds, not once where a fused kernel stores it
  /// (dt-compile --round-each-half-op; no dt-elide-half-roundings).
  bool roundEachHalfOp = false;
};

/// `dt-lower-to-cpu`: local program on tensors -> LLVM dialect, with entry
/// points named `<entryPrefix><function>`. Needs the upstream passes
/// registered (registerAllDTPasses).
LogicalResult buildLowerToCPUPipeline(OpPassManager &pm, StringRef entryPrefix,
                                      const CPUTargetOptions &target = {});

/// What `dt-lower-to-cuda` compiles kernels for.
struct CUDATargetOptions : LoweringOptions {
  /// The SM the cubin is for (`sm_90`); PTX for it is embedded too.
  std::string arch = "sm_90";
  /// `fatbin` (cubin + PTX), `bin` (cubin) or `isa` (PTX text, for
  /// inspection).
  std::string format = "fatbin";
  int64_t blockSize = 256;
  /// Tests without a GPU: the same kernels, run as CPU loops
  /// (dt-emulate-gpu-on-cpu), matmuls through BLAS.
  bool emulateOnCPU = false;
  /// Cooperative reduction, row and split kernels whatever the sizes (what
  /// the emulation always makes): on a GPU, runs the kernels the emulation
  /// checked at the tests' small sizes.
  bool anySize = false;
};

/// `dt-lower-to-cuda`: local program on tensors -> LLVM dialect host code
/// with its kernels compiled into a `gpu.binary`. Entry points take device
/// buffers; matmuls call cuBLASLt and collectives the runtime.
LogicalResult buildLowerToCUDAPipeline(OpPassManager &pm, StringRef entryPrefix,
                                       const CUDATargetOptions &target);

/// Whether LLVM's NVPTX target knows the SM `arch` (sm_90, sm_100a, ...);
/// if not, `error` says which SMs it does know.
LogicalResult checkGPUArch(StringRef arch, std::string &error);

void registerDTConversionPipelines();

} // namespace dt
} // namespace mlir

#endif // DT_CONVERSION_PASSES_H
