//===- CombineCollectives.cpp - dt-combine-collectives --------------------===//
//
// Collectives of one group and kind in one block become one collective of
// their inputs, flattened and concatenated, when the alpha-beta model says
// the latencies saved outweigh the copies into and out of one buffer: DDP's
// gradient buckets (all_reduce) and FSDP's (all_gather of the weights,
// reduce_scatter of their gradients), sized by the cost model instead of a
// fixed cap.
//
// A gather along a dim with only extent-1 dims before it lays the members'
// pieces out one after another, so in flat order it is a gather of the
// flattened pieces: the combined gather's [members x total] result holds
// each tensor's gather in a column block. A reduce_scatter is the mirror
// image: each input is cut into one row per member and the rows of all the
// inputs laid side by side before one reduce_scatter of the whole.
//
// Each collective may run anywhere between the op that makes its input
// ready and the first op that reads its result, so a set of them can run as
// one where those windows overlap. A block is scanned once, in order; each
// kind (op, mesh, axes, reduction, element type) has one open bucket, which
// a new collective joins when the windows still overlap and the model says
// the combined call costs less; otherwise the bucket closes and a new one
// starts. Each closed bucket of two or more becomes one collective where
// its first member was, or right after its last input is made if that comes
// later (the earliest point the program already waited for).
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Buckets.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace mlir::dt {
#define GEN_PASS_DEF_COMBINECOLLECTIVESPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// The reassociation that groups a tensor's dims into one: every dim for a
/// tensor of rank 1 or more, none for a scalar (to or from one element).
SmallVector<ReassociationIndices> oneGroup(int64_t rank) {
  if (rank == 0)
    return {};
  ReassociationIndices all(rank);
  std::iota(all.begin(), all.end(), 0);
  return {all};
}

/// `value` as a 1-D tensor (a scalar tensor becomes one element).
Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value, oneGroup(0));
  return tensor::CollapseShapeOp::create(b, loc, flat, value,
                                         oneGroup(type.getRank()));
}

/// The 1-D `flat` back in `type`'s shape.
Value unflatten(OpBuilder &b, Location loc, Value flat, RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat, oneGroup(0));
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       oneGroup(type.getRank()));
}

