//===- KeepRowLoops.cpp - dt-keep-row-loops -------------------------------===//
//
// LLVM's -O3 pipeline fully unrolls short loops before its loop vectorizer
// runs, and the vectorizer only vectorizes innermost loops: once the loop
// along a row is unrolled, it vectorizes the loop over rows, reading and
// writing each row-major buffer with gathers and scatters. A loop whose
// stores run along the row is marked not to be unrolled, so that it is the
// one vectorized (Passes.td has the numbers).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::dt {
#define GEN_PASS_DEF_KEEPROWLOOPSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The shortest loops kept. Unrolled, a loop of up to 8 trips is
/// vectorized across rows well: its accesses form an interleave group,
/// contiguous loads that shuffles split (kept, `x * y + x - y` on 4096x6
/// took 13.0 us a call instead of 3.1). Past 8, LLVM gathers and scatters,
/// and a loop kept is vectorized along the row from 16 trips (LLVM's
/// vectorizer leaves fewer alone). From 9 to 15 it stays a scalar loop,
/// which beats the gathers when it only writes its buffers, but not when
/// it accumulates into them (column sums of 4096x12: unrolled, 12 chains
/// side by side, 14.6 us; kept, 32.3 us).
static constexpr int64_t kMinTrips = 9;
static constexpr int64_t kMinTripsAccumulating = 16;
/// The most elements a loop may accumulate into that the loop around it
/// keeps in registers (eight AVX2 vectors of f32; measured in Passes.td).
static constexpr int64_t kMaxHeldAccumulators = 64;

/// Whether `index` steps along with `loop`'s induction variable: it is the
/// variable, or the variable plus a value fixed in the loop (a window's
/// offset: `affine.apply (d0 + d1)(%iv, %kw)`, as convert-linalg-to-loops
/// writes a convolution adjoint's col2im).
static bool stepsWith(Value index, scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  if (index == iv)
    return true;
  auto apply = index.getDefiningOp<affine::AffineApplyOp>();
  if (!apply)
    return false;
  auto sum = dyn_cast<AffineBinaryOpExpr>(apply.getAffineMap().getResult(0));
  if (!sum || sum.getKind() != AffineExprKind::Add)
    return false;
  // The variable is one operand, a dim or symbol alone on one side of the
  // sum, and every other operand is fixed in the loop.
  unsigned numDims = apply.getAffineMap().getNumDims();
  auto isOperand = [&](AffineExpr expr, unsigned position) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return dim.getPosition() == position;
    auto symbol = dyn_cast<AffineSymbolExpr>(expr);
    return symbol && numDims + symbol.getPosition() == position;
  };
  std::optional<unsigned> position;
  for (auto [i, operand] : llvm::enumerate(apply.getMapOperands())) {
    if (operand == iv && !position)
      position = i;
    else if (operand == iv || !loop.isDefinedOutsideOfLoop(operand))
      return false;
  }
  return position && (isOperand(sum.getLHS(), *position) !=
                      isOperand(sum.getRHS(), *position));
}

namespace {
/// What becomes of an innermost loop along rows.
enum class RowLoop {
  /// Left to LLVM: not along rows, or short enough to unroll.
  Leave,
  /// Kept from unrolling, so that LLVM vectorizes it along the row.
  Keep,
  /// Unrolled, its accumulators held in registers through the loop around
  /// it, which is kept from vectorizing (its SLP vectorizer takes them).
  HoldAccumulators,
};
} // namespace

/// What becomes of `loop`. Kept when it is innermost, stores only along
/// rows (the last index of every buffer it stores to steps with its
/// induction variable, and it stores to one at least) and runs at least
/// kMinTrips times, kMinTripsAccumulating if it reads a buffer it stores
/// to. An accumulating loop of up to kMaxHeldAccumulators trips whose
/// stores stay in place through the loop around it (column sums of a
/// narrow matrix, dt-split-reductions' lanes) holds its accumulators.
static RowLoop classify(scf::ForOp loop) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->slt(kMinTrips))
    return RowLoop::Leave;
  auto parent = dyn_cast<scf::ForOp>(loop->getParentOp());
  bool heldInParent = static_cast<bool>(parent);
  llvm::SmallPtrSet<Value, 4> stored, loaded;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (isa<LoopLikeOpInterface>(op))
      return WalkResult::interrupt();
    if (auto load = dyn_cast<memref::LoadOp>(op))
      loaded.insert(load.getMemRef());
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      ValueRange indices = store.getIndices();
      if (indices.empty() || !stepsWith(indices.back(), loop))
        return WalkResult::interrupt();
      stored.insert(store.getMemRef());
      heldInParent &= isNoAliasKernelBuffer(store.getMemRef()) &&
                      llvm::all_of(indices.drop_back(), [&](Value index) {
                        return parent.isDefinedOutsideOfLoop(index);
                      });
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || stored.empty())
    return RowLoop::Leave;
  bool accumulates = llvm::any_of(
      stored, [&](Value buffer) { return loaded.contains(buffer); });
  if (!accumulates)
    return RowLoop::Keep;
  if (heldInParent && trips->sle(kMaxHeldAccumulators))
    return RowLoop::HoldAccumulators;
  return trips->sge(kMinTripsAccumulating) ? RowLoop::Keep : RowLoop::Leave;
}

namespace {
struct KeepRowLoopsPass
    : public mlir::dt::impl::KeepRowLoopsPassBase<KeepRowLoopsPass> {
  mlir::dt::Statistic numKept{this, "kept",
                              "Loops kept from unrolling before vectorization"};
  mlir::dt::Statistic numHeld{
      this, "held", "Loops unrolled with their accumulators in registers"};
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // The name of llvm.br's property: the lowerings to cf and to LLVM copy
    // the loop's attributes to its back edge, where this one becomes it.
    StringAttr name = StringAttr::get(context, "loop_annotation");
    auto unroll = LLVM::LoopUnrollAttr::get(
        context, /*disable=*/BoolAttr::get(context, true), /*count=*/{},
        /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
        /*followupRemainder=*/{}, /*followupAll=*/{});
    auto keep = LLVM::LoopAnnotationAttr::get(
        context, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{},
        unroll, /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
        /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
        /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
        /*parallelAccesses=*/{});
    auto scalar = LLVM::LoopAnnotationAttr::get(
        context, /*disableNonforced=*/{},
        LLVM::LoopVectorizeAttr::get(
            context, /*disable=*/BoolAttr::get(context, true),
            /*predicateEnable=*/{}, /*scalableEnable=*/{}, /*width=*/{},
            /*followupVectorized=*/{}, /*followupEpilogue=*/{},
            /*followupAll=*/{}),
        /*interleave=*/{}, /*unroll=*/{}, /*unrollAndJam=*/{}, /*licm=*/{},
        /*distribute=*/{}, /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{},
        /*mustProgress=*/{}, /*isVectorized=*/{}, /*startLoc=*/{},
        /*endLoc=*/{}, /*parallelAccesses=*/{});
    getOperation().walk([&](scf::ForOp loop) {
      switch (classify(loop)) {
      case RowLoop::Leave:
        return;
      case RowLoop::Keep:
        loop->setAttr(name, keep);
        ++numKept;
        return;
      case RowLoop::HoldAccumulators:
        loop->getParentOp()->setAttr(name, scalar);
        ++numHeld;
        return;
      }
    });
  }
};
} // namespace
