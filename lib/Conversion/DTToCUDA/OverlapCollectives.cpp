//===- OverlapCollectives.cpp - dt-overlap-collectives --------------------===//
//
// A collective's buffers are the only memory it touches, and buffers are
// reachable only through SSA values (views included). So the rank's compute
// may run ahead of a collective until the first op that uses the
// collective's input or output, or any view of them: that is where the
// compute stream waits. Everything else, before or after, overlaps.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/GPUUtils.h"
#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::dt {
#define GEN_PASS_DEF_OVERLAPCOLLECTIVESPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
bool isCommunicating(func::CallOp call) {
  StringRef name = call.getCallee();
  return name.starts_with("dt_rt_all_reduce_") ||
         name.starts_with("dt_rt_all_gather_") ||
         name.starts_with("dt_rt_reduce_scatter_") ||
         name.starts_with("dt_rt_all_to_all_") ||
         name.starts_with("dt_rt_exchange_");
}

/// A runtime call that touches nothing but its operands and talks to
/// nobody: a collective may move past it.
bool isLocalLibraryCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  StringRef name = call.getCallee();
  return name.starts_with("dt_rt_gpu_matmul_") ||
         name.starts_with("dt_rt_gpu_batch_matmul_") ||
         name.starts_with("dt_rt_local_slice_") || name == "dt_rt_axis_index";
}

/// Moves `call` (with the casts and constants that only it uses) up to
/// right after the last earlier op it depends on: one that touches its
/// buffers, defines a value it uses, or is a call of something other than
/// a local library function or another collective. Collectives may pass
/// each other: every rank runs this same program, so every communicator
/// still sees the same order on all its members.
void issueEarly(func::CallOp call,
                const llvm::SmallPtrSetImpl<Value> &aliases) {
  // The operands' own definitions travel with the call: casts and
  // constants only it uses, and the allocation of a buffer (with its
  // stream token), which may always happen earlier.
  SmallVector<Operation *> carried;
  llvm::SmallPtrSet<Operation *, 8> carriedSet;
  SmallVector<Value> work(call.getOperands());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != call->getBlock() ||
        carriedSet.contains(def) || def->getNumRegions() != 0)
      continue;
    bool movable = isa<gpu::AllocOp>(def) ||
                   (def->hasOneUse() &&
                    (isMemoryEffectFree(def) || isa<gpu::WaitOp>(def)));
    if (!movable)
      continue;
    carriedSet.insert(def);
    carried.push_back(def);
    llvm::append_range(work, def->getOperands());
  }
  llvm::sort(carried,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  carried.push_back(call);
  carriedSet.insert(call);
  auto needed = [&](Operation *op) {
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (carriedSet.contains(user))
          return true;
    return false;
  };
  Operation *after = nullptr;
  for (Operation *op = call->getPrevNode(); op; op = op->getPrevNode()) {
    if (carriedSet.contains(op))
      continue;
    bool otherCall =
        isa<CallOpInterface>(op) && !isLocalLibraryCall(op) &&
        !(isa<func::CallOp>(op) && isCommunicating(cast<func::CallOp>(op)));
    if (otherCall || touchesAny(op, aliases) || needed(op)) {
      after = op;
      break;
    }
  }
  // What already lies before the stop stays; the rest moves up.
  Block *block = call->getBlock();
  if (after)
    llvm::erase_if(carried,
                   [&](Operation *op) { return op->isBeforeInBlock(after); });
  for (Operation *op : carried) {
    if (after)
      op->moveAfter(after);
    else
      op->moveBefore(&block->front());
    after = op;
  }
}

} // namespace

CollectiveBracket mlir::dt::bracketOf(func::CallOp end) {
  auto callOf = [](Operation *op, StringRef callee) {
    auto call = dyn_cast_or_null<func::CallOp>(op);
    return call && call.getCallee() == callee ? call : func::CallOp();
  };
  CollectiveBracket bracket;
  bracket.end = end;
  bracket.collective = dyn_cast_or_null<func::CallOp>(end->getPrevNode());
  if (bracket.collective)
    bracket.begin =
        callOf(bracket.collective->getPrevNode(), kCollectivesBegin);
  for (Operation *user : end->getUsers())
    if (func::CallOp wait = callOf(user, kCollectivesWait))
      if (wait->getBlock() == end->getBlock() &&
          (!bracket.wait || wait->isBeforeInBlock(bracket.wait)))
        bracket.wait = wait;
  return bracket;
}

namespace {
struct OverlapCollectivesPass
    : public mlir::dt::impl::OverlapCollectivesPassBase<
          OverlapCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (isCommunicating(call))
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    OpBuilder b(module.getContext());
    auto i64 = b.getI64Type();
    func::FuncOp begin = getOrInsertRuntimeFunction(module, kCollectivesBegin,
                                                    b.getFunctionType({}, {}));
    func::FuncOp end = getOrInsertRuntimeFunction(module, kCollectivesEnd,
                                                  b.getFunctionType({}, {i64}));
    func::FuncOp wait = getOrInsertRuntimeFunction(
        module, kCollectivesWait, b.getFunctionType({i64}, {}));

    // Each collective's buffers and their views (moving ops keeps values).
    SmallVector<llvm::SmallPtrSet<Value, 16>> aliases(calls.size());
    for (auto [call, set] : llvm::zip(calls, aliases))
      for (Value operand : call.getOperands())
        if (isa<BaseMemRefType>(operand.getType()))
          addBufferViews(operand, set);
    // Issue every collective as early as its data allows, then bracket each
    // and wait as late as its data allows.
    for (auto [call, set] : llvm::zip(calls, aliases))
      issueEarly(call, set);
    for (auto [call, set] : llvm::zip(calls, aliases)) {
      Location loc = call.getLoc();
      b.setInsertionPoint(call);
      func::CallOp::create(b, loc, begin, ValueRange());
      b.setInsertionPointAfter(call);
      Value handle =
          func::CallOp::create(b, loc, end, ValueRange()).getResult(0);
      // The first later op of the block that touches the buffers, else the
      // block's end.
      Operation *at = call->getBlock()->getTerminator();
      for (Operation *op = handle.getDefiningOp()->getNextNode(); op;
           op = op->getNextNode())
        if (touchesAny(op, set) || op->hasTrait<OpTrait::IsTerminator>()) {
          at = op;
          break;
        }
      b.setInsertionPoint(at);
      func::CallOp::create(b, loc, wait, handle);
    }
  }
};
} // namespace
