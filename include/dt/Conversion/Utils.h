//===- Utils.h - Helpers shared by dt's lowering passes ---------*- C++ -*-===//
//
// Runtime functions and messages, and what the buffer passes ask of a
// buffer: its root, its views, who touches it, its last fill.
//
//===----------------------------------------------------------------------===//

#ifndef DT_CONVERSION_UTILS_H
#define DT_CONVERSION_UTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
namespace linalg {
class FillOp;
class LinalgOp;
} // namespace linalg
namespace dt {

/// The suffix that names a runtime function for `type` (`f32`, `bf16`, ...),
/// or nothing when the runtime has no such element type.
std::optional<StringRef> runtimeTypeSuffix(Type type);

/// The declaration of runtime function `name` in `module`, inserted when
/// missing.
func::FuncOp getOrInsertRuntimeFunction(ModuleOp module, StringRef name,
                                        FunctionType type);

/// Whether `op`, on tensors, is a matmul that dt-convert-matmul-to-blas
/// will give the library on either target once bufferized (with the
/// identity layouts bufferization gives tensors): its shape, element types
/// and operand orders. The library accumulates 16-bit ones in f32. With
/// `vectors` (the CPU's), also a product with no row or no column (a gemv).
bool isLibraryGemm(linalg::LinalgOp op, bool vectors = false);

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

/// Whether the buffer `value` views is an argument of a kernel that
/// dt-outline-kernels marked `dt.noalias`: a fresh buffer no other buffer
/// of the kernel overlaps where either is written.
bool isNoAliasKernelBuffer(Value value);

/// Adds the buffer `value` views (bufferRoot) and every view of it,
/// transitively, to `aliases`.
void addBufferViews(Value value, llvm::SmallPtrSetImpl<Value> &aliases);

/// Whether `op` or an op nested in it uses one of `aliases`.
bool touchesAny(Operation *op, const llvm::SmallPtrSetImpl<Value> &aliases);

/// Whether `op` may read or write one of `aliases`: it has memory effects
/// and uses one of them.
bool mayAccessAny(Operation *op, const llvm::SmallPtrSetImpl<Value> &aliases);

/// Whether a buffer of `type` can be placed anywhere by a pass that moves
/// or shares temporaries: a static shape with the identity layout, of
/// whole-byte integer or float elements, in the default memory space.
bool isPlainBufferType(MemRefType type);

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

} // namespace dt
} // namespace mlir

#endif // DT_CONVERSION_UTILS_H
