//===- ReadOnlyArguments.cpp - dt-read-only-arguments ---------------------===//
//
// An entry's arguments are the caller's inputs: bufferization must never
// write into them (it takes function arguments as writable otherwise).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dt {
#define GEN_PASS_DEF_READONLYARGUMENTSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct ReadOnlyArgumentsPass
    : public mlir::dt::impl::ReadOnlyArgumentsPassBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (BlockArgument arg : func.getArguments())
        if (isa<TensorType>(arg.getType()))
          func.setArgAttr(
              arg.getArgNumber(),
              bufferization::BufferizationDialect::kWritableAttrName, readOnly);
    }
  }
};
} // namespace
