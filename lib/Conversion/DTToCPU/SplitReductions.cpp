//===- SplitReductions.cpp - dt-split-reductions --------------------------===//
//
// A floating-point reduction along the innermost loop is one long chain of
// dependent adds: LLVM keeps its order (it may not reassociate), so the loop
// runs at one element per add latency and never vectorizes. Here such a
// reduction accumulates into 16 lanes instead, element j into lane j mod 16,
// and the lanes are combined after: the inner loop is parallel and
// vectorizes, and the order of the additions is fixed by the program, the
// same on every CPU (reassociating in LLVM would make it depend on the
// vector width of the machine that compiled it). A length the lanes do not
// divide leaves a remainder of fewer than 16 elements, which goes into the
// first lanes by the same rule. A masked body (an uneven shard's padding,
// select(j < valid, acc + x, acc)) keeps its mask, with j rebuilt as the
// element's place in the row. A reduction of several outputs (a sum and a
// sum of squares in one pass) gets lanes for each.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dt {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The lanes a split reduction accumulates into: one 512-bit vector of f32.
static constexpr int64_t kLanes = 16;
/// Shorter reductions are left alone: the lanes' buffer and their combining
/// would cost more than the chain.
static constexpr int64_t kShortest = 4 * kLanes;

namespace {
/// A reduction `dt-split-reductions` splits, and for each of its outputs the
/// op that combines the accumulator with each element and the value its
/// lanes start at.
struct Splittable {
  linalg::GenericOp op;
  SmallVector<Operation *> combiners;
  SmallVector<TypedAttr> neutrals;
};
} // namespace

/// The reassociation that splits the last dim of a memref of `rank` dims
/// into steps and lanes.
static SmallVector<ReassociationIndices> splitLast(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i + 1 < rank; ++i)
    groups.push_back({i});
  groups.push_back({rank - 1, rank});
  return groups;
}

/// The part [begin, begin + length) of the last dim of `value`, a static
/// memref (the whole of it where that is all of the dim).
static Value lastDimPart(OpBuilder &b, Location loc, Value value, int64_t begin,
                         int64_t length) {
  auto type = cast<MemRefType>(value.getType());
  if (begin == 0 && type.getShape().back() == length)
    return value;
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  offsets.back() = b.getIndexAttr(begin);
  sizes.back() = b.getIndexAttr(length);
  return memref::SubViewOp::create(b, loc, value, offsets, sizes, strides);
}

/// The type of the first `length` elements of the last dim of `type`, a
/// static strided memref.
static MemRefType lastDimPrefix(MemRefType type, int64_t length) {
  if (type.getShape().back() == length)
    return type;
  int64_t rank = type.getRank();
  SmallVector<int64_t> sizes(type.getShape());
  sizes.back() = length;
  return memref::SubViewOp::inferResultType(type, SmallVector<int64_t>(rank, 0),
                                            sizes,
                                            SmallVector<int64_t>(rank, 1));
}

/// The shape of `type` with its last dim split into steps and lanes, and
/// the type of that view.
static FailureOr<MemRefType> lanesView(MemRefType type) {
  if (!type.hasStaticShape() || type.getRank() == 0 ||
      type.getShape().back() % kLanes != 0)
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() /= kLanes;
  shape.push_back(kLanes);
  return memref::ExpandShapeOp::computeExpandedType(type, shape,
                                                    splitLast(type.getRank()));
}

/// The value the lanes of `combiner` start at. For addf that is -0.0, not
/// upstream's +0.0: -0.0 + x is x for every x, so a row of -0.0 sums to
/// -0.0, as the chain gives.
static std::optional<TypedAttr> neutralElement(Operation *combiner) {
  if (!isa<arith::AddFOp>(combiner))
    return arith::getNeutralElement(combiner);
  auto type = cast<FloatType>(combiner->getResult(0).getType());
  return FloatAttr::get(
      type, APFloat::getZero(type.getFloatSemantics(), /*Negative=*/true));
}

