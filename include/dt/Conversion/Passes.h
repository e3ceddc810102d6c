//===- Passes.h - dt conversion passes --------------------------*- C++ -*-===//
//
// The road from the local SPMD program (and the plain reference program) to
// the LLVM dialect, for the CPU and CUDA targets.
//
//===----------------------------------------------------------------------===//

#ifndef DT_CONVERSION_PASSES_H
#define DT_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <optional>

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

/// The suffix that names a runtime function for `type` (`f32`, `bf16`, ...),
/// or nothing when the runtime has no such element type.
std::optional<StringRef> runtimeTypeSuffix(Type type);

/// The declaration of runtime function `name` in `module`, inserted when
/// missing.
func::FuncOp getOrInsertRuntimeFunction(ModuleOp module, StringRef name,
                                        FunctionType type);

/// The address of a NUL-terminated constant global holding `text`, at `b`'s
/// insertion point: one internal `llvm.mlir.global` per distinct text in
/// `module`, named `dt_message_N`. What the runtime reports (a bounds
/// check's tensor access, a collective's site) is passed this way.
Value getOrInsertMessage(OpBuilder &b, ModuleOp module, StringRef text,
                         Location loc);
/// Whether `module` holds a message (getOrInsertMessage) with `text`.
bool hasMessage(ModuleOp module, StringRef text);

/// "file:line:col" of the first file location in `loc`, or "" when it names
/// no file.
std::string sourceLocation(Location loc);

/// The buffer `value` views: its source through casts and other views (an
/// allocation, a function argument, a global).
Value bufferRoot(Value value);

/// Adds the buffer `value` views (bufferRoot) and every view of it,
/// transitively, to `aliases`.
void addBufferViews(Value value, llvm::SmallPtrSetImpl<Value> &aliases);

/// Whether `op` or an op nested in it uses one of `aliases`.
bool touchesAny(Operation *op, const llvm::SmallPtrSetImpl<Value> &aliases);

/// Whether `op` may read or write one of `aliases`: it has memory effects
/// and uses one of them.
bool mayAccessAny(Operation *op, const llvm::SmallPtrSetImpl<Value> &aliases);

/// A temporary of a block: allocated in the block, freed once there, with
/// the positions in the block of the first and the last op that touches it
/// through any view.
struct BlockTemporary {
  Operation *alloc, *free;
  int64_t first, last;
};

/// `buffer`, the result of `alloc` in `block`, as a temporary (`at`: each
/// op's position in `block`): a static shape of whole-byte elements with an
/// identity layout, freed by exactly one op of `block` for which `isFree`
/// holds (on `buffer` itself), every other use in `block` and none that
/// lets the buffer escape its views (a terminator, or an op making another
/// buffer value that is not a view). `doneAt` maps an op that touches it to
/// the op of the block up to which the buffer stays in use (itself, unless
/// the work it starts finishes later).
std::optional<BlockTemporary>
blockTemporary(Operation *alloc, TypedValue<MemRefType> buffer, Block &block,
               const DenseMap<Operation *, int64_t> &at,
               llvm::function_ref<bool(Operation *)> isFree,
               llvm::function_ref<Operation *(Operation *)> doneAt);

/// The `linalg.fill` of exactly `buffer` that is the last op of `op`'s block
/// before `op` to touch `buffer` (or a view of it), if there is one: what
/// `buffer` holds when `op` runs. A 0-d fill that dt-memory-to-gpu runs as
/// a one-thread launch counts (the launch is the op in the block).
linalg::FillOp lastFillBefore(Operation *op, Value buffer);

/// Erases a fill lastFillBefore found, with its one-thread launch if it
/// has one.
void eraseFill(linalg::FillOp fill);

/// `dt-lower-to-cpu`: local program on tensors -> LLVM dialect, with entry
/// points named `<entryPrefix><function>`. Needs the upstream passes
/// registered (registerAllDTPasses).
LogicalResult buildLowerToCPUPipeline(OpPassManager &pm, StringRef entryPrefix);

/// A token of the calling rank's stream, for one asynchronous gpu op: a
/// fresh `gpu.wait async`, which becomes `mgpuStreamCreate()`, and the
/// runtime answers that with the rank's stream (docs/Runtime.md, "CUDA").
/// Every gpu op of a program goes to that one in-order stream, so the
/// program's order is the device's order and the host never waits.
Value rankStreamToken(OpBuilder &b, Location loc);

/// An asynchronous launch of `blocks` x `threads` (x only; y and z are 1)
/// on the rank's stream, with an empty body ending in gpu.terminator.
gpu::LaunchOp createRankLaunch(OpBuilder &b, Location loc, Value blocks,
                               Value threads);

/// Moves `op` into a launch of one block of one thread, built where `op` was.
void runAsOneThread(Operation *op);

/// The runtime calls of dt-overlap-collectives' brackets.
inline constexpr llvm::StringLiteral kCollectivesBegin =
    "dt_rt_gpu_collectives_begin";
inline constexpr llvm::StringLiteral kCollectivesEnd =
    "dt_rt_gpu_collectives_end";
inline constexpr llvm::StringLiteral kCollectivesWait =
    "dt_rt_gpu_collectives_wait";

/// The runtime call by which the host reads a scalar of device memory:
/// `dt_rt_gpu_read_scalar(host, device)`, both memref<8xi8> cast to
/// unranked; it copies the bytes once the rank's stream has reached it.
inline constexpr llvm::StringLiteral kReadScalar = "dt_rt_gpu_read_scalar";
inline constexpr int64_t kScalarReadBytes = 8;

/// A collective dt-overlap-collectives bracketed: `begin; collective; %h =
/// end` where it is issued (it runs on the communication stream), and
/// `wait(%h)` where the rank's stream needs it.
struct CollectiveBracket {
  func::CallOp begin, collective, end, wait;
};

/// The bracket around `end`, a call of kCollectivesEnd: the two calls
/// before it and the first wait on its handle in its block; a member is
/// null where the IR is not so.
CollectiveBracket bracketOf(func::CallOp end);

/// The coordinates of `linear` over `extents` (index values), the last
/// fastest: how a flattened thread index becomes loop indices.
SmallVector<Value> delinearizeIndex(OpBuilder &b, Location loc, Value linear,
                                    ArrayRef<Value> extents);

/// What `dt-lower-to-cuda` compiles kernels for.
struct CUDATargetOptions {
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
