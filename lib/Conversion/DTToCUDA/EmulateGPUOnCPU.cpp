//===- EmulateGPUOnCPU.cpp - dt-emulate-gpu-on-cpu ------------------------===//
//
// The CUDA lowering's output, run on the CPU: launches become loops over
// blocks and threads, device memory becomes host memory. Valid for kernels
// without barriers or shared memory (each thread's work is independent),
// which is what dt-launch-parallel-loops makes.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dt {
#define GEN_PASS_DEF_EMULATEGPUONCPUPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct EmulateGPUOnCPUPass
    : public mlir::dt::impl::EmulateGPUOnCPUPassBase<EmulateGPUOnCPUPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch)))
        return signalPassFailure();

    SmallVector<Operation *> memoryOps;
    getOperation().walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
        memoryOps.push_back(op);
    });
    for (Operation *op : memoryOps) {
      OpBuilder b(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        Value host = memref::AllocOp::create(b, op->getLoc(), alloc.getType(),
                                             alloc.getDynamicSizes(),
                                             alloc.getSymbolOperands());
        alloc.getMemref().replaceAllUsesWith(host);
      } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
        memref::DeallocOp::create(b, op->getLoc(), dealloc.getMemref());
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        memref::CopyOp::create(b, op->getLoc(), copy.getSrc(), copy.getDst());
      }
      if (Value token = cast<gpu::AsyncOpInterface>(op).getAsyncToken();
          token && !token.use_empty()) {
        op->emitError("dt-emulate-gpu-on-cpu: a stream token is used; only "
                      "the tokens dt-lower-to-cuda makes (unused) are "
                      "supported");
        return signalPassFailure();
      }
      op->erase();
    }
    // The stream brackets of dt-overlap-collectives: on the CPU every
    // collective completes where it is called (where the pass put it).
    SmallVector<func::CallOp> brackets;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("dt_rt_gpu_collectives_"))
        brackets.push_back(call);
    });
    for (func::CallOp call : llvm::reverse(brackets))
      call.erase(); // Waits come after the end whose handle they use.
    for (StringRef name :
         {"dt_rt_gpu_collectives_begin", "dt_rt_gpu_collectives_end",
          "dt_rt_gpu_collectives_wait"})
      if (auto decl = getOperation().lookupSymbol<func::FuncOp>(name))
        decl.erase();

    SmallVector<gpu::WaitOp> waits;
    getOperation().walk([&](gpu::WaitOp op) { waits.push_back(op); });
    for (gpu::WaitOp wait : waits) {
      if (wait.getAsyncToken() && !wait.getAsyncToken().use_empty()) {
        wait.emitError("dt-emulate-gpu-on-cpu: a stream token is still used");
        return signalPassFailure();
      }
      wait.erase();
    }
  }

  LogicalResult emulate(gpu::LaunchOp launch) {
    if (launch.getAsyncToken() && !launch.getAsyncToken().use_empty())
      return launch.emitError(
          "dt-emulate-gpu-on-cpu: the launch's token is used");
    bool hasBarrier = false;
    launch.walk([&](Operation *op) {
      if (isa<gpu::BarrierOp, gpu::AllReduceOp, gpu::SubgroupReduceOp>(op))
        hasBarrier = true;
    });
    if (hasBarrier || !launch.getWorkgroupAttributions().empty())
      return launch.emitError("dt-emulate-gpu-on-cpu: a kernel whose threads "
                              "cooperate cannot run one thread at a time");
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    IRMapping mapping;
    SmallVector<Value> bounds = {grid.x,  grid.y,  grid.z,
                                 block.x, block.y, block.z};
    gpu::KernelDim3 blockIds = launch.getBlockIds(),
                    threadIds = launch.getThreadIds(),
                    gridSizes = launch.getGridSize(),
                    blockSizes = launch.getBlockSize();
    SmallVector<Value> ids = {blockIds.x,  blockIds.y,  blockIds.z,
                              threadIds.x, threadIds.y, threadIds.z};
    for (auto [arg, value] :
         llvm::zip(SmallVector<Value>{gridSizes.x, gridSizes.y, gridSizes.z,
                                      blockSizes.x, blockSizes.y, blockSizes.z},
                   bounds))
      mapping.map(arg, value);
    for (auto [id, bound] : llvm::zip(ids, bounds)) {
      auto loop = scf::ForOp::create(b, loc, zero, bound, one);
      mapping.map(id, loop.getInductionVar());
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
    for (Operation &op : launch.getBody().front().without_terminator())
      b.clone(op, mapping);
    launch.erase();
    return success();
  }
};
} // namespace
