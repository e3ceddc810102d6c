//===- BufferAliases.cpp - Which values name the same buffer --------------===//
//
// After bufferization a buffer is reached through its allocation (or a
// function argument, or a global) and the views taken of it. The passes
// that move or merge buffer ops ask one question: may this op touch that
// buffer? They answer it with the buffer's root and the set of its views.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::dt;

/// The buffer `op` makes a view of, if it makes one: a ViewLikeOpInterface
/// op's source, or a memref.transpose's (which in MLIR 22 does not
/// implement the interface: test/CUDA/overlap-collectives.mlir @transposed).
static Value viewedBuffer(Operation *op) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  if (auto transpose = dyn_cast<memref::TransposeOp>(op))
    return transpose.getIn();
  return Value();
}

Value mlir::dt::bufferRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    Value source = viewedBuffer(def);
    if (!source)
      break;
    value = source;
  }
  return value;
}

void mlir::dt::addBufferViews(Value value,
                              llvm::SmallPtrSetImpl<Value> &aliases) {
  SmallVector<Value> work = {bufferRoot(value)};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!aliases.insert(v).second)
      continue;
    for (Operation *user : v.getUsers())
      if (viewedBuffer(user) == v)
        for (Value result : user->getResults())
          work.push_back(result);
  }
}

bool mlir::dt::touchesAny(Operation *op,
                          const llvm::SmallPtrSetImpl<Value> &aliases) {
  WalkResult found = op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (aliases.contains(operand))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

bool mlir::dt::mayAccessAny(Operation *op,
                            const llvm::SmallPtrSetImpl<Value> &aliases) {
  return !isMemoryEffectFree(op) && touchesAny(op, aliases);
}

/// `op` when it is a fill of exactly `buffer`, or the fill in `op` when `op`
/// is dt-memory-to-gpu's one-thread launch of such a fill (a 0-d fill),
/// holding nothing else and with a value from outside it.
static linalg::FillOp fillOf(Operation *op, Value buffer) {
  auto isFillOfBuffer = [&](linalg::FillOp fill) {
    return fill && fill.hasPureBufferSemantics() &&
           fill.getDpsInits()[0] == buffer;
  };
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return isFillOfBuffer(fill) ? fill : nullptr;
  auto launch = dyn_cast<gpu::LaunchOp>(op);
  if (!launch || !launch->use_empty() ||
      launch.getBody().front().getOperations().size() != 2)
    return nullptr;
  auto fill = dyn_cast<linalg::FillOp>(launch.getBody().front().front());
  if (!isFillOfBuffer(fill) ||
      launch.getBody().isAncestor(fill.getInputs()[0].getParentRegion()))
    return nullptr;
  return fill;
}

linalg::FillOp mlir::dt::lastFillBefore(Operation *op, Value buffer) {
  llvm::SmallPtrSet<Value, 16> aliases;
  addBufferViews(buffer, aliases);
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (linalg::FillOp fill = fillOf(prev, buffer))
      return fill;
    if (mayAccessAny(prev, aliases))
      return nullptr;
  }
  return nullptr;
}

void mlir::dt::eraseFill(linalg::FillOp fill) {
  auto launch = dyn_cast<gpu::LaunchOp>(fill->getParentOp());
  if (!launch) {
    fill->erase();
    return;
  }
  // The launch goes with it, and its stream token if nothing else waits on
  // it.
  SmallVector<Value> tokens(launch.getAsyncDependencies());
  launch->erase();
  for (Value token : tokens)
    if (auto wait = token.getDefiningOp<gpu::WaitOp>();
        wait && wait->use_empty())
      wait->erase();
}
