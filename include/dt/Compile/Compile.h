//===- Compile.h - From an annotated program to an artifact -*- C++ -*-===//
//
// What dt-compile does, as a library: the global annotated program becomes
// one LLVM module holding the SPMD entries (dt-shard, then dt-lower-to-cpu or
// dt-lower-to-cuda), the reference entries (dt-strip-shardings, then the same
// lowering), on request the f64 reference entries (dt-widen-to-f64, then
// dt-lower-to-cpu), and the program description the runtime reads
// (docs/Runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef DT_COMPILE_COMPILE_H
#define DT_COMPILE_COMPILE_H

#include "dt/Dialect/DT/Transforms/PlanSearch.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace mlir::dt {

enum class Target { CPU, CUDA };

struct CompileOptions {
  Target target = Target::CPU;
  /// CUDA: the SM kernels are compiled for (PTX for it is embedded too).
  std::string gpuArch = "sm_90";
  /// CUDA: run the kernels as CPU loops instead (a CPU artifact that tests
  /// the CUDA lowering where there is no GPU).
  bool emulateGPU = false;
  /// CUDA: cooperative reduction kernels whatever the sizes, as the
  /// emulation makes them (for testing those kernels on a GPU).
  bool gpuKernelsAnySize = false;
  /// Check every index the program computes from data against its tensor
  /// (dt-insert-bounds-checks); an index outside fails the run.
  bool boundsChecks = true;
  /// Also lower the program spelled in f64 (dt-widen-to-f64), entries
  /// `dt_wide_<name>`, by which dt-run --verify judges a result beyond its
  /// dtype's tolerance. CPU code, so the CPU target only (or --emulate-gpu).
  bool wideReference = false;
  /// Reduce a split matmul's partial product in f32 as well, not only the
  /// other 16-bit sums (dt-widen-partial-sums{matmuls}).
  bool reduceMatmulsInF32 = false;
  /// CPU: round every bf16 and f16 operation's result to its type, as
  /// PyTorch eager does, not once where a fused kernel stores it (both
  /// programs, so that --verify compares like with like).
  bool roundEachHalfOp = false;
  /// Combine collectives of one group where the cost model says it is
  /// cheaper (dt-combine-collectives).
  bool combineCollectives = true;
  /// Let the ops that make a combined collective's members write them into
  /// its buffer (dt-fill-buckets-in-place).
  bool fillBucketsInPlace = true;
  /// Let redistributions change layouts point to point (dt.exchange) where
  /// that moves less.
  bool exchange = true;
  /// The most whole plans dt-propagate's plan search prices (0: none).
  unsigned planSearch = kDefaultPlanSearch;
  /// Topology file for the cost model (empty: the documented defaults).
  std::string topology;
  /// Say why: a remark per op's sharding choice (dt-propagate=explain), per
  /// redistribution's plan (dt-lower-redistribute=explain), per collective
  /// of a 16-bit sum's parts in f32 (dt-widen-partial-sums=explain) and per
  /// combined call or collective kept apart (dt-combine-collectives=explain),
  /// and the cost report of the global program on stdout.
  bool explain = false;
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 3;
  /// Target CPU: "native" for this machine, or an LLVM CPU name.
  std::string cpu = "native";
  /// Time each loop nest and matmul of the SPMD program for dt-run --profile
  /// (CPU target; two runtime calls around each).
  bool profileKernels = false;
  /// Threads that generate machine code, each for a part of the module's
  /// functions (0: one per hardware thread).
  unsigned jobs = 0;
  /// Where the phases and passes are timed (dt-compile --mlir-timing); none
  /// when null.
  mlir::TimingScope *timing = nullptr;
};

/// The program description of `module` (global, annotated, after
/// propagation): one block per public function. Fails with a diagnostic on
/// an entry the runtime cannot feed.
/// `target` is written in the description: the runtime needs to know
/// whether the entries take host or device buffers.
FailureOr<std::string> describeProgram(ModuleOp module,
                                       Target target = Target::CPU);

/// The SPMD program lowered to the LLVM dialect, entries `dt_spmd_<name>`,
/// and the description computed on the way. `module` is not modified.
FailureOr<OwningOpRef<ModuleOp>>
lowerSPMDProgram(ModuleOp module, const CompileOptions &options,
                 std::string &description);

/// The single-device program lowered to the LLVM dialect, entries
/// `dt_ref_<name>`. `module` is not modified.
FailureOr<OwningOpRef<ModuleOp>>
lowerReferenceProgram(ModuleOp module, const CompileOptions &options);

/// The single-device program spelled in f64 and lowered for the CPU,
/// entries `dt_wide_<name>`. `module` is not modified.
FailureOr<OwningOpRef<ModuleOp>>
lowerWideReferenceProgram(ModuleOp module, const CompileOptions &options);

/// The host's target machine, for `options.cpu`; null and `error` set when
/// LLVM has no such target.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CompileOptions &options, std::string &error);

/// Both programs and the description as one LLVM module, not optimized.
FailureOr<std::unique_ptr<llvm::Module>>
translateToLLVM(ModuleOp module, llvm::LLVMContext &llvmContext,
                llvm::TargetMachine &targetMachine,
                const CompileOptions &options);

/// Runs LLVM's -O`optLevel` pipeline on `llvmModule`, then moves bf16
/// values as their bits (moveBF16AsBits); false and `error` set when it
/// fails.
bool optimizeLLVM(llvm::Module &llvmModule, llvm::TargetMachine &targetMachine,
                  unsigned optLevel, std::string &error);

/// translateToLLVM, then optimizeLLVM on the whole module.
FailureOr<std::unique_ptr<llvm::Module>>
compileToLLVM(ModuleOp module, llvm::LLVMContext &llvmContext,
              llvm::TargetMachine &targetMachine,
              const CompileOptions &options);

/// Writes `llvmModule` (from translateToLLVM, not optimized) as a shared
/// object at `path`. Split into `options.jobs` parts when it has enough
/// functions (its local symbols become hidden ones), each part is optimized
/// and made machine code for the target `options` name on a thread of its
/// own; the object files are linked by the system `cc` into a temporary file
/// renamed at the end, so `path` is either the old file or the new one. (A
/// part optimized alone inlines nothing from another: the kernels are
/// never inlined, and the rest only calls them.)
LogicalResult writeSharedObject(llvm::Module &llvmModule,
                                const CompileOptions &options, StringRef path,
                                std::string &error);

} // namespace mlir::dt

#endif // DT_COMPILE_COMPILE_H
