//===- SeparateEntryBlocks.cpp - dt-separate-entry-blocks -----------------===//
//
// A large function's operations move out of its entry block, which then
// only branches to them, so that convert-func-to-llvm's rewrite of each
// memref argument does not walk the whole body (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_SEPARATEENTRYBLOCKSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct SeparateEntryBlocksPass
    : public mlir::dt::impl::SeparateEntryBlocksPassBase<
          SeparateEntryBlocksPass> {
  mlir::dt::Statistic numSeparated{this, "separated", "Entry blocks separated"};
  using SeparateEntryBlocksPassBase::SeparateEntryBlocksPassBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      Block &entry = function.front();
      if (static_cast<int64_t>(entry.getOperations().size()) <= threshold)
        continue;
      Block *body = entry.splitBlock(entry.begin());
      OpBuilder b = OpBuilder::atBlockEnd(&entry);
      LLVM::BrOp::create(b, function.getLoc(), ValueRange(), body);
      ++numSeparated;
    }
  }
};
} // namespace
