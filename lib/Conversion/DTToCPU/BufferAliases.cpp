//===- BufferAliases.cpp - Which values name the same buffer --------------===//
//
// After bufferization a buffer is reached through its allocation (or a
// function argument, or a global) and the views taken of it. The passes
// that move or merge buffer ops ask one question: may this op touch that
// buffer? They answer it with the buffer's root and the set of its views.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::dt;

Value mlir::dt::bufferRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
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
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == v)
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

linalg::FillOp mlir::dt::lastFillBefore(Operation *op, Value buffer) {
  llvm::SmallPtrSet<Value, 16> aliases;
  addBufferViews(buffer, aliases);
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev);
        fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInits()[0] == buffer)
      return fill;
    if (mayAccessAny(prev, aliases))
      return nullptr;
  }
  return nullptr;
}
