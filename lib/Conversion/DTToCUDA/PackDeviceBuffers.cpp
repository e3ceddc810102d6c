//===- PackDeviceBuffers.cpp - dt-pack-device-buffers ---------------------===//
//
// A step allocates a temporary per op that makes one: each a stream-ordered
// allocation and free, a few microseconds of host time per op in a chain
// of small kernels, and each held to the end of its block (ownership-based
// deallocation frees there). But a function's temporaries are known when
// it is compiled: their sizes (static shapes) and their lifetimes (from
// the first op that touches them to the last, in the order the stream runs
// them). So they are packed into one allocation per call, at offsets where
// no two buffers that are live at once meet (buffer assignment, as XLA
// does it), and each becomes a view of it.
//
// One in-order stream runs the rank's work, so the work queued before a
// buffer's last use is done with it before the work queued after, which
// may take its bytes. A collective on the communication stream is done
// with its buffers at the wait dt-overlap-collectives put before the
// first op that needs them.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/GPUUtils.h"
#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include <limits>

namespace mlir::dt {
#define GEN_PASS_DEF_PACKDEVICEBUFFERSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// Offsets are multiples of this: what cudaMalloc guarantees, and more
/// than any vector load or cuBLASLt operand needs.
constexpr int64_t kAlignment = 256;

/// Where the rank's stream is done with what `op` queued: `op` itself, or
/// for a collective that dt-overlap-collectives bracketed (`begin; op;
/// %h = end`, which runs on the communication stream), the wait on `%h`.
/// Without a wait in the block, the block's end.
Operation *doneAt(Operation *op) {
  auto end = dyn_cast_or_null<func::CallOp>(op->getNextNode());
  if (!end || end.getCallee() != kCollectivesEnd)
    return op;
  if (func::CallOp wait = bracketOf(end).wait)
    return wait;
  return end->getBlock()->getTerminator();
}

/// A temporary to pack: its lifetime, its bytes (a multiple of kAlignment)
/// and, once placed, its offset in the allocation.
struct Temporary {
  BlockTemporary life;
  int64_t bytes;
  int64_t offset = -1;

  bool liveWith(const Temporary &other) const {
    return life.first <= other.life.last && other.life.first <= life.last;
  }
};

/// `alloc` as a packable temporary (blockTemporary): device memory, its one
/// free a `gpu.dealloc` in `block`, no stream token used.
std::optional<Temporary> temporaryOf(gpu::AllocOp alloc, Block &block,
                                     const DenseMap<Operation *, int64_t> &at) {
  if (alloc.getHostShared() ||
      (alloc.getAsyncToken() && !alloc.getAsyncToken().use_empty()))
    return std::nullopt;
  std::optional<BlockTemporary> life = blockTemporary(
      alloc, alloc.getMemref(), block, at,
      [](Operation *op) { return isa<gpu::DeallocOp>(op); }, doneAt);
  if (!life)
    return std::nullopt;
  auto free = cast<gpu::DeallocOp>(life->free);
  if (free.getAsyncToken() && !free.getAsyncToken().use_empty())
    return std::nullopt;
  MemRefType type = alloc.getType();
  int64_t bytes = type.getNumElements() * (type.getElementTypeBitWidth() / 8);
  bytes = static_cast<int64_t>(
      llvm::alignTo(std::max<int64_t>(bytes, 1), kAlignment));
  return Temporary{*life, bytes};
}

/// Gives each temporary an offset, largest first, at the lowest offset
/// clear of every placed one live at the same time; returns the bytes all
/// of them take.
int64_t place(MutableArrayRef<Temporary> temporaries) {
  SmallVector<Temporary *> order;
  for (Temporary &t : temporaries)
    order.push_back(&t);
  llvm::stable_sort(order, [](const Temporary *a, const Temporary *b) {
    return a->bytes > b->bytes;
  });
  int64_t total = 0;
  SmallVector<std::pair<int64_t, int64_t>> taken; // [offset, end) in use
  for (auto [i, t] : llvm::enumerate(order)) {
    taken.clear();
    for (Temporary *placed : ArrayRef(order).take_front(i))
      if (placed->liveWith(*t))
        taken.push_back({placed->offset, placed->offset + placed->bytes});
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [from, to] : taken) {
      if (offset + t->bytes <= from)
        break;
      offset = std::max(offset, to);
    }
    t->offset = offset;
    total = std::max(total, offset + t->bytes);
  }
  return total;
}

/// Erases `token`'s `gpu.wait async` when nothing else waits on it.
void eraseUnusedWait(Value token) {
  if (auto wait = token ? token.getDefiningOp<gpu::WaitOp>() : nullptr)
    if (wait->use_empty())
      wait->erase();
}

struct PackDeviceBuffersPass
    : public mlir::dt::impl::PackDeviceBuffersPassBase<PackDeviceBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      if (!func.isExternal())
        pack(func.getBody().front());
    });
  }

  static void pack(Block &block) {
    DenseMap<Operation *, int64_t> at;
    for (auto [i, op] : llvm::enumerate(block))
      at[&op] = i;
    SmallVector<Temporary> temporaries;
    for (auto alloc : block.getOps<gpu::AllocOp>())
      if (std::optional<Temporary> t = temporaryOf(alloc, block, at))
        temporaries.push_back(*t);
    if (temporaries.size() < 2)
      return;
    int64_t total = place(temporaries);

    Location loc = block.getParentOp()->getLoc();
    OpBuilder b = OpBuilder::atBlockBegin(&block);
    auto arenaType = MemRefType::get({total}, b.getI8Type());
    auto arena = gpu::AllocOp::create(
        b, loc, arenaType, gpu::AsyncTokenType::get(b.getContext()),
        rankStreamToken(b, loc), ValueRange(), ValueRange(),
        /*hostShared=*/false);
    b.setInsertionPoint(block.getTerminator());
    gpu::DeallocOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                           rankStreamToken(b, loc), arena.getMemref());

    for (Temporary &t : temporaries) {
      auto alloc = cast<gpu::AllocOp>(t.life.alloc);
      auto free = cast<gpu::DeallocOp>(t.life.free);
      b.setInsertionPoint(alloc);
      Value offset =
          arith::ConstantIndexOp::create(b, alloc.getLoc(), t.offset);
      Value view =
          memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(),
                                 arena.getMemref(), offset, ValueRange());
      alloc.getMemref().replaceAllUsesWith(view);
      Value allocWait = alloc.getAsyncDependencies().empty()
                            ? Value()
                            : alloc.getAsyncDependencies().front();
      Value freeWait = free.getAsyncDependencies().empty()
                           ? Value()
                           : free.getAsyncDependencies().front();
      free->erase();
      alloc->erase();
      eraseUnusedWait(allocWait);
      eraseUnusedWait(freeWait);
    }
  }
};
} // namespace
