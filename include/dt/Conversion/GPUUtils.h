//===- GPUUtils.h - Helpers shared by dt's CUDA passes ----------*- C++ -*-===//
//
// The rank's stream and launches on it, the brackets of the collectives
// that overlap compute, and the runtime calls they use.
//
//===----------------------------------------------------------------------===//

#ifndef DT_CONVERSION_GPUUTILS_H
#define DT_CONVERSION_GPUUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace gpu {
class LaunchOp;
} // namespace gpu
namespace dt {

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

} // namespace dt
} // namespace mlir

#endif // DT_CONVERSION_GPUUTILS_H
