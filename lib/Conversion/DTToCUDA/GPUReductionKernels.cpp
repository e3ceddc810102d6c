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
// Row kernels. A softmax or a norm is reductions over a row followed by
// pointwise ops that read the row and its totals: as separate kernels they
// read the row from DRAM once per op. The ops that follow a reduction over
// the same rows (reductions over the same row, pointwise ops over its
// elements) join its kernel, each a loop of the row's lanes in turn; the
// row's later reads then hit the cache, and totals stay in registers. A
// lane with at most kMaxHeld elements of the row has them unrolled and
// held in registers (HeldElements): the row is loaded once, and a division
// by a total multiplies by its reciprocal (LaneRegisters).
// Pointwise ops over the same loops right before the reduction lead the
// kernel (a residual add before its norm).
// Lanes need no barrier between the ops, because every element written in
// the kernel is read and written again only by the lane that owns it (the
// same buffer and the same indexing map), and a reduction's output is read
// only from the registers every lane holds after the shuffles or
// gpu.all_reduce.
//
// Split reductions. A reduction over outer dims into few outputs (a bias's
// gradient) would run one thread per output over a long serial loop, and
// one over few long rows (a loss) one block per row: either is cut into
// chunks whose partials (a thread per output and chunk, or a block per
// chunk of a row) a second, row, reduction combines.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/GPUUtils.h"
#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/MapVector.h"

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
/// Threads a row kernel must keep busy before later ops join it (128
/// blocks, about one per SM): below that, a block (or warp) per row would
/// leave SMs idle where one thread per point would not.
constexpr int64_t kMinFusedThreads = 32 * 1024;
/// Threads a split reduction aims at (several blocks per SM); a reduction
/// that has them one thread (or block) per output is not split.
constexpr int64_t kSplitThreads = 128 * 1024;
/// Reduced points per chunk (per lane of a chunk's block, for rows), at
/// least, when a reduction is split.
constexpr int64_t kMinChunk = 8;
/// Rows shorter than this are never split.
constexpr int64_t kMinSplitRow = 16 * 1024;
/// The most elements of a row one lane holds in registers: a row kernel
/// whose lanes have at most this many each is unrolled (HeldElements).
constexpr int64_t kMaxHeld = 16;

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
  // Floats of any width dt has (16-bit ones cross lanes as f32, see
  // acrossLanes), and 32- and 64-bit integers.
  if (isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type)) {
    // -0.0, not +0.0: -0.0 + x is x for every x, so a sum of -0.0 started
    // at -0.0 stays -0.0, as the one-thread loop (and the CPU) gives.
    if (isa<arith::AddFOp>(combine))
      set(K::ADD, f(-0.0));
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
  } else if (type.isInteger(32) || type.isInteger(64)) {
    unsigned width = type.getIntOrFloatBitWidth();
    auto integer = [&](const APInt &v) -> TypedAttr {
      return b.getIntegerAttr(type, v);
    };
    if (isa<arith::AddIOp>(combine))
      set(K::ADD, i(0));
    else if (isa<arith::MulIOp>(combine))
      set(K::MUL, i(1));
    else if (isa<arith::MaxSIOp>(combine))
      set(K::MAXSI, integer(APInt::getSignedMinValue(width)));
    else if (isa<arith::MinSIOp>(combine))
      set(K::MINSI, integer(APInt::getSignedMaxValue(width)));
    else if (isa<arith::MaxUIOp>(combine))
      set(K::MAXUI, i(0));
    else if (isa<arith::MinUIOp>(combine))
      set(K::MINUI, integer(APInt::getMaxValue(width)));
    else if (isa<arith::AndIOp>(combine))
      set(K::AND, integer(APInt::getAllOnes(width)));
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

/// `total`, this lane's partial, combined with every other lane's (of its
/// warp, or of its block): warp shuffles or gpu.all_reduce. They carry 32-
/// and 64-bit values, so a 16-bit float crosses lanes as the f32 it
/// extends to (exactly) and is combined in its own type, as the op's body
/// would: only the order of the combining changes.
Value acrossLanes(OpBuilder &b, Location loc, Value total,
                  const Accumulation &acc, int64_t lanes) {
  Type type = total.getType();
  bool narrow = isa<Float16Type, BFloat16Type>(type);
  auto widen = [&](OpBuilder &nb, Value v) -> Value {
    return narrow ? arith::ExtFOp::create(nb, loc, nb.getF32Type(), v) : v;
  };
  auto narrowed = [&](OpBuilder &nb, Value v) -> Value {
    return narrow ? arith::TruncFOp::create(nb, loc, type, v) : v;
  };
  if (lanes != kBlock) {
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      auto shuffle = gpu::ShuffleOp::create(b, loc, widen(b, total), offset,
                                            kWarp, gpu::ShuffleMode::XOR);
      total = combineWith(b, loc, acc.combine, total,
                          narrowed(b, shuffle.getShuffleResult()));
    }
    return total;
  }
  if (!narrow)
    return gpu::AllReduceOp::create(
        b, loc, total,
        gpu::AllReduceOperationAttr::get(b.getContext(), acc.kind),
        /*uniform=*/true);
  // The combining op in its own type, as the all_reduce's body on f32s.
  auto reduce = gpu::AllReduceOp::create(b, loc, widen(b, total),
                                         gpu::AllReduceOperationAttr(),
                                         /*uniform=*/true);
  Type f32 = b.getF32Type();
  Block *body = b.createBlock(&reduce.getBody(), {}, {f32, f32}, {loc, loc});
  OpBuilder nb = OpBuilder::atBlockEnd(body);
  Value combined =
      combineWith(nb, loc, acc.combine, narrowed(nb, body->getArgument(0)),
                  narrowed(nb, body->getArgument(1)));
  gpu::YieldOp::create(nb, loc, widen(nb, combined));
  b.setInsertionPointAfter(reduce);
  return narrowed(b, reduce.getResult());
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

/// How one op of a row kernel touches a buffer.
struct Access {
  Value value;
  /// Over the kernel's loops: the rows' dims, then the row's; none for a
  /// load in the op's body (a gather), whose element is any lane's.
  AffineMap map;
  bool written = false;
  /// The reduction whose output this is: its only writer in the kernel.
  Operation *reducer = nullptr;
  /// Whether every lane holds that reduction's results (its output was
  /// filled, so the initial value needs no load): later ops read them from
  /// registers.
  bool inRegisters = false;
};

/// Whether `later` may follow `earlier` on the same buffer in one row
/// kernel. An element an op writes is read and written afterwards only by
/// the lane that owns it (the same buffer value and map), so lanes need no
/// barrier between ops; a reduction's output is its own, then read from
/// registers.
bool clashes(const Access &earlier, const Access &later) {
  if (later.reducer)
    return true;
  if (earlier.reducer)
    return later.written || !earlier.inRegisters ||
           later.value != earlier.value || later.map != earlier.map;
  if (!earlier.written && !later.written)
    return false;
  return later.value != earlier.value || later.map != earlier.map;
}

/// Whether `op` is a pointwise op over exactly the loops `ranges`: all
/// parallel, each output element written once.
bool isPointwiseOver(linalg::LinalgOp op, ArrayRef<int64_t> ranges) {
  if (op->getNumRegions() != 1 || op.getNumReductionLoops() != 0 ||
      !llvm::equal(op.getStaticLoopRanges(), ranges))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<ShapedType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (op.isDpsInit(&operand) ? !map.isPermutation()
                               : !map.isProjectedPermutation())
      return false;
  }
  return true;
}