/// The combiner of the output whose accumulator is `acc` in `body`, when
/// the body yields `combined` for it as combine(acc, x) or select(c,
/// combine(acc, x), acc) (an uneven shard's padding masked off), where only
/// those two read acc and their results go only to the yield: neither x nor
/// c nor any other output depends on acc.
static Operation *combinerOf(Block &body, BlockArgument acc, Value combined) {
  if (!isa<FloatType>(acc.getType()) || !combined.hasOneUse())
    return nullptr;
  Operation *mask = nullptr;
  if (auto select = combined.getDefiningOp<arith::SelectOp>();
      select && select.getFalseValue() == acc && select.getCondition() != acc &&
      select.getTrueValue() != acc) {
    mask = select;
    combined = select.getTrueValue();
    if (!combined.hasOneUse())
      return nullptr;
  }
  Operation *combiner = combined.getDefiningOp();
  if (!combiner || combiner->getBlock() != &body ||
      llvm::any_of(
          acc.getUsers(),
          [&](Operation *user) { return user != combiner && user != mask; }) ||
      combiner->getNumOperands() != 2 ||
      llvm::count(combiner->getOperands(), acc) != 1 ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(combiner))
    return nullptr;
  return combiner;
}

/// `op`, when it is a floating-point reduction along its last loop (the
/// innermost), of a static length of at least kShortest, into static
/// outputs it does not read as inputs, each accumulated by one combiner
/// (combinerOf), and which every input reads along its last dim.
static std::optional<Splittable> splittable(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0)
    return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (loops == 0 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t length = ranges.back();
  if (ShapedType::isDynamic(length) || length < kShortest)
    return std::nullopt;

  Splittable s{op, {}, {}};
  Block &body = op.getRegion().front();
  unsigned firstAcc = op.getNumDpsInputs();
  for (OpOperand &out : op.getDpsInitsMutable()) {
    unsigned i = out.getOperandNumber() - firstAcc;
    Operation *combiner = combinerOf(body, body.getArgument(firstAcc + i),
                                     body.getTerminator()->getOperand(i));
    std::optional<TypedAttr> neutral =
        combiner ? neutralElement(combiner) : std::nullopt;
    if (!neutral)
      return std::nullopt;
    s.combiners.push_back(combiner);
    s.neutrals.push_back(*neutral);
    if (!cast<MemRefType>(out.get().getType()).hasStaticShape() ||
        op.getMatchingIndexingMap(&out).isFunctionOfDim(loops - 1) ||
        llvm::is_contained(op.getDpsInputs(), out.get()) ||
        llvm::count(op.getDpsInits(), out.get()) != 1)
      return std::nullopt;
  }
  // The lanes are contiguous in every input that reads along the loop (an
  // input may also not depend on it, as a broadcast row does).
  AffineExpr last = getAffineDimExpr(loops - 1, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto [i, result] : llvm::enumerate(map.getResults())) {
      if (!result.isFunctionOfDim(loops - 1))
        continue;
      auto type = cast<MemRefType>(input->get().getType());
      if (result != last || i + 1 != map.getNumResults() ||
          !type.hasStaticShape() || !type.isStrided() ||
          failed(lanesView(lastDimPrefix(type, length - length % kLanes))))
        return std::nullopt;
    }
  }
  return s;
}

/// Replaces each `linalg.index` of the reduced loop, `loops - 1`, in the body
/// of `op` by what `position` builds in its place: where the element the
/// body now sees lies in the original row (an uneven shard's mask compares
/// it with the row's valid length).
static void reindexLast(linalg::GenericOp op, unsigned loops,
                        function_ref<Value(OpBuilder &, Location)> position) {
  SmallVector<linalg::IndexOp> uses;
  op.getRegion().walk([&](linalg::IndexOp index) {
    if (index.getDim() == loops - 1)
      uses.push_back(index);
  });
  for (linalg::IndexOp index : uses) {
    OpBuilder b(index);
    index.replaceAllUsesWith(position(b, index.getLoc()));
    index.erase();
  }
}

