//===- LowerDeallocations.cpp - dt-lower-deallocations --------------------===//
//
// bufferization.dealloc of several buffers -> pointer comparisons and
// conditional frees, in registers. Upstream's general lowering calls a helper
// that keeps its bookkeeping (the pointers and conditions) in buffers it
// allocates for every dealloc; on the CUDA target every buffer is device
// memory, where the host cannot read or write it. The decisions are the
// helper's:
//   - buffer i is freed when its condition holds and neither a retained
//     value nor a buffer before it in the list is the same allocation;
//   - retained value k is owned afterwards when a buffer with a true
//     condition is the same allocation.
// A dealloc of one buffer is left to upstream's lowering, which has no
// helper.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_LOWERDEALLOCATIONSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
void lowerDealloc(bufferization::DeallocOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto pointers = [&](ValueRange buffers) {
    return llvm::map_to_vector(buffers, [&](Value buffer) -> Value {
      return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    });
  };
  SmallVector<Value> freed = pointers(op.getMemrefs());
  SmallVector<Value> retained = pointers(op.getRetained());
  auto compare = [&](arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y);
  };
  auto both = [&](Value x, Value y) -> Value {
    return arith::AndIOp::create(b, loc, x, y);
  };

  // Ownership of the retained values, from the conditions before any free.
  SmallVector<Value> owned;
  for (Value keep : retained) {
    Value any;
    for (auto [pointer, condition] : llvm::zip(freed, op.getConditions())) {
      Value same =
          both(condition, compare(arith::CmpIPredicate::eq, pointer, keep));
      any = any ? arith::OrIOp::create(b, loc, any, same) : same;
    }
    owned.push_back(any);
  }
  for (auto [i, buffer] : llvm::enumerate(op.getMemrefs())) {
    Value free = op.getConditions()[i];
    for (Value keep : retained)
      free = both(free, compare(arith::CmpIPredicate::ne, freed[i], keep));
    for (Value earlier : ArrayRef<Value>(freed).take_front(i))
      free = both(free, compare(arith::CmpIPredicate::ne, freed[i], earlier));
    scf::IfOp::create(b, loc, free, [&](OpBuilder &then, Location loc) {
      memref::DeallocOp::create(then, loc, buffer);
      scf::YieldOp::create(then, loc);
    });
  }
  op.replaceAllUsesWith(owned);
  op.erase();
}

struct LowerDeallocationsPass
    : public mlir::dt::impl::LowerDeallocationsPassBase<
          LowerDeallocationsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk([&](bufferization::DeallocOp op) {
      if (op.getMemrefs().size() > 1)
        deallocs.push_back(op);
    });
    for (bufferization::DeallocOp op : deallocs)
      lowerDealloc(op);
  }
};
} // namespace