/// One kernel with `lanes` lanes per row: a reduction and the ops after it
/// over the same rows (reductions over the same row, pointwise ops over the
/// row's elements), each a loop of the row's lanes in turn.
struct RowKernel {
  SmallVector<int64_t> rowShape, reduceShape;
  int64_t rows = 1, row = 1, lanes = 0; // 32 (a warp) or 256 (a block)
  /// Whether ops after the first may join: a block or warp per row keeps
  /// the GPU busy only when there are rows enough.
  bool fusible = false;
  /// Chunks each row is cut into, for a split reduction (the kernel's only
  /// op), of `chunk` points (the last one may be shorter): their totals go
  /// to `partials[rows..., chunk]`.
  int64_t splits = 1, chunk = 0;
  Value partials;
  SmallVector<linalg::LinalgOp> ops;
  DenseMap<Operation *, Accumulation> accumulations;
  /// The fill a reduction's output starts from, when it is folded in.
  DenseMap<Operation *, linalg::FillOp> fills;
  /// By the buffer's root.
  DenseMap<Value, SmallVector<Access>> accesses;
  llvm::SmallPtrSet<Value, 16> aliases;
  /// Deallocations of the kernel's buffers between its ops: they move after
  /// it (pending: seen after its last op so far).
  SmallVector<Operation *> deferred, pending;

  /// An empty kernel over the rows of `op`, a reduction over its innermost
  /// loops.
  static RowKernel over(linalg::LinalgOp op) {
    RowKernel kernel;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t parallel = op.getNumParallelLoops();
    kernel.rowShape.assign(ranges.begin(), ranges.begin() + parallel);
    kernel.reduceShape.assign(ranges.begin() + parallel, ranges.end());
    for (int64_t e : kernel.rowShape)
      kernel.rows *= e;
    for (int64_t e : kernel.reduceShape)
      kernel.row *= e;
    return kernel;
  }

  SmallVector<int64_t> loopRanges() const {
    SmallVector<int64_t> ranges(rowShape);
    llvm::append_range(ranges, reduceShape);
    return ranges;
  }

