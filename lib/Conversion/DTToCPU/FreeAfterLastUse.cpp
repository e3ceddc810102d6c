//===- FreeAfterLastUse.cpp - dt-free-after-last-use ----------------------===//
//
// Ownership-based deallocation frees a temporary at the end of its block,
// so a step held every temporary it made until it returned: its memory was
// the sum of its temporaries rather than the most that are live at once,
// and a chain of small ops touched fresh memory at every op (and again at
// every call, once malloc had given the freed heap back to the system). A
// temporary that is freed unconditionally in its block and reached only
// through its views is dead after the last op of the block that touches it,
// so its free moves there, and the next temporary reuses its bytes.
//
// Each temporary stays an allocation of its own (rather than a view of one
// packed per block, as dt-pack-device-buffers does on the GPU): LLVM knows
// that allocations do not alias each other, which it needs to keep a
// temporary's reads out of a loop that writes another and to vectorize
// without checks, and which views at offsets of one block would hide.
// blockTemporary, which finds a temporary's uses, serves both passes.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <limits>

namespace mlir::dt {
#define GEN_PASS_DEF_FREEAFTERLASTUSEPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

bool mlir::dt::isPlainBufferType(MemRefType type) {
  return type.hasStaticShape() && type.getLayout().isIdentity() &&
         !type.getMemorySpace() && type.getElementType().isIntOrFloat() &&
         type.getElementTypeBitWidth() % 8 == 0;
}

std::optional<BlockTemporary>
mlir::dt::blockTemporary(Operation *alloc, TypedValue<MemRefType> buffer,
                         Block &block, const DenseMap<Operation *, int64_t> &at,
                         llvm::function_ref<bool(Operation *)> isFree,
                         llvm::function_ref<Operation *(Operation *)> doneAt) {
  if (alloc->getBlock() != &block || !isPlainBufferType(buffer.getType()))
    return std::nullopt;
  llvm::SmallPtrSet<Value, 16> views;
  addBufferViews(buffer, views);
  Operation *free = nullptr;
  int64_t first = std::numeric_limits<int64_t>::max(), last = -1;
  for (Value view : views) {
    for (Operation *user : view.getUsers()) {
      if (isFree(user)) {
        if (free || view != buffer || user->getBlock() != &block)
          return std::nullopt;
        free = user;
        continue;
      }
      // Through a terminator, or a result that is not one of its views, the
      // buffer would be reached where its uses are not counted.
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          llvm::any_of(user->getResults(), [&](Value result) {
            return isa<BaseMemRefType>(result.getType()) &&
                   !views.contains(result);
          }))
        return std::nullopt;
      Operation *op = block.findAncestorOpInBlock(*user);
      if (!op)
        return std::nullopt;
      first = std::min(first, at.lookup(op));
      last = std::max(last, at.lookup(doneAt(op)));
    }
  }
  if (!free)
    return std::nullopt;
  if (last < 0) // Never touched: live where it is allocated.
    first = last = at.lookup(alloc);
  return BlockTemporary{alloc, free, first, last};
}

namespace {
struct FreeAfterLastUsePass
    : public mlir::dt::impl::FreeAfterLastUsePassBase<FreeAfterLastUsePass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      freeEarly(*block);
  }

  static void freeEarly(Block &block) {
    DenseMap<Operation *, int64_t> at;
    SmallVector<Operation *> ops;
    for (auto [i, op] : llvm::enumerate(block)) {
      at[&op] = i;
      ops.push_back(&op);
    }
    auto isFree = [](Operation *op) { return isa<memref::DeallocOp>(op); };
    // The CPU runtime's collectives and library calls are done with their
    // buffers when they return.
    auto itself = [](Operation *op) { return op; };
    for (auto alloc : block.getOps<memref::AllocOp>())
      if (std::optional<BlockTemporary> t = blockTemporary(
              alloc, alloc.getMemref(), block, at, isFree, itself))
        t->free->moveAfter(ops[t->last]);
  }
};
} // namespace