struct CombineCollectivesPass
    : public mlir::dt::impl::CombineCollectivesPassBase<
          CombineCollectivesPass> {
  mlir::dt::Statistic numCombined{
      this, "collectives-combined",
      "Number of collectives that became part of a combined one"};
  mlir::dt::Statistic numBuckets{this, "buckets",
                                 "Number of combined collectives created"};
  using Base::Base;

  void runOnOperation() override {
    MeshCache meshes(topology);
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      if (failed(combineIn(*block, meshes)))
        return signalPassFailure();
  }

  LogicalResult combineIn(Block &block, MeshCache &meshes) {
    Bucketing bucketing;
    // One timeline per block and device model (the first mesh's: meshes
    // of one program share their devices).
    std::optional<ComputeTimeline> timeline;
    for (Operation &op : block) {
      if (!isa<AllReduceOp, AllGatherOp, ReduceScatterOp>(op))
        continue;
      Value input = op.getOperand(0), result = op.getResult(0);
      auto inType = cast<RankedTensorType>(input.getType());
      auto outType = cast<RankedTensorType>(result.getType());
      if (getShardingEncoding(outType))
        return op.emitOpError("is still in global form: run dt-partition "
                              "before dt-combine-collectives");
      if (outType.getElementType().isInteger(1))
        continue; // Predicates widen later (dt-widen-predicate-collectives).
      auto meshRef = op.getAttrOfType<FlatSymbolRefAttr>("mesh");
      const MeshInfo *mesh = meshes.lookup(&op, meshRef);
      if (!mesh)
        return failure();
      auto axesAttr = op.getAttrOfType<ArrayAttr>("axes");
      AxisGroup group = axisGroup(*mesh, axesAttr);
      std::optional<::dt::CollectiveKind> kind = combinable(op, group.size);
      if (!kind)
        continue;
      if (overlap && !timeline)
        timeline.emplace(block, mesh->topology.device());
      BucketCandidate candidate;
      candidate.key = {op.getName().getAsOpaquePointer(), meshRef, axesAttr,
                       op.getAttr("reduction"), outType.getElementType()};
      candidate.op = &op;
      candidate.kind = *kind;
      candidate.groupSize = group.size;
      candidate.link = mesh->topology.groupLink(group.axes);
      candidate.device = mesh->topology.device();
      candidate.bytes = localRingBytes(*kind, inType, outType, group.size);
      candidate.setCopies(block, input, tensorBytes(inType), result,
                          tensorBytes(outType));
      candidate.ready = readyIn(block, input);
      candidate.firstUse = firstUseIn(block, result);
      candidate.timeline = overlap ? &*timeline : nullptr;
      bucketing.offer(candidate);
    }
    if (explain)
      explainBuckets(bucketing);
    for (const Bucket &bucket : bucketing.buckets())
      combine(block, bucket);
    return success();
  }

  /// `all_reduce on ["dp"]`: what `op` is, for explanations.
  static std::string describe(Operation *op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << ::dt::collectiveKindName(*collectiveKindOf(op)) << " on "
       << op->getAttr("axes");
    return text;
  }

  /// The remarks of `explain`: each call of several collectives, with its
  /// time against theirs apart, and each collective that could not join
  /// the bucket open before it, with the reason.
  void explainBuckets(const Bucketing &bucketing) {
    for (const Bucket &bucket : bucketing.buckets()) {
      if (bucket.members.size() < 2)
        continue;
      double apart = 0;
      for (auto [ready, seconds] : bucket.readies)
        apart += seconds;
      Operation *first = bucket.members.front();
      InFlightDiagnostic remark = emitRemark(first->getLoc());
      remark << bucket.members.size() << " x " << describe(first)
             << " in one call: " << formatSeconds(bucket.seconds())
             << " against " << formatSeconds(apart) << " apart";
      if (bucket.madeInBuffer)
        remark << " (" << bucket.madeInBuffer << " made in its buffer)";
    }
    for (const Bucketing::Apart &kept : bucketing.kept()) {
      InFlightDiagnostic remark = emitRemark(kept.op->getLoc());
      std::string where = fileLineColumn(kept.openFirst->getLoc());
      remark << describe(kept.op) << " not in one call with the one at "
             << (where.empty() ? "an earlier place" : where) << ": ";
      switch (kept.refusal) {
      case Bucket::Refusal::ReadsMember:
        remark << "it reads that call's result";
        break;
      case Bucket::Refusal::Windows:
        remark << "that call's result is read before this one's input is "
                  "ready";
        break;
      case Bucket::Refusal::Costlier:
        remark << "one call would take " << formatSeconds(kept.combined)
               << " against " << formatSeconds(kept.apart) << " apart";
        break;
      case Bucket::Refusal::None:
        break;
      }
    }
  }

  /// The collective `op` is, when it can join a bucket (isCombinable).
  static std::optional<::dt::CollectiveKind> combinable(Operation &op,
                                                        int64_t groupSize) {
    std::optional<::dt::CollectiveKind> kind = collectiveKindOf(&op);
    if (!kind)
      return std::nullopt;
    auto inType = cast<RankedTensorType>(op.getOperand(0).getType());
    CollectiveDim at = collectiveDimOf(&op);
    if (!isCombinable(*kind, inType.getShape(), at.dim, at.even, groupSize))
      return std::nullopt;
    return kind;
  }

  /// Replaces a bucket of two or more collectives by one, where the first
  /// was or, if an input is made after it, right after the last input is
  /// ready. Positions are taken again: combining an
  /// earlier bucket may have moved an input (the result of one of its
  /// members); a bucket whose window closed that way stays as it is.
  void combine(Block &block, const Bucket &bucket) {
    if (bucket.members.size() < 2)
      return;
    Operation *ready = nullptr, *firstUse = nullptr;
    for (Operation *op : bucket.members) {
      ready = laterReady(ready, readyIn(block, op->getOperand(0)));
      firstUse = earlierUse(firstUse, firstUseIn(block, op->getResult(0)));
    }
    if (!fits(ready, firstUse))
      return;
    // Where the first member was, or after the last input if that comes
    // later.
    OpBuilder b(bucket.members.front());
    if (ready && bucket.members.front()->isBeforeInBlock(ready))
      b.setInsertionPointAfter(ready);
    Location loc = b.getFusedLoc(llvm::to_vector(llvm::map_range(
        bucket.members, [](Operation *op) { return op->getLoc(); })));
    // Inputs laid back to back go in the order that starts the most runs
    // aligned (for dt-fill-buckets-in-place).
    SmallVector<Operation *> members =
        bucket.kind == ::dt::CollectiveKind::ReduceScatter
            ? SmallVector<Operation *>(bucket.members)
            : bucketLayout(bucket.members);
    SmallVector<Value> results;
    switch (bucket.kind) {
    case ::dt::CollectiveKind::AllReduce:
      results = combineReduces(b, loc, members);
      break;
    case ::dt::CollectiveKind::AllGather:
      results = combineGathers(b, loc, members, bucket.groupSize);
      break;
    case ::dt::CollectiveKind::ReduceScatter:
      results = combineScatters(b, loc, members, bucket.groupSize);
      break;
    case ::dt::CollectiveKind::AllToAll:
      llvm_unreachable("all_to_all is never combined");
    }
    for (auto [op, result] : llvm::zip_equal(members, results)) {
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
    numCombined += bucket.members.size();
    ++numBuckets;
  }

  /// One all_reduce of the inputs back to back; each result a slice.
  static SmallVector<Value> combineReduces(OpBuilder &b, Location loc,
                                           ArrayRef<Operation *> members) {
    Value joined = joinFlat(b, loc, members);
    auto first = cast<AllReduceOp>(members.front());
    Value reduced = AllReduceOp::create(
        b, loc, joined.getType(), joined, first.getMeshAttr(),
        first.getAxesAttr(), first.getReductionAttr());
    markCombined(reduced, members.size());
    return sliceBackToBack(b, reduced, members);
  }

  /// One all_gather of the flattened pieces back to back: its [members x
  /// total] result holds each tensor's gather in a column block.
  static SmallVector<Value> combineGathers(OpBuilder &b, Location loc,
                                           ArrayRef<Operation *> members,
                                           int64_t groupSize) {
    Value joined = joinFlat(b, loc, members);
    auto joinedType = cast<RankedTensorType>(joined.getType());
    int64_t total = joinedType.getNumElements();
    Type element = joinedType.getElementType();
    auto first = cast<AllGatherOp>(members.front());
    Value gathered = AllGatherOp::create(
        b, loc, RankedTensorType::get({groupSize * total}, element), joined,
        first.getMeshAttr(), first.getAxesAttr(), b.getI64IntegerAttr(0),
        /*extent=*/nullptr, /*outer_axes=*/nullptr);
    markCombined(gathered, members.size());
    Value rows = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({groupSize, total}, element), gathered,
        oneGroup(2));
    SmallVector<Value> results;
    int64_t offset = 0;
    for (Operation *op : members) {
      Location at = op->getLoc();
      int64_t count =
          cast<RankedTensorType>(op->getOperand(0).getType()).getNumElements();
      Value columns = tensor::ExtractSliceOp::create(
          b, at, rows,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(groupSize),
                                 b.getIndexAttr(count)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
      Value flat = tensor::CollapseShapeOp::create(
          b, at, RankedTensorType::get({groupSize * count}, element), columns,
          oneGroup(2));
      results.push_back(unflatten(
          b, at, flat, cast<RankedTensorType>(op->getResult(0).getType())));
      offset += count;
    }
    return results;
  }

  /// Each input cut into one row per member, the rows of all the inputs side
  /// by side, one reduce_scatter of the whole; each result a slice of the
  /// row this rank keeps.
  static SmallVector<Value> combineScatters(OpBuilder &b, Location loc,
                                            ArrayRef<Operation *> members,
                                            int64_t groupSize) {
    SmallVector<Value> blocks;
    for (Operation *op : members) {
      Value flat = flatten(b, op->getLoc(), op->getOperand(0));
      auto type = cast<RankedTensorType>(flat.getType());
      blocks.push_back(tensor::ExpandShapeOp::create(
          b, op->getLoc(),
          RankedTensorType::get({groupSize, type.getNumElements() / groupSize},
                                type.getElementType()),
          flat, oneGroup(2)));
    }
    Value joined = tensor::ConcatOp::create(b, loc, /*dim=*/1, blocks);
    auto joinedType = cast<RankedTensorType>(joined.getType());
    Type element = joinedType.getElementType();
    int64_t total = joinedType.getNumElements();
    Value flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({total}, element), joined, oneGroup(2));
    auto first = cast<ReduceScatterOp>(members.front());
    Value scattered = ReduceScatterOp::create(
        b, loc, RankedTensorType::get({total / groupSize}, element), flat,
        first.getMeshAttr(), first.getAxesAttr(), first.getReductionAttr(),
        b.getI64IntegerAttr(0), /*extent=*/nullptr, /*outer_axes=*/nullptr);
    markCombined(scattered, members.size());
    return sliceBackToBack(b, scattered, members);
  }

  /// Records on the collective that made `value` how many it replaces.
  static void markCombined(Value value, size_t count) {
    Operation *op = value.getDefiningOp();
    op->setAttr(DTDialect::kCombinedAttrName,
                IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                 static_cast<int64_t>(count)));
  }

  /// The members' inputs, flattened, back to back.
  static Value joinFlat(OpBuilder &b, Location loc,
                        ArrayRef<Operation *> members) {
    SmallVector<Value> flats;
    for (Operation *op : members)
      flats.push_back(flatten(b, op->getLoc(), op->getOperand(0)));
    return tensor::ConcatOp::create(b, loc, /*dim=*/0, flats);
  }

  /// Each member's result, in order, from the 1-D `all` that holds them back
  /// to back.
  static SmallVector<Value> sliceBackToBack(OpBuilder &b, Value all,
                                            ArrayRef<Operation *> members) {
    SmallVector<Value> results;
    int64_t offset = 0;
    for (Operation *op : members) {
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      int64_t count = type.getNumElements();
      Value piece = tensor::ExtractSliceOp::create(
          b, op->getLoc(), all, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(count)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      results.push_back(unflatten(b, op->getLoc(), piece, type));
      offset += count;
    }
    return results;
  }
};
} // namespace
