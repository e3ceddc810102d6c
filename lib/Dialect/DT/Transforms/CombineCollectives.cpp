//===- CombineCollectives.cpp - dt-combine-collectives --------------------===//
//
// All_reduces of one group in one block become one all_reduce of their
// inputs, flattened and concatenated, when the alpha-beta model says the
// latencies saved outweigh the copy into one buffer: DDP's gradient buckets,
// sized by the cost model instead of a fixed cap.
//
// Each all_reduce may run anywhere between the op that makes its input
// ready and the first op that reads its result, so a set of them can run as
// one where those windows overlap. A block is scanned once, in order; each
// kind of all_reduce (mesh, axes, reduction, element type) has one open
// bucket, which a new all_reduce joins when the windows still overlap and
// the model says the combined call costs less; otherwise the bucket closes
// and a new one starts. Each closed bucket of two or more becomes one
// all_reduce right after the last of its inputs is ready (as early as it
// can start: a device overlaps it with the compute that follows).
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"

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
/// All_reduces that may be combined: one mesh, axes, reduction and element
/// type (attributes are uniqued, so their pointers compare).
using BucketKey = std::tuple<Attribute, Attribute, Attribute, Type>;

/// The later of two ops of one block that make inputs ready (null: from
/// before the block).
Operation *laterReady(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? b : a;
}

/// The earlier of two ops of one block that read results (null: none).
Operation *earlierUse(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? a : b;
}

/// Whether a point right after `ready` comes before `use`.
bool fits(Operation *ready, Operation *use) {
  return !ready || !use || ready->isBeforeInBlock(use);
}

struct Bucket {
  SmallVector<AllReduceOp> members;
  /// The op of the block that makes the last input ready (null: they all
  /// come from before the block), and the first op that reads a result
  /// (null: none does).
  Operation *ready = nullptr, *firstUse = nullptr;
  double bytes = 0;
  /// The group's size and link, from the first member.
  int64_t groupSize = 1;
  ::dt::AxisLink link;
  double memoryBytesPerSecond = 1;

  double reduceSeconds(double size) const {
    return ::dt::ringSeconds(::dt::CollectiveKind::AllReduce, groupSize, size,
                             link);
  }
  /// Reading and writing every byte into the combined buffer.
  double copySeconds(double size) const {
    return 2 * size / memoryBytesPerSecond;
  }
  /// The modelled time of the bucket as it stands.
  double seconds() const {
    return members.size() == 1 ? reduceSeconds(bytes)
                               : reduceSeconds(bytes) + copySeconds(bytes);
  }
  /// Whether an all_reduce of `size` bytes whose input is ready at `ready`
  /// and whose result is first read at `firstUse` can run with the bucket,
  /// for less than on its own.
  bool accepts(double size, Operation *ready, Operation *firstUse) const {
    return fits(laterReady(this->ready, ready),
                earlierUse(this->firstUse, firstUse)) &&
           reduceSeconds(bytes + size) + copySeconds(bytes + size) <
               seconds() + reduceSeconds(size);
  }
  void add(AllReduceOp op, double size, Operation *ready, Operation *firstUse) {
    members.push_back(op);
    bytes += size;
    this->ready = laterReady(this->ready, ready);
    this->firstUse = earlierUse(this->firstUse, firstUse);
  }
};

/// The op of `block` that defines `value` (null: it comes from outside).
Operation *readyIn(Block &block, Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getBlock() == &block ? def : nullptr;
}

/// The op of `block` that holds the first use of `value` (null: none).
Operation *firstUseIn(Block &block, Value value) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers())
    first = earlierUse(first, block.findAncestorOpInBlock(*user));
  return first;
}