  /// Adds `op` (a reduction when `acc` is given) when its accesses keep the
  /// kernel free of races; false, and nothing changed, otherwise.
  bool admit(linalg::LinalgOp op, const Accumulation *acc,
             linalg::FillOp fill) {
    SmallVector<std::pair<Value, Access>> mine;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (!isa<MemRefType>(value.getType()))
        continue;
      Access access{value, op.getMatchingIndexingMap(&operand),
                    op.isDpsInit(&operand)};
      if (acc && access.written) {
        access.reducer = op;
        access.inRegisters = static_cast<bool>(fill);
      }
      mine.emplace_back(bufferRoot(value), access);
    }
    // A buffer the body loads from (a gather: tensor.extract at computed
    // indices) may be read at another lane's element, so no op of the
    // kernel may write it; a body that stores or otherwise touches a
    // buffer from outside the op stays out.
    WalkResult body = op->walk([&](Operation *inner) {
      if (inner == op.getOperation())
        return WalkResult::advance();
      for (Value value : inner->getOperands()) {
        if (!isa<MemRefType>(value.getType()) ||
            op->isAncestor(value.getParentRegion()->getParentOp()))
          continue;
        if (!isa<memref::LoadOp>(inner))
          return WalkResult::interrupt();
        mine.emplace_back(bufferRoot(value), Access{value, AffineMap()});
      }
      return WalkResult::advance();
    });
    if (body.wasInterrupted())
      return false;
    for (auto [i, entry] : llvm::enumerate(mine)) {
      auto &[root, access] = entry;
      if (auto it = accesses.find(root); it != accesses.end())
        for (const Access &earlier : it->second)
          if (clashes(earlier, access))
            return false;
      for (const auto &[otherRoot, earlier] : ArrayRef(mine).take_front(i))
        if (otherRoot == root && clashes(earlier, access))
          return false;
    }
    for (auto &[root, access] : mine) {
      accesses[root].push_back(access);
      addBufferViews(access.value, aliases);
    }
    ops.push_back(op);
    if (acc)
      accumulations[op] = *acc;
    if (fill)
      fills[op] = fill;
    llvm::append_range(deferred, pending);
    pending.clear();
    return true;
  }
};

/// The reduction's output's fill, when it can be folded in: not one that a
/// row kernel already runs as one of its ops (`taken`), which would then be
/// erased twice.
linalg::FillOp foldableFill(linalg::LinalgOp op,
                            const llvm::SmallPtrSetImpl<Operation *> &taken) {
  Value output = op.getDpsInitOperand(0)->get();
  linalg::FillOp fill = lastFillBefore(op, output);
  if (fill && !taken.contains(fill) &&
      fill.getInputs()[0].getType() == getElementTypeOrSelf(output))
    return fill;
  return nullptr;
}

/// The elements one lane of an unrolled row kernel has loaded or stored,
/// by buffer, indexing map and the lane's point (its `point`-th element of
/// the row): a later op of the kernel takes them from registers instead of
/// memory. So the row is read once, as a hand-written softmax keeps its
/// row in registers, and the arithmetic the ops repeat on the same
/// elements (a softmax's exponentials, in its sum and in its output) is the
/// same SSA values, which CSE merges. A store (through a permutation: a
/// pointwise op's output) replaces what a lane holds of the buffer it
/// writes through another view or map, which may be the same element (the
/// kernel's ops never read one another's writes so: clashes); the lane's
/// other points through the same view and map are other elements.
class HeldElements {
public:
  Value load(OpBuilder &b, Location loc, Value buffer, AffineMap map,
             ArrayRef<Value> loops, int64_t point) {
    Value &held = held_[{buffer, map, point}];
    if (!held)
      held = memref::LoadOp::create(b, loc, buffer, indicesOf(map, loops));
    return held;
  }
  void store(OpBuilder &b, Location loc, Value value, Value buffer,
             AffineMap map, ArrayRef<Value> loops, int64_t point) {
    memref::StoreOp::create(b, loc, value, buffer, indicesOf(map, loops));
    Value root = bufferRoot(buffer);
    held_.remove_if([&](const auto &entry) {
      auto [otherBuffer, otherMap, otherPoint] = entry.first;
      return bufferRoot(otherBuffer) == root &&
             (otherBuffer != buffer || otherMap != map);
    });
    held_[{buffer, map, point}] = value;
  }

private:
  llvm::MapVector<std::tuple<Value, AffineMap, int64_t>, Value> held_;
};

/// What every lane of a row kernel holds in registers as it clones the
/// kernel's ops.
struct LaneRegisters {
  /// The totals of the kernel's reductions whose outputs were filled, by
  /// output buffer (the shuffles and gpu.all_reduce give every lane each).
  DenseMap<Value, Value> totals;
  /// An unrolled kernel's elements (null: the kernel loops).
  HeldElements *held = nullptr;

  bool isTotal(Value value) const {
    return llvm::is_contained(llvm::make_second_range(totals), value);
  }
  /// 1 / `total`, computed once, where the total is.
  Value reciprocal(OpBuilder &b, Location loc, Value total) {
    Value &inverse = reciprocals[total];
    if (!inverse) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointAfterValue(total);
      Value one = arith::ConstantOp::create(
          b, loc, b.getFloatAttr(total.getType(), 1.0));
      inverse = arith::DivFOp::create(b, loc, one, total);
    }
    return inverse;
  }

private:
  DenseMap<Value, Value> reciprocals;
};

