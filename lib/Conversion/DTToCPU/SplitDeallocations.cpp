//===- SplitDeallocations.cpp - dt-split-deallocations --------------------===//
//
// A bufferization.dealloc that retains nothing and frees distinct
// allocations of this program -> one dealloc per buffer. This is what
// upstream's buffer-deallocation-simplification finds by asking its alias
// analysis about every pair of buffers in the list, found here in one pass
// over the list: a straight-line training step frees thousands of buffers
// in one dealloc at its end.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::dt {
#define GEN_PASS_DEF_SPLITDEALLOCATIONSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// True when `op` retains nothing and each of its buffers is (a view of) a
/// memref.alloc of this program that no other buffer in it views: then no two
/// of them can be the same memory.
bool freesDistinctAllocations(bufferization::DeallocOp op) {
  if (!op.getRetained().empty() || op.getMemrefs().size() < 2)
    return false;
  llvm::SmallPtrSet<Operation *, 32> allocations;
  for (Value buffer : op.getMemrefs()) {
    Operation *allocation = bufferRoot(buffer).getDefiningOp();
    if (!isa_and_nonnull<memref::AllocOp>(allocation) ||
        !allocations.insert(allocation).second)
      return false;
  }
  return true;
}

struct SplitDeallocationsPass
    : public mlir::dt::impl::SplitDeallocationsPassBase<
          SplitDeallocationsPass> {
  mlir::dt::Statistic numSplit{this, "split",
                               "Deallocs split into one per buffer"};
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> split;
    getOperation().walk([&](bufferization::DeallocOp op) {
      if (freesDistinctAllocations(op))
        split.push_back(op);
    });
    for (bufferization::DeallocOp op : split) {
      OpBuilder b(op);
      for (auto [buffer, condition] :
           llvm::zip(op.getMemrefs(), op.getConditions()))
        bufferization::DeallocOp::create(b, op.getLoc(), buffer, condition,
                                         ValueRange());
      op.erase();
    }
    numSplit += split.size();
  }
};
} // namespace