/// The reassociation that groups a tensor's dims into one: every dim for a
/// tensor of rank 2 or more, none for a scalar (to or from one element).
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
    SmallVector<Bucket> buckets;
    DenseMap<BucketKey, size_t> open;
    for (auto reduce : block.getOps<AllReduceOp>()) {
      auto type = cast<RankedTensorType>(reduce.getType());
      if (getShardingEncoding(type))
        return reduce.emitOpError("is still in global form: run dt-partition "
                                  "before dt-combine-collectives");
      if (type.getElementType().isInteger(1))
        continue; // Predicates widen later (dt-widen-predicate-collectives).
      const MeshInfo *mesh = meshes.lookup(reduce, reduce.getMeshAttr());
      if (!mesh)
        return failure();
      BucketKey key{reduce.getMeshAttr(), reduce.getAxesAttr(),
                    reduce.getReductionAttr(), type.getElementType()};
      double bytes = tensorBytes(type);
      Operation *ready = readyIn(block, reduce.getInput());
      Operation *firstUse = firstUseIn(block, reduce.getResult());
      auto it = open.find(key);
      if (it != open.end() &&
          buckets[it->second].accepts(bytes, ready, firstUse)) {
        buckets[it->second].add(reduce, bytes, ready, firstUse);
        continue;
      }
      Bucket bucket;
      MeshOp meshOp = mesh->op;
      SmallVector<int64_t> axes;
      for (Attribute name : reduce.getAxes()) {
        unsigned axis = *meshOp.getAxisIndex(cast<StringAttr>(name).getValue());
        axes.push_back(axis);
        bucket.groupSize *= mesh->shape[axis];
      }
      bucket.link = mesh->topology.groupLink(axes);
      bucket.memoryBytesPerSecond =
          mesh->topology.device().memoryBytesPerSecond;
      bucket.add(reduce, bytes, ready, firstUse);
      open[key] = buckets.size();
      buckets.push_back(std::move(bucket));
    }
    for (const Bucket &bucket : buckets)
      combine(block, bucket);
    return success();
  }

  /// Replaces a bucket of two or more all_reduces by one, right after the
  /// last of their inputs is ready. Positions are taken again: combining an
  /// earlier bucket may have moved an input (the result of one of its
  /// members); a bucket whose window closed that way stays as it is.
  void combine(Block &block, const Bucket &bucket) {
    if (bucket.members.size() < 2)
      return;
    Operation *ready = nullptr, *firstUse = nullptr;
    for (AllReduceOp op : bucket.members) {
      ready = laterReady(ready, readyIn(block, op.getInput()));
      firstUse = earlierUse(firstUse, firstUseIn(block, op.getResult()));
    }
    if (!fits(ready, firstUse))
      return;
    OpBuilder b(block.getParentOp()->getContext());
    if (ready)
      b.setInsertionPointAfter(ready);
    else
      b.setInsertionPointToStart(&block);
    AllReduceOp last = bucket.members.back();
    Location loc = b.getFusedLoc(llvm::to_vector(llvm::map_range(
        bucket.members, [](AllReduceOp op) { return op.getLoc(); })));
    SmallVector<Value> flats;
    for (AllReduceOp op : bucket.members)
      flats.push_back(flatten(b, op.getLoc(), op.getInput()));
    Value joined = tensor::ConcatOp::create(b, loc, /*dim=*/0, flats);
    Value reduced = AllReduceOp::create(b, loc, joined.getType(), joined,
                                        last.getMeshAttr(), last.getAxesAttr(),
                                        last.getReductionAttr());
    int64_t offset = 0;
    for (AllReduceOp op : bucket.members) {
      auto type = cast<RankedTensorType>(op.getType());
      int64_t count = type.getNumElements();
      Value piece = tensor::ExtractSliceOp::create(
          b, op.getLoc(), reduced,
          ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(count)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      op.getResult().replaceAllUsesWith(unflatten(b, op.getLoc(), piece, type));
      offset += count;
    }
    for (AllReduceOp op : bucket.members)
      op.erase();
    numCombined += bucket.members.size();
    ++numBuckets;
  }
};
} // namespace
