//===- MemoryToGPU.cpp - dt-memory-to-gpu ---------------------------------===//
//
// Every buffer of a CUDA program is device memory. Allocations and frees go
// through the gpu dialect (the runtime serves them from the rank stream's
// pool), contiguous copies become DMA copies, strided ones kernels, and
// constants are copied in from the host where they are used.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/GPUUtils.h"
#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_MEMORYTOGPUPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

Value mlir::dt::rankStreamToken(OpBuilder &b, Location loc) {
  Type token = gpu::AsyncTokenType::get(b.getContext());
  return gpu::WaitOp::create(b, loc, token, ValueRange()).getAsyncToken();
}

/// The launch of createRankLaunch, with `one` for the unit dims.
static gpu::LaunchOp buildRankLaunch(OpBuilder &b, Location loc, Value blocks,
                                     Value threads, Value one) {
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, one, one, threads, one, one,
      /*dynamicSharedMemorySize=*/nullptr,
      gpu::AsyncTokenType::get(b.getContext()), rankStreamToken(b, loc));
  OpBuilder inner = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(inner, loc);
  return launch;
}

gpu::LaunchOp mlir::dt::createRankLaunch(OpBuilder &b, Location loc,
                                         Value blocks, Value threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  return buildRankLaunch(b, loc, blocks, threads, one);
}

void mlir::dt::runAsOneThread(Operation *op) {
  OpBuilder b(op);
  Value one = arith::ConstantIndexOp::create(b, op->getLoc(), 1);
  gpu::LaunchOp launch = buildRankLaunch(b, op->getLoc(), one, one, one);
  op->moveBefore(launch.getBody().front().getTerminator());
}

namespace {
bool isContiguous(MemRefType type) {
  return type.hasStaticShape() && type.getLayout().isIdentity();
}

struct MemoryToGPUPass
    : public mlir::dt::impl::MemoryToGPUPassBase<MemoryToGPUPass> {
  void runOnOperation() override {
    // A linalg op with no loops (0-d buffers) would become bare host loads
    // and stores: it runs as one GPU thread instead.
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumLoops() != 0 || op->getParentOfType<gpu::LaunchOp>() ||
          !op.hasPureBufferSemantics())
        return;
      runAsOneThread(op);
    });

    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp,
              memref::GetGlobalOp>(op) &&
          !op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    Type token = gpu::AsyncTokenType::get(&getContext());
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto device = gpu::AllocOp::create(
            b, loc, alloc.getType(), token, rankStreamToken(b, loc),
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        alloc.replaceAllUsesWith(device.getMemref());
        alloc.erase();
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(b, loc, token, rankStreamToken(b, loc),
                               dealloc.getMemref());
        dealloc.erase();
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        auto source = cast<MemRefType>(copy.getSource().getType());
        auto target = cast<MemRefType>(copy.getTarget().getType());
        if (isContiguous(source) && isContiguous(target))
          gpu::MemcpyOp::create(b, loc, token, rankStreamToken(b, loc),
                                copy.getTarget(), copy.getSource());
        else
          linalg::CopyOp::create(b, loc, copy.getSource(), copy.getTarget());
        copy.erase();
      } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
        // The constant's host copy feeds a device copy made here and freed
        // at the end of the block.
        b.setInsertionPointAfter(global);
        auto device = gpu::AllocOp::create(b, loc, global.getType(), token,
                                           rankStreamToken(b, loc),
                                           ValueRange(), ValueRange(), false);
        global.getResult().replaceAllUsesWith(device.getMemref());
        gpu::MemcpyOp::create(b, loc, token, rankStreamToken(b, loc),
                              device.getMemref(), global.getResult());
        b.setInsertionPoint(global->getBlock()->getTerminator());
        gpu::DeallocOp::create(b, loc, token, rankStreamToken(b, loc),
                               device.getMemref());
      }
    }
  }
};
} // namespace