/// Rewrites the reduction into a lanes' buffer per output, filled with its
/// combiner's neutral element; the loop over the reduction's whole steps of
/// 16 elements, each one element into each lane (the innermost loop,
/// parallel); the remainder, element k into lane k (a parallel loop of
/// fewer than 16); and a reduction of each output's lanes into it, in lane
/// order.
static void split(const Splittable &s) {
  linalg::GenericOp op = s.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned loops = op.getNumLoops();
  int64_t length = op.getStaticLoopRanges().back();
  int64_t remainder = length % kLanes, whole = length - remainder;

  // The lanes of each output: its shape, then one dim of kLanes.
  SmallVector<Value> lanes;
  for (auto [out, neutral] : llvm::zip(op.getDpsInits(), s.neutrals)) {
    auto outType = cast<MemRefType>(out.getType());
    SmallVector<int64_t> laneShape(outType.getShape());
    laneShape.push_back(kLanes);
    auto laneType = MemRefType::get(laneShape, outType.getElementType());
    lanes.push_back(memref::AllocOp::create(b, loc, laneType, ValueRange(),
                                            b.getI64IntegerAttr(64)));
    Value start = arith::ConstantOp::create(b, loc, neutral);
    linalg::FillOp::create(b, loc, ValueRange{start}, ValueRange{lanes.back()});
  }

  // Loop `loops - 1` now counts steps of kLanes elements; loop `loops` is
  // the lane. An input read along the reduction is read through a view of
  // it with its last dim split the same way.
  AffineExpr step = getAffineDimExpr(loops - 1, ctx);
  AffineExpr lane = getAffineDimExpr(loops, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<AffineExpr> results(map.getResults());
    Value value = input->get();
    if (map.isFunctionOfDim(loops - 1)) {
      value = lastDimPart(b, loc, value, 0, whole);
      auto type = cast<MemRefType>(value.getType());
      results.back() = step;
      results.push_back(lane);
      value = memref::ExpandShapeOp::create(b, loc, *lanesView(type), value,
                                            splitLast(type.getRank()));
    }
    inputs.push_back(value);
    maps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
  }
  for (OpOperand &out : op.getDpsInitsMutable()) {
    SmallVector<AffineExpr> laneResults(
        op.getMatchingIndexingMap(&out).getResults());
    laneResults.push_back(lane);
    maps.push_back(AffineMap::get(loops + 1, 0, laneResults, ctx));
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::parallel);

  auto steps = linalg::GenericOp::create(b, loc, TypeRange(), inputs, lanes,
                                         maps, iterators);

  // The remainder: the same loops with the last one over the remainder's
  // elements, each into its own lane (so parallel).
  if (remainder != 0) {
    SmallVector<Value> rest;
    for (OpOperand *input : op.getDpsInputOperands()) {
      bool alongLoop =
          op.getMatchingIndexingMap(input).isFunctionOfDim(loops - 1);
      rest.push_back(alongLoop
                         ? lastDimPart(b, loc, input->get(), whole, remainder)
                         : input->get());
    }
    SmallVector<Value> restLanes;
    SmallVector<AffineMap> restMaps = op.getIndexingMapsArray();
    for (OpOperand &out : op.getDpsInitsMutable()) {
      unsigned i = out.getOperandNumber() - op.getNumDpsInputs();
      restLanes.push_back(lastDimPart(b, loc, lanes[i], 0, remainder));
      SmallVector<AffineExpr> restLane(
          op.getMatchingIndexingMap(&out).getResults());
      restLane.push_back(getAffineDimExpr(loops - 1, ctx));
      restMaps[out.getOperandNumber()] =
          AffineMap::get(loops, 0, restLane, ctx);
    }
    SmallVector<utils::IteratorType> restIterators = op.getIteratorTypesArray();
    restIterators.back() = utils::IteratorType::parallel;
    auto tail = linalg::GenericOp::create(b, loc, TypeRange(), rest, restLanes,
                                          restMaps, restIterators);
    IRMapping mapping;
    op.getRegion().cloneInto(&tail.getRegion(), mapping);
    // Element k of the remainder is element whole + k of the row.
    reindexLast(tail, loops, [&](OpBuilder &nb, Location nloc) {
      Value k = linalg::IndexOp::create(nb, nloc, loops - 1);
      return arith::AddIOp::create(
          nb, nloc, k, arith::ConstantIndexOp::create(nb, nloc, whole));
    });
  }
  steps.getRegion().takeBody(op.getRegion());
  // Element (step, lane) is element step * kLanes + lane of the row.
  reindexLast(steps, loops, [&](OpBuilder &nb, Location nloc) {
    Value stepIndex = linalg::IndexOp::create(nb, nloc, loops - 1);
    Value laneIndex = linalg::IndexOp::create(nb, nloc, loops);
    Value first = arith::MulIOp::create(
        nb, nloc, stepIndex, arith::ConstantIndexOp::create(nb, nloc, kLanes));
    return arith::AddIOp::create(nb, nloc, first, laneIndex);
  });

  // Each output: out = combine(out, lanes[..., 0]), then lanes[..., 1], ...
  Block &body = steps.getRegion().front();
  for (auto [i, out] : llvm::enumerate(op.getDpsInits())) {
    unsigned rank = cast<MemRefType>(out.getType()).getRank();
    AffineMap all = b.getMultiDimIdentityMap(rank + 1);
    AffineMap dropLane =
        AffineMap::get(rank + 1, 0, all.getResults().drop_back(), ctx);
    SmallVector<utils::IteratorType> combineIterators(
        rank, utils::IteratorType::parallel);
    combineIterators.push_back(utils::IteratorType::reduction);
    Operation *combiner = s.combiners[i];
    bool accFirst =
        combiner->getOperand(0) == body.getArgument(op.getNumDpsInputs() + i);
    linalg::GenericOp::create(
        b, loc, TypeRange(), ValueRange{lanes[i]}, ValueRange{out},
        ArrayRef<AffineMap>{all, dropLane}, combineIterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Value element = args[0], acc = args[1];
          IRMapping mapping;
          mapping.map(combiner->getOperand(accFirst ? 0 : 1), acc);
          mapping.map(combiner->getOperand(accFirst ? 1 : 0), element);
          Operation *combined = nb.clone(*combiner, mapping);
          linalg::YieldOp::create(nb, nloc, combined->getResult(0));
        });
  }
  for (Value buffer : lanes)
    memref::DeallocOp::create(b, loc, buffer);
  op.erase();
}

/// The remark `dt-compile --explain` makes at a reduction `s` splits: its
/// length, what it combines and the order.
static void explainSplit(const Splittable &s) {
  linalg::GenericOp op = s.op;
  int64_t length = op.getStaticLoopRanges().back();
  InFlightDiagnostic remark = op->emitRemark();
  remark << "reduction of " << length << " elements a row (";
  llvm::interleaveComma(s.combiners, remark, [&](Operation *combiner) {
    remark << combiner->getName().getStringRef();
  });
  remark << ") split into " << kLanes << " lanes: element j into lane j mod "
         << kLanes << ", the lanes combined in lane order after, the same "
         << "order on every CPU (a sum or a product may differ by rounding "
            "from one taken one element after the other)";
}

namespace {
struct SplitReductionsPass
    : public mlir::dt::impl::SplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;
  mlir::dt::Statistic numSplit{this, "split", "Reductions split into lanes"};
  void runOnOperation() override {
    SmallVector<Splittable> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Splittable> s = splittable(op))
        reductions.push_back(*s);
    });
    for (const Splittable &s : reductions) {
      if (explain)
        explainSplit(s);
      split(s);
    }
    numSplit += reductions.size();
  }
};
} // namespace