/// Clones `op`'s payload at the loop point `loops`: shaped inputs are
/// loaded through their maps, or taken from `lane` (a reduction's total
/// every lane holds, or an unrolled kernel's element, at the lane's
/// `point`); `acc` stands for a reduction's accumulator. Returns the
/// yielded values.
///
/// An f32 or f64 division by a total is a multiplication by its reciprocal,
/// computed once (within 1.5 units in the last place of the quotient,
/// against 0.5): the GPU's division is a sequence of some ten instructions
/// with a check for a slow path, and dividing each element of a softmax's
/// row by its sum took half of the bf16 transformer step's softmax kernel
/// (175 us against 90 on an H200).
SmallVector<Value> clonePayload(OpBuilder &b, Location loc, linalg::LinalgOp op,
                                ArrayRef<Value> loops, LaneRegisters *lane,
                                Value acc, int64_t point = 0) {
  HeldElements *held = lane ? lane->held : nullptr;
  Block &body = op->getRegion(0).front();
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = body.getArgument(operand.getOperandNumber());
    Value value = operand.get();
    if (acc && op.isDpsInit(&operand))
      mapping.map(arg, acc);
    else if (!isa<ShapedType>(value.getType()))
      mapping.map(arg, value);
    else if (Value total = lane ? lane->totals.lookup(value) : Value())
      mapping.map(arg, total);
    else if (arg.use_empty())
      continue;
    else if (held)
      mapping.map(arg,
                  held->load(b, loc, value, op.getMatchingIndexingMap(&operand),
                             loops, point));
    else
      mapping.map(arg,
                  memref::LoadOp::create(
                      b, loc, value,
                      indicesOf(op.getMatchingIndexingMap(&operand), loops)));
  }
  for (Operation &inner : body.without_terminator()) {
    if (auto linalgIndex = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(linalgIndex.getResult(), loops[linalgIndex.getDim()]);
      continue;
    }
    if (auto divide = dyn_cast<arith::DivFOp>(inner); divide && lane) {
      Value divisor = mapping.lookupOrDefault(divide.getRhs());
      if (isa<Float32Type, Float64Type>(divisor.getType()) &&
          lane->isTotal(divisor)) {
        mapping.map(divide.getResult(),
                    arith::MulFOp::create(
                        b, loc, mapping.lookupOrDefault(divide.getLhs()),
                        lane->reciprocal(b, loc, divisor),
                        divide.getFastmathAttr()));
        continue;
      }
    }
    b.clone(inner, mapping);
  }
  return llvm::map_to_vector(body.getTerminator()->getOperands(), [&](Value v) {
    return mapping.lookupOrDefault(v);
  });
}

/// A reduction this pass handles: one output, static loop ranges, its
/// reduction loops one run `[first, end)` (`parallel* reduction+
/// parallel*`), its output indexed by the parallel loops in order, its
/// inputs through projected permutations, and an accumulating body.
struct ReductionLoops {
  Accumulation acc;
  int64_t first, end;
};

std::optional<ReductionLoops> matchReductionLoops(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumRegions() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto isReduction = [](utils::IteratorType t) {
    return t == utils::IteratorType::reduction;
  };
  auto first = llvm::find_if(iterators, isReduction);
  auto end = std::find_if_not(first, iterators.end(), isReduction);
  if (std::find_if(end, iterators.end(), isReduction) != iterators.end())
    return std::nullopt;
  int64_t lo = first - iterators.begin(), hi = end - iterators.begin();
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() != static_cast<int64_t>(iterators.size()) - (hi - lo))
    return std::nullopt;
  for (auto [i, result] : llvm::enumerate(out.getResults())) {
    int64_t loop = static_cast<int64_t>(i) < lo ? i : i + (hi - lo);
    if (result != getAffineDimExpr(loop, op->getContext()))
      return std::nullopt;
  }
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<ShapedType>(input->get().getType()) &&
        !op.getMatchingIndexingMap(input).isProjectedPermutation())
      return std::nullopt;
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return std::nullopt;
  std::optional<Accumulation> acc = matchAccumulation(op);
  if (!acc)
    return std::nullopt;
  return ReductionLoops{*acc, lo, hi};
}

