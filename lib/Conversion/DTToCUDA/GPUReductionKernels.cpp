//===- GPUReductionKernels.cpp - dt-gpu-reduction-kernels -----------------===//
//
// Reductions over the innermost loops, with several threads per output.
// One thread per output (what dt-launch-parallel-loops gives) walks a whole
// row alone and its neighbours read other rows: slow for long rows and
// uncoalesced. Here the `L` lanes of a row stride through it together, then
// combine their partials through warp shuffles (L = 32) or gpu.all_reduce
// over the block (L = 256).
//
// The op's body is reused as it is: run on a partial that starts at the
// combiner's identity instead of the output's value, it folds the elements
// a lane sees; which is right exactly when the body is an accumulation,
// `combine(acc, x)` (optionally under a mask, `select(c, combine(acc, x),
// acc)`), with an associative and commutative `combine`. Lane 0 then
// combines the total with the output's initial value: the fill's value when
// a linalg.fill last wrote the output (the fill, a kernel of its own, goes).
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

namespace mlir::dt {
#define GEN_PASS_DEF_GPUREDUCTIONKERNELSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
constexpr int64_t kBlock = 256;
constexpr int64_t kWarp = 32;
/// Rows shorter than this keep one thread per output.
constexpr int64_t kMinRow = 16;

/// An accumulating body: its combiner, as gpu.all_reduce names it, and the
/// combiner's identity.
struct Accumulation {
  Operation *combine;
  gpu::AllReduceOperation kind;
  TypedAttr identity;
};

std::optional<Accumulation> matchAccumulation(linalg::LinalgOp op) {
  Block &body = op->getRegion(0).front();
  BlockArgument acc = body.getArgument(op.getNumDpsInputs());
  Value yielded = body.getTerminator()->getOperand(0);
  Value combined = yielded;
  Operation *mask = nullptr;
  if (auto select = yielded.getDefiningOp<arith::SelectOp>()) {
    if (select.getFalseValue() != acc)
      return std::nullopt;
    mask = select;
    combined = select.getTrueValue();
  }
  Operation *combine = combined.getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 ||
      combine->getBlock() != &body ||
      (combine->getOperand(0) != acc && combine->getOperand(1) != acc))
    return std::nullopt;
  for (Operation *user : acc.getUsers())
    if (user != combine && user != mask)
      return std::nullopt;
  if (mask && mask->getOperand(0) == acc)
    return std::nullopt;

  Type type = acc.getType();
  Builder b(op->getContext());
  double inf = std::numeric_limits<double>::infinity();
  auto f = [&](double v) -> TypedAttr { return b.getFloatAttr(type, v); };
  auto i = [&](int64_t v) -> TypedAttr { return b.getIntegerAttr(type, v); };
  using K = gpu::AllReduceOperation;
  std::optional<Accumulation> match;
  auto set = [&](K kind, TypedAttr identity) {
    match = Accumulation{combine, kind, identity};
  };
  if (type.isF32()) {
    if (isa<arith::AddFOp>(combine))
      set(K::ADD, f(0.0));
    else if (isa<arith::MulFOp>(combine))
      set(K::MUL, f(1.0));
    else if (isa<arith::MaxNumFOp>(combine))
      set(K::MAXNUMF, f(-inf));
    else if (isa<arith::MinNumFOp>(combine))
      set(K::MINNUMF, f(inf));
    else if (isa<arith::MaximumFOp>(combine))
      set(K::MAXIMUMF, f(-inf));
    else if (isa<arith::MinimumFOp>(combine))
      set(K::MINIMUMF, f(inf));
  } else if (type.isInteger(32)) {
    if (isa<arith::AddIOp>(combine))
      set(K::ADD, i(0));
    else if (isa<arith::MulIOp>(combine))
      set(K::MUL, i(1));
    else if (isa<arith::MaxSIOp>(combine))
      set(K::MAXSI, i(std::numeric_limits<int32_t>::min()));
    else if (isa<arith::MinSIOp>(combine))
      set(K::MINSI, i(std::numeric_limits<int32_t>::max()));
    else if (isa<arith::AndIOp>(combine))
      set(K::AND, i(-1));
    else if (isa<arith::OrIOp>(combine))
      set(K::OR, i(0));
    else if (isa<arith::XOrIOp>(combine))
      set(K::XOR, i(0));
  }
  return match;
}

