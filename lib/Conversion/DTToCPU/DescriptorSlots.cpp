//===- DescriptorSlots.cpp - dt-descriptor-slots --------------------------===//
//
// The stack slots of the memref descriptors passed to the runtime, shared
// (see Passes.td). Each alloca's uses are found first, while the block's
// operation order is valid, and the IR changed after: inserting while
// asking isBeforeInBlock would recompute the order once per alloca.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <tuple>

namespace mlir::dt {
#define GEN_PASS_DEF_DESCRIPTORSLOTSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// The last operation of its block that uses `alloca`'s address, or null
/// when the address may outlive the uses: it leaves the block, is stored
/// somewhere, or reaches anything but a store or load into it, an
/// aggregate, or a call of the runtime (which keeps no pointer past the
/// call).
Operation *lastUse(LLVM::AllocaOp alloca) {
  Block *block = alloca->getBlock();
  Operation *last = alloca;
  SmallVector<Value> worklist = {alloca.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != block)
        return nullptr;
      bool known = llvm::TypeSwitch<Operation *, bool>(user)
                       .Case([&](LLVM::StoreOp store) {
                         return store.getValue() != value;
                       })
                       .Case([](LLVM::LoadOp) { return true; })
                       .Case<LLVM::InsertValueOp, LLVM::ExtractValueOp>(
                           [&](Operation *aggregate) {
                             worklist.push_back(aggregate->getResult(0));
                             return true;
                           })
                       .Case([](LLVM::CallOp call) {
                         std::optional<StringRef> callee = call.getCallee();
                         return callee && callee->starts_with("dt_rt_");
                       })
                       .Default([](Operation *) { return false; });
      if (!known)
        return nullptr;
      if (last->isBeforeInBlock(user))
        last = user;
    }
  }
  return last;
}

/// What a slot holds: element type, count, alignment.
using SlotKind = std::tuple<Type, int64_t, int64_t>;

struct DescriptorSlotsPass
    : public mlir::dt::impl::DescriptorSlotsPassBase<DescriptorSlotsPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::LLVMFuncOp function) {
      if (!function.isExternal())
        shareSlots(function);
    });
  }

  /// Gives each descriptor alloca of `function` a slot at the start of its
  /// entry block, shared with the allocas whose uses end before it starts:
  /// interval coloring, block by block (an alloca's uses lie in its block,
  /// so those of two blocks never overlap in time).
  static void shareSlots(LLVM::LLVMFuncOp function) {
    // Every alloca with its kind, last use and (below) slot, in block
    // order.
    struct Use {
      LLVM::AllocaOp alloca;
      SlotKind kind;
      Operation *last;
      unsigned slot = 0;
    };
    SmallVector<SmallVector<Use>> blocks;
    for (Block &block : function.getBody()) {
      SmallVector<Use> &uses = blocks.emplace_back();
      for (auto alloca : block.getOps<LLVM::AllocaOp>()) {
        llvm::APInt count;
        if (!matchPattern(alloca.getArraySize(), m_ConstantInt(&count)))
          continue;
        if (Operation *last = lastUse(alloca); last && last != alloca)
          uses.push_back({alloca,
                          {alloca.getElemType(), count.getSExtValue(),
                           alloca.getAlignment().value_or(0)},
                          last,
                          0});
      }
    }

    // The slots each alloca takes: a free slot of its kind, else a new one.
    llvm::DenseMap<SlotKind, SmallVector<unsigned>> slotsOf;
    SmallVector<SlotKind> slotKinds;
    for (SmallVector<Use> &uses : blocks) {
      llvm::DenseMap<SlotKind, SmallVector<unsigned>> free;
      for (auto &[kind, slots] : slotsOf)
        free[kind] = slots;
      SmallVector<std::pair<Operation *, unsigned>> busy;
      for (Use &use : uses) {
        // The slots whose uses ended before this alloca are free again.
        llvm::erase_if(busy, [&](std::pair<Operation *, unsigned> &held) {
          if (!held.first->isBeforeInBlock(use.alloca))
            return false;
          free[slotKinds[held.second]].push_back(held.second);
          return true;
        });
        SmallVector<unsigned> &candidates = free[use.kind];
        if (candidates.empty()) {
          use.slot = slotKinds.size();
          slotKinds.push_back(use.kind);
          slotsOf[use.kind].push_back(use.slot);
        } else {
          use.slot = candidates.pop_back_val();
        }
        busy.push_back({use.last, use.slot});
      }
    }
    if (slotKinds.empty())
      return;

    // The slots at the start of the entry block, then the allocas replaced.
    OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
    Location loc = function.getLoc();
    SmallVector<Value> slots;
    for (auto [type, count, alignment] : slotKinds) {
      Value size = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                            b.getI64IntegerAttr(count));
      slots.push_back(LLVM::AllocaOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext()), type, size,
          alignment));
    }
    for (SmallVector<Use> &uses : blocks)
      for (Use &use : uses) {
        use.alloca.replaceAllUsesWith(slots[use.slot]);
        use.alloca.erase();
      }
  }
};
} // namespace