struct GPUReductionKernelsPass
    : public mlir::dt::impl::GPUReductionKernelsPassBase<
          GPUReductionKernelsPass> {
  using Base::Base;

  /// The ops the row kernels so far run (their fills are not folded).
  llvm::SmallPtrSet<Operation *, 32> taken;

  void runOnOperation() override {
    taken.clear();
    // Split reductions first: their second halves are row reductions that
    // the row kernels then take.
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>() && op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      if (!splitColumns(op))
        splitRows(op);

    SmallVector<RowKernel, 0> kernels;
    getOperation().walk([&](Block *block) {
      Operation *parent = block->getParentOp();
      if (!isa<gpu::LaunchOp>(parent) &&
          !parent->getParentOfType<gpu::LaunchOp>())
        scan(*block, kernels);
    });
    for (RowKernel &kernel : kernels)
      emit(kernel);
  }

  /// A reduction over outer loops into few outputs (a bias's gradient, a
  /// column sum): one thread per output would leave the GPU nearly idle
  /// with a long serial loop each. Its `K` reduced points are cut into `S`
  /// chunks. A first kernel has one thread per output and chunk (the
  /// outputs' innermost dims fastest, as the loads are), which folds its
  /// chunk into a partial, from the combiner's identity, through the op's
  /// own body. Then a reduction of the `S` partials of each output
  /// (contiguous, a row) into the output, which the row kernels take (with
  /// the output's fill). Returns whether it split `op`.
  bool splitColumns(linalg::LinalgOp op) {
    // parallel* reduction+ parallel+.
    std::optional<ReductionLoops> loops = matchReductionLoops(op);
    if (!loops || loops->end == op.getNumLoops())
      return false;
    int64_t lo = loops->first, hi = loops->end;
    const Accumulation &acc = loops->acc;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    ArrayRef<int64_t> outer = ArrayRef(ranges).take_front(lo),
                      reduced = ArrayRef(ranges).slice(lo, hi - lo),
                      inner = ArrayRef(ranges).drop_front(hi);
    int64_t outputs = 1, points = 1;
    for (int64_t e : outer)
      outputs *= e;
    for (int64_t e : inner)
      outputs *= e;
    for (int64_t e : reduced)
      points *= e;
    // Chunks enough for the threads a GPU needs (at any size, as many as
    // chunks of kMinChunk allow).
    int64_t wanted = anySize ? points : (kSplitThreads + outputs - 1) / outputs;
    auto [chunks, chunk] = cut(points, std::min(wanted, points / kMinChunk));
    if (chunks < 2)
      return false;

    OpBuilder b(op);
    Location loc = op->getLoc();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<int64_t> partialShape(outer);
    llvm::append_range(partialShape, inner);
    partialShape.push_back(chunks);
    Value partial = allocPartials(b, loc, op, partialShape);

    // Kernel 1: a thread per (outer, chunk, inner) point.
    int64_t threads = outputs * chunks;
    gpu::LaunchOp launch = createRankLaunch(
        b, loc, index((threads + kBlock - 1) / kBlock), index(kBlock));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&launch.getBody().front());
      Value linear = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(kBlock)),
          launch.getThreadIds().x);
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            linear, index(threads));
      b.setInsertionPointToStart(
          scf::IfOp::create(b, loc, inRange, /*withElse=*/false).thenBlock());
      SmallVector<int64_t> space(outer);
      space.push_back(chunks);
      llvm::append_range(space, inner);
      SmallVector<Value> coords = delinearize(b, loc, linear, space);
      Value c = coords[lo];
      Value start = arith::MulIOp::create(b, loc, c, index(chunk));
      Value identity = arith::ConstantOp::create(b, loc, acc.identity);
      auto loop = scf::ForOp::create(
          b, loc, index(0), chunkEnd(b, loc, start, chunk, points), index(1),
          ValueRange{identity},
          [&](OpBuilder &nb, Location, Value r, ValueRange carried) {
            SmallVector<Value> point(ArrayRef<Value>(coords).take_front(lo));
            llvm::append_range(
                point,
                delinearize(nb, loc, arith::AddIOp::create(nb, loc, start, r),
                            reduced));
            llvm::append_range(point,
                               ArrayRef<Value>(coords).drop_front(lo + 1));
            scf::YieldOp::create(
                nb, loc, clonePayload(nb, loc, op, point, nullptr, carried[0]));
          });
      SmallVector<Value> at(ArrayRef<Value>(coords).take_front(lo));
      llvm::append_range(at, ArrayRef<Value>(coords).drop_front(lo + 1));
      at.push_back(c);
      memref::StoreOp::create(b, loc, loop.getResult(0), partial, at);
    }

    // Kernel 2: the output combines its partials, a row each.
    combinePartials(b, loc, partial, op, acc.combine);
    op->erase();
    return true;
  }

  /// A reduction over the innermost loops of rows too few to keep a GPU
  /// busy with a block each (a loss, a gradient's norm), over long rows:
  /// each row is cut into `S` chunks, a block per chunk (a row kernel of
  /// `rows x S` rows) writes the chunks' totals, and a reduction of each
  /// row's `S` partials finishes it. At any size, the reductions to a
  /// scalar are split, to test it.
  void splitRows(linalg::LinalgOp op) {
    std::optional<Accumulation> acc = matchReduction(op);
    if (!acc)
      return;
    RowKernel kernel = RowKernel::over(op);
    int64_t wanted, most;
    if (anySize) {
      if (kernel.rows != 1)
        return;
      wanted = most = kernel.row / kMinChunk;
    } else {
      if (kernel.rows * kBlock >= kSplitThreads || kernel.row < kMinSplitRow)
        return;
      wanted =
          (kSplitThreads + kernel.rows * kBlock - 1) / (kernel.rows * kBlock);
      most = kernel.row / (kBlock * kMinChunk);
    }
    std::tie(kernel.splits, kernel.chunk) =
        cut(kernel.row, std::min(wanted, most));
    if (kernel.splits < 2)
      return;
    kernel.lanes = kBlock;
    if (!kernel.admit(op, &*acc, nullptr))
      return;
    OpBuilder b(op);
    Location loc = op->getLoc();
    SmallVector<int64_t> partialShape(kernel.rowShape);
    partialShape.push_back(kernel.splits);
    kernel.partials = allocPartials(b, loc, op, partialShape);
    b.setInsertionPointAfter(op);
    combinePartials(b, loc, kernel.partials, op, acc->combine);
    emit(kernel);
  }

  /// `points` cut into about `count` chunks, as even as can be: the number
  /// of chunks and their length (the last one may be shorter); one chunk
  /// when `count` is below 2.
  static std::pair<int64_t, int64_t> cut(int64_t points, int64_t count) {
    if (count < 2)
      return {1, points};
    int64_t length = llvm::divideCeil(points, count);
    return {llvm::divideCeil(points, length), length};
  }

  /// Where the chunk of `length` points at `start` ends, counted from its
  /// start: `length`, or less for the last one when chunks do not divide
  /// `points` evenly.
  static Value chunkEnd(OpBuilder &b, Location loc, Value start, int64_t length,
                        int64_t points) {
    Value full = arith::ConstantIndexOp::create(b, loc, length);
    if (points % length == 0)
      return full;
    Value left = arith::SubIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, points), start);
    return arith::MinSIOp::create(b, loc, full, left);
  }

  /// A stream-ordered temporary for partials of `op`'s output type.
  static Value allocPartials(OpBuilder &b, Location loc, linalg::LinalgOp op,
                             ArrayRef<int64_t> shape) {
    Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
    return gpu::AllocOp::create(b, loc, MemRefType::get(shape, element),
                                gpu::AsyncTokenType::get(b.getContext()),
                                rankStreamToken(b, loc), ValueRange(),
                                ValueRange(), /*hostShared=*/false)
        .getMemref();
  }

  /// `op`'s output combines the partials (over their last dim) with
  /// `combine`: a reduction the row kernels take, starting from the
  /// output's fill; the partials are freed after it.
  static void combinePartials(OpBuilder &b, Location loc, Value partials,
                              linalg::LinalgOp op, Operation *combine) {
    MLIRContext *ctx = b.getContext();
    int64_t kept = cast<MemRefType>(partials.getType()).getRank() - 1;
    AffineMap identity = AffineMap::getMultiDimIdentityMap(kept + 1, ctx);
    SmallVector<AffineMap> maps = {
        identity, AffineMap::get(kept + 1, 0,
                                 identity.getResults().take_front(kept), ctx)};
    SmallVector<utils::IteratorType> kinds(kept, utils::IteratorType::parallel);
    kinds.push_back(utils::IteratorType::reduction);
    linalg::GenericOp::create(
        b, loc, ValueRange{partials},
        ValueRange{op.getDpsInitOperand(0)->get()}, maps, kinds,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(
              nb, l, combineWith(nb, l, combine, args[1], args[0]));
        });
    gpu::DeallocOp::create(b, loc, gpu::AsyncTokenType::get(ctx),
                           rankStreamToken(b, loc), partials);
  }

  /// Groups `block`'s reductions, and the ops that can join them, into row
  /// kernels, in order. An op in between that joins no kernel stays before
  /// it, so it must not touch the kernel's buffers (deallocations move
  /// after it).
  void scan(Block &block, SmallVector<RowKernel, 0> &kernels) {
    std::optional<RowKernel> open;
    auto close = [&] {
      if (open)
        kernels.push_back(std::move(*open));
      open.reset();
    };
    // The pointwise ops since the last kernel's ops, which a kernel that
    // starts at a reduction after them may take first (a residual add
    // before its norm), and the buffers they use.
    SmallVector<linalg::LinalgOp> prefix;
    llvm::SmallPtrSet<Value, 16> prefixAliases;
    auto forget = [&] {
      prefix.clear();
      prefixAliases.clear();
    };
    for (Operation &op : block) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
      if (linalgOp && !linalgOp.hasPureBufferSemantics())
        linalgOp = nullptr;
      if (open && linalgOp && join(*open, linalgOp)) {
        taken.insert(&op);
        // The prefix would move past it, into a later kernel.
        if (mayAccessAny(&op, prefixAliases))
          forget();
        continue;
      }
      if (open && mayAccessAny(&op, open->aliases)) {
        if (isa<memref::DeallocOp, gpu::DeallocOp>(op) && op.use_empty())
          open->pending.push_back(&op);
        else
          close();
      }
      if (linalgOp)
        if (std::optional<RowKernel> kernel = start(linalgOp, prefix)) {
          close();
          open = std::move(kernel);
          for (linalg::LinalgOp taking : open->ops)
            taken.insert(taking);
          forget();
          continue;
        }
      if (linalgOp && linalgOp->getNumRegions() == 1 &&
          linalgOp.getNumReductionLoops() == 0 &&
          isPointwiseOver(linalgOp, linalgOp.getStaticLoopRanges())) {
        prefix.push_back(linalgOp);
        for (Value operand : op.getOperands())
          if (isa<MemRefType>(operand.getType()))
            addBufferViews(operand, prefixAliases);
      } else if (mayAccessAny(&op, prefixAliases)) {
        // The prefix would move past an op that touches its buffers.
        forget();
      }
    }
    close();
  }

  /// A reduction over the innermost loops that this pass handles.
  static std::optional<Accumulation> matchReduction(linalg::LinalgOp op) {
    std::optional<ReductionLoops> loops = matchReductionLoops(op);
    if (!loops || loops->end != op.getNumLoops())
      return std::nullopt;
    return loops->acc;
  }

  /// A row kernel that starts with `op`, when `op` is a reduction to give
  /// one; the pointwise ops at the end of `prefix` (before `op`, with only
  /// ops that do not touch their buffers in between) over the same loops
  /// come first when they can.
  std::optional<RowKernel> start(linalg::LinalgOp op,
                                 ArrayRef<linalg::LinalgOp> prefix) {
    std::optional<Accumulation> acc = matchReduction(op);
    if (!acc)
      return std::nullopt;
    RowKernel kernel = RowKernel::over(op);
    if (kernel.row < kMinRow && !anySize)
      return std::nullopt;
    // Long rows, or too few rows to fill the GPU with warps: a block each.
    // At any size (the tests' small programs), a warp for rows shorter than
    // a block, so both kinds run.
    if (anySize)
      kernel.lanes = kernel.row < kBlock ? kWarp : kBlock;
    else
      kernel.lanes = kernel.row >= 1024 || kernel.rows <= 128 ? kBlock : kWarp;
    kernel.fusible = anySize || kernel.rows * kernel.lanes >= kMinFusedThreads;
    linalg::FillOp fill = foldableFill(op, taken);
    if (kernel.fusible) {
      // The prefix's ops over the same loops move into the kernel; the
      // others stay where they are, so none may touch the buffers of a
      // chosen op before it.
      SmallVector<int64_t> ranges = kernel.loopRanges();
      SmallVector<linalg::LinalgOp> chosen;
      llvm::SmallPtrSet<Value, 16> chosenAliases;
      for (linalg::LinalgOp p : prefix) {
        if (isPointwiseOver(p, ranges)) {
          chosen.push_back(p);
          for (Value operand : p->getOperands())
            if (isa<MemRefType>(operand.getType()))
              addBufferViews(operand, chosenAliases);
        } else if (mayAccessAny(p, chosenAliases)) {
          chosen.clear();
          chosenAliases.clear();
        }
      }
      RowKernel led = kernel;
      linalg::FillOp ledFill =
          fill && llvm::is_contained(chosen, fill) ? nullptr : fill;
      if (!chosen.empty() &&
          llvm::all_of(chosen,
                       [&](linalg::LinalgOp p) {
                         return led.admit(p, nullptr, nullptr);
                       }) &&
          led.admit(op, &*acc, ledFill))
        return led;
    }
    if (!kernel.admit(op, &*acc, fill))
      return std::nullopt;
    return kernel;
  }

  /// Adds `op` to `kernel` when it runs over the same rows without races.
  bool join(RowKernel &kernel, linalg::LinalgOp op) {
    if (!kernel.fusible)
      return false;
    SmallVector<int64_t> ranges = kernel.loopRanges();
    if (std::optional<Accumulation> acc = matchReduction(op)) {
      if (op.getNumParallelLoops() !=
              static_cast<int64_t>(kernel.rowShape.size()) ||
          !llvm::equal(op.getStaticLoopRanges(), ranges))
        return false;
      return kernel.admit(op, &*acc, foldableFill(op, taken));
    }
    return isPointwiseOver(op, ranges) && kernel.admit(op, nullptr, nullptr);
  }

  /// One launch for the kernel, where its last op was.
  void emit(RowKernel &kernel) {
    Operation *last = kernel.ops.back();
    OpBuilder b(last);
    SmallVector<Location> locations = llvm::map_to_vector(
        kernel.ops, [](linalg::LinalgOp op) { return op->getLoc(); });
    Location loc = b.getFusedLoc(locations);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    int64_t rows = kernel.rows * kernel.splits;
    int64_t rowsPerBlock = kBlock / kernel.lanes;
    Value grid =
        index(std::max<int64_t>(1, (rows + rowsPerBlock - 1) / rowsPerBlock));
    gpu::LaunchOp launch = createRankLaunch(b, loc, grid, index(kBlock));
    b.setInsertionPointToStart(&launch.getBody().front());

    Value thread = launch.getThreadIds().x;
    Value lane =
        kernel.lanes == kBlock
            ? thread
            : arith::RemUIOp::create(b, loc, thread, index(kernel.lanes));
    Value rowIndex = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                              index(rowsPerBlock)),
        arith::DivUIOp::create(b, loc, thread, index(kernel.lanes)));
    // A warp's rows are whole: the bound check is uniform across the lanes
    // that shuffle together (and always true for a block per row).
    if (kernel.lanes != kBlock) {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            rowIndex, index(rows));
      auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
      b.setInsertionPointToStart(guard.thenBlock());
    }
    // A split row's chunk is the last coordinate of the launch's rows.
    SmallVector<int64_t> rowSpace(kernel.rowShape);
    if (kernel.splits > 1)
      rowSpace.push_back(kernel.splits);
    SmallVector<Value> outer = delinearize(b, loc, rowIndex, rowSpace);
    Value chunk, chunkStart, length = index(kernel.row);
    if (kernel.splits > 1) {
      chunk = outer.pop_back_val();
      chunkStart = arith::MulIOp::create(b, loc, chunk, index(kernel.chunk));
      length = chunkEnd(b, loc, chunkStart, kernel.chunk, kernel.row);
    }
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0));

    // A lane with few elements of the row holds them: its elements are
    // unrolled, each op of the kernel a straight run over them, and what
    // one op loads or stores the next takes from registers.
    int64_t perLane = kernel.row / kernel.lanes;
    bool unrolled = kernel.splits == 1 && kernel.row % kernel.lanes == 0 &&
                    perLane <= kMaxHeld;
    HeldElements held;
    SmallVector<SmallVector<Value>> points;
    for (int64_t i = 0; unrolled && i < perLane; ++i) {
      Value n = arith::AddIOp::create(b, loc, lane, index(i * kernel.lanes));
      SmallVector<Value> &loops = points.emplace_back(outer);
      llvm::append_range(loops, delinearize(b, loc, n, kernel.reduceShape));
    }
    // This lane's part of the row, `lanes`-th element after `lanes`-th
    // element, through `body` (which gets the loop point, the lane's
    // element number when unrolled, and the carried values, and returns the
    // values to carry).
    auto laneLoop = [&](ValueRange init,
                        function_ref<SmallVector<Value>(
                            OpBuilder &, ArrayRef<Value>, int64_t, ValueRange)>
                            body) -> SmallVector<Value> {
      if (unrolled) {
        SmallVector<Value> carried(init);
        for (auto [i, loops] : llvm::enumerate(points))
          carried = body(b, loops, i, carried);
        return carried;
      }
      auto loop = scf::ForOp::create(
          b, loc, lane, length, index(kernel.lanes), init,
          [&](OpBuilder &nb, Location, Value n, ValueRange carried) {
            if (chunkStart)
              n = arith::AddIOp::create(nb, loc, chunkStart, n);
            SmallVector<Value> loops(outer);
            llvm::append_range(loops,
                               delinearize(nb, loc, n, kernel.reduceShape));
            scf::YieldOp::create(nb, loc, body(nb, loops, 0, carried));
          });
      return loop.getResults();
    };
    LaneRegisters registers;
    registers.held = unrolled ? &held : nullptr;

    for (linalg::LinalgOp op : kernel.ops) {
      auto acc = kernel.accumulations.find(op);
      if (acc == kernel.accumulations.end()) {
        laneLoop({}, [&](OpBuilder &nb, ArrayRef<Value> loops, int64_t point,
                         ValueRange) {
          SmallVector<Value> results =
              clonePayload(nb, loc, op, loops, &registers, nullptr, point);
          for (auto [init, result] :
               llvm::zip_equal(op.getDpsInitsMutable(), results)) {
            AffineMap map = op.getMatchingIndexingMap(&init);
            if (registers.held)
              registers.held->store(nb, loc, result, init.get(), map, loops,
                                    point);
            else
              memref::StoreOp::create(nb, loc, result, init.get(),
                                      indicesOf(map, loops));
          }
          return SmallVector<Value>();
        });
        continue;
      }
      Operation *combine = acc->second.combine;
      Value identity = arith::ConstantOp::create(b, loc, acc->second.identity);
      Value total = laneLoop(identity, [&](OpBuilder &nb, ArrayRef<Value> loops,
                                           int64_t point, ValueRange carried) {
        return clonePayload(nb, loc, op, loops, &registers, carried[0], point);
      })[0];
      total = acrossLanes(b, loc, total, acc->second, kernel.lanes);
      if (kernel.partials) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(
            scf::IfOp::create(b, loc, isFirst, /*withElse=*/false).thenBlock());
        SmallVector<Value> at(outer);
        at.push_back(chunk);
        memref::StoreOp::create(b, loc, total, kernel.partials, at);
        continue;
      }
      // Every lane knows a filled output's initial value, so every lane
      // holds the result; otherwise lane 0 alone loads and combines.
      Value output = op.getDpsInitOperand(0)->get();
      Value result;
      if (linalg::FillOp fill = kernel.fills.lookup(op)) {
        result = combineWith(b, loc, combine, fill.getInputs()[0], total);
        registers.totals[output] = result;
      }
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(
          scf::IfOp::create(b, loc, isFirst, /*withElse=*/false).thenBlock());
      if (!result)
        result =
            combineWith(b, loc, combine,
                        memref::LoadOp::create(b, loc, output, outer), total);
      memref::StoreOp::create(b, loc, result, output, outer);
    }

    Operation *after = launch;
    for (Operation *dealloc : kernel.deferred) {
      dealloc->moveAfter(after);
      after = dealloc;
    }
    for (auto &[op, fill] : kernel.fills)
      eraseFill(fill);
    for (linalg::LinalgOp op : kernel.ops)
      op->erase();
  }
};
} // namespace