/// `combine`'s kind of op on (a, b), with its attributes (fastmath).
Value combineWith(OpBuilder &b, Location loc, Operation *combine, Value a,
                  Value c) {
  OperationState state(loc, combine->getName());
  state.addOperands({a, c});
  state.addTypes(a.getType());
  state.addAttributes(combine->getAttrs());
  return b.create(state)->getResult(0);
}

/// The coordinates of `linear` over static `extents`, the last fastest.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> extents) {
  SmallVector<Value> values;
  for (int64_t e : extents)
    values.push_back(arith::ConstantIndexOp::create(b, loc, e));
  return delinearizeIndex(b, loc, linear, values);
}

/// The indices `map` (a projected permutation) takes from the loop indices.
SmallVector<Value> indicesOf(AffineMap map, ArrayRef<Value> loops) {
  SmallVector<Value> indices;
  for (AffineExpr result : map.getResults())
    indices.push_back(loops[cast<AffineDimExpr>(result).getPosition()]);
  return indices;
}

struct GPUReductionKernelsPass
    : public mlir::dt::impl::GPUReductionKernelsPassBase<
          GPUReductionKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (lanes != 0 && lanes != 1) {
      getOperation().emitError("dt-gpu-reduction-kernels: lanes is 0 "
                               "(choose) or 1 (testing), not ")
          << lanes;
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>() && op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      if (std::optional<Accumulation> acc = fits(op))
        rewrite(op, *acc);
  }

  /// The op's accumulation, when the op is a reduction this pass handles.
  std::optional<Accumulation> fits(linalg::LinalgOp op) {
    if (op.getNumDpsInits() != 1 || op->getNumRegions() != 1 ||
        op.getNumReductionLoops() == 0)
      return std::nullopt;
    // Parallel loops first, then the reductions.
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    int64_t parallel = op.getNumParallelLoops();
    for (auto [d, kind] : llvm::enumerate(iterators))
      if ((static_cast<int64_t>(d) < parallel) !=
          (kind == utils::IteratorType::parallel))
        return std::nullopt;
    // The output is indexed by the parallel loops, in order.
    AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (out.getNumResults() != parallel)
      return std::nullopt;
    for (int64_t d = 0; d < parallel; ++d)
      if (out.getResult(d) != getAffineDimExpr(d, op->getContext()))
        return std::nullopt;
    for (OpOperand *input : op.getDpsInputOperands())
      if (isa<ShapedType>(input->get().getType()) &&
          !op.getMatchingIndexingMap(input).isProjectedPermutation())
        return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return std::nullopt;
    int64_t row = 1;
    for (int64_t d = parallel; d < static_cast<int64_t>(ranges.size()); ++d)
      row *= ranges[d];
    if (row < kMinRow && lanes != 1)
      return std::nullopt;
    return matchAccumulation(op);
  }

  void rewrite(linalg::LinalgOp op, const Accumulation &acc) {
    // Every output element is written once (by lane 0 of its row): a fill
    // right before only provides the initial value.
    Value output = op.getDpsInitOperand(0)->get();
    Value filled;
    linalg::FillOp fill = lastFillBefore(op, output);
    if (fill && fill.getInputs()[0].getType() == getElementTypeOrSelf(output)) {
      filled = fill.getInputs()[0];
      fill->erase();
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t parallel = op.getNumParallelLoops();
    ArrayRef<int64_t> rowShape = ArrayRef(ranges).take_front(parallel);
    ArrayRef<int64_t> reduceShape = ArrayRef(ranges).drop_front(parallel);
    int64_t rows = 1, row = 1;
    for (int64_t e : rowShape)
      rows *= e;
    for (int64_t e : reduceShape)
      row *= e;
    // Long rows, or too few rows to fill the GPU with warps: a block each.
    int64_t rowLanes = this->lanes == 1               ? 1
                       : (row >= 1024 || rows <= 128) ? kBlock
                                                      : kWarp;
    int64_t rowsPerBlock = kBlock / rowLanes;
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value grid =
        index(std::max<int64_t>(1, (rows + rowsPerBlock - 1) / rowsPerBlock));
    gpu::LaunchOp launch = createRankLaunch(b, loc, grid, index(kBlock));
    b.setInsertionPointToStart(&launch.getBody().front());

    Value thread = launch.getThreadIds().x;
    Value lane = rowLanes == kBlock
                     ? thread
                     : arith::RemUIOp::create(b, loc, thread, index(rowLanes));
    Value rowIndex = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                              index(rowsPerBlock)),
        arith::DivUIOp::create(b, loc, thread, index(rowLanes)));
    // A warp's rows are whole: the bound check is uniform across the lanes
    // that shuffle together (and always true for a block per row).
    if (rowLanes != kBlock) {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            rowIndex, index(rows));
      auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
      b.setInsertionPointToStart(guard.thenBlock());
    }
    SmallVector<Value> outer = delinearize(b, loc, rowIndex, rowShape);

    // This lane's partial: every `lanes`-th element of the row, in order.
    Value identity = arith::ConstantOp::create(b, loc, acc.identity);
    auto loop = scf::ForOp::create(b, loc, lane, index(row), index(rowLanes),
                                   ValueRange{identity});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> loops = outer;
      llvm::append_range(
          loops, delinearize(b, loc, loop.getInductionVar(), reduceShape));
      Block &region = op->getRegion(0).front();
      IRMapping mapping;
      for (OpOperand *input : op.getDpsInputOperands()) {
        BlockArgument arg = region.getArgument(input->getOperandNumber());
        if (!isa<ShapedType>(input->get().getType())) {
          mapping.map(arg, input->get());
          continue;
        }
        mapping.map(arg,
                    memref::LoadOp::create(
                        b, loc, input->get(),
                        indicesOf(op.getMatchingIndexingMap(input), loops)));
      }
      mapping.map(region.getArgument(op.getNumDpsInputs()),
                  loop.getRegionIterArg(0));
      for (Operation &inner : region.without_terminator()) {
        if (auto linalgIndex = dyn_cast<linalg::IndexOp>(inner)) {
          mapping.map(linalgIndex.getResult(), loops[linalgIndex.getDim()]);
          continue;
        }
        b.clone(inner, mapping);
      }
      scf::YieldOp::create(
          b, loc, mapping.lookup(region.getTerminator()->getOperand(0)));
    }
    Value partial = loop.getResult(0);

    Value total = partial;
    if (rowLanes == kBlock) {
      total = gpu::AllReduceOp::create(
          b, loc, partial,
          gpu::AllReduceOperationAttr::get(b.getContext(), acc.kind),
          /*uniform=*/true);
    } else if (rowLanes == kWarp) {
      for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
        auto shuffle = gpu::ShuffleOp::create(b, loc, total, offset, kWarp,
                                              gpu::ShuffleMode::XOR);
        total =
            combineWith(b, loc, acc.combine, total, shuffle.getShuffleResult());
      }
    }

    // Lane 0 folds the total into the output's initial value.
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0));
    auto store = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(store.thenBlock());
    Value init =
        filled ? filled : memref::LoadOp::create(b, loc, output, outer);
    memref::StoreOp::create(
        b, loc, combineWith(b, loc, acc.combine, init, total), output, outer);
    op->erase();
  }
};
} // namespace
