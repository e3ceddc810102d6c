//===- FillBucketsInPlace.cpp - dt-fill-buckets-in-place ------------------===//
//
// A combined collective's bucket (dt-combine-collectives: a tensor.concat
// of its members, flattened) bufferizes to a fresh buffer and one copy per
// member, of the member's own buffer into its run of the bucket. When that
// buffer is a temporary of the same block that nothing touches after the
// copy, it can be that run from the start: the ops that make the member
// (a gradient's matmul, its fill) then write the bucket in place, and the
// copy, of a run onto itself, goes. This is DDP's "gradients as bucket
// views", found by the compiler: a copy of every bucketed byte saved, which
// on the CPU costs about what the collective does.
//
// The bucket becomes bytes, and the bucket and each member it takes in
// views of them (memref.view: the same types, identity layouts, so every
// user stays as it was). The bucket's allocation moves up to before its
// first member's. A member's run must start at a multiple of 64 bytes (the
// alignment its own allocation had), and no op between the member's
// allocation and its copy may touch the bucket except copies into other
// runs, so the run holds nothing anyone reads before the copy, as the
// member's fresh allocation held nothing.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/Transforms/Buckets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dt {
#define GEN_PASS_DEF_FILLBUCKETSINPLACEPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// A run [offset, offset + size) of a bucket's elements.
struct Run {
  int64_t offset, size;

  bool overlaps(const Run &other) const {
    return offset < other.offset + other.size &&
           other.offset < offset + size;
  }
};

/// A member the bucket takes in: its allocation, its copy into the bucket
/// and the run the copy writes.
struct Member {
  memref::AllocOp alloc;
  memref::CopyOp copy;
  Run run;
};

/// The bucket `copy` writes a run of, with the run: its target is a static
/// unit-stride subview of a one-dimensional allocation of `block`.
std::optional<std::pair<memref::AllocOp, Run>> bucketRun(memref::CopyOp copy,
                                                         Block &block) {
  auto subview = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return std::nullopt;
  auto bucket = subview.getSource().getDefiningOp<memref::AllocOp>();
  if (!bucket || bucket->getBlock() != &block ||
      !isPlainBufferType(bucket.getType()) || bucket.getType().getRank() != 1)
    return std::nullopt;
  ArrayRef<int64_t> offsets = subview.getStaticOffsets(),
                    sizes = subview.getStaticSizes(),
                    strides = subview.getStaticStrides();
  if (offsets.size() != 1 || ShapedType::isDynamic(offsets[0]) ||
      ShapedType::isDynamic(sizes[0]) || strides[0] != 1)
    return std::nullopt;
  return std::make_pair(bucket, Run{offsets[0], sizes[0]});
}

/// The allocation `value` reshapes (through expand and collapse shapes,
/// which keep its elements' order), if it is one.
memref::AllocOp reshapedAllocation(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      value = collapse.getSrc();
    else if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      value = expand.getSrc();
    else
      return dyn_cast<memref::AllocOp>(def);
  }
  return {};
}

/// `copy` as a member of the bucket it writes, if its source is a
/// temporary of `block` that can be its run (the file comment).
std::optional<std::pair<memref::AllocOp, Member>>
memberOf(memref::CopyOp copy, Block &block,
         const DenseMap<Operation *, int64_t> &at) {
  std::optional<std::pair<memref::AllocOp, Run>> target =
      bucketRun(copy, block);
  if (!target)
    return std::nullopt;
  auto [bucket, run] = *target;
  memref::AllocOp alloc = reshapedAllocation(copy.getSource());
  if (!alloc || alloc->getBlock() != &block ||
      !isPlainBufferType(alloc.getType()) ||
      alloc.getType().getElementType() != bucket.getType().getElementType() ||
      alloc.getType().getNumElements() != run.size)
    return std::nullopt;
  int64_t elementBytes = bucket.getType().getElementTypeBitWidth() / 8;
  if (run.offset * elementBytes % kBucketRunAlignment != 0)
    return std::nullopt;

  // Nothing touches the member after its copy.
  int64_t from = at.lookup(alloc), to = at.lookup(copy);
  llvm::SmallPtrSet<Value, 16> views;
  addBufferViews(alloc.getMemref(), views);
  for (Value view : views)
    for (Operation *user : view.getUsers()) {
      Operation *op = block.findAncestorOpInBlock(*user);
      if (!op || (op != copy && at.lookup(op) >= to))
        return std::nullopt;
    }

  // Between the member's allocation and its copy, the bucket is only
  // written by copies into other runs (and viewed).
  llvm::SmallPtrSet<Value, 16> bucketViews;
  addBufferViews(bucket.getMemref(), bucketViews);
  for (Value view : bucketViews)
    for (Operation *user : view.getUsers()) {
      Operation *op = block.findAncestorOpInBlock(*user);
      if (!op)
        return std::nullopt;
      int64_t position = at.lookup(op);
      if (op == copy || position <= from || position >= to ||
          isMemoryEffectFree(op))
        continue;
      auto other = dyn_cast<memref::CopyOp>(op);
      std::optional<std::pair<memref::AllocOp, Run>> written =
          other ? bucketRun(other, block) : std::nullopt;
      if (!written || written->first != bucket ||
          written->second.overlaps(run))
        return std::nullopt;
    }
  return std::make_pair(bucket, Member{alloc, copy, run});
}

/// Makes `bucket` bytes and each of `members` a view of its run in them.
void fillInPlace(memref::AllocOp bucket, MutableArrayRef<Member> members) {
  Operation *first = bucket;
  for (Member &member : members)
    if (member.alloc->isBeforeInBlock(first))
      first = member.alloc;
  MemRefType type = bucket.getType();
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  OpBuilder b(first);
  Location loc = bucket.getLoc();
  auto bytesType =
      MemRefType::get({type.getNumElements() * elementBytes},
                      IntegerType::get(b.getContext(), 8));
  int64_t alignment =
      std::max<int64_t>(kBucketRunAlignment, bucket.getAlignment().value_or(0));
  Value bytes = memref::AllocOp::create(b, loc, bytesType, ValueRange(),
                                        b.getI64IntegerAttr(alignment));
  auto viewAt = [&](OpBuilder &at, MemRefType viewType, int64_t offset) {
    Value shift = arith::ConstantIndexOp::create(at, loc, offset);
    return memref::ViewOp::create(at, loc, viewType, bytes, shift,
                                  ValueRange());
  };
  bucket.replaceAllUsesWith(viewAt(b, type, 0).getResult());
  bucket.erase();
  for (Member &member : members) {
    OpBuilder at(member.alloc);
    member.alloc.replaceAllUsesWith(
        viewAt(at, member.alloc.getType(), member.run.offset * elementBytes)
            .getResult());
    member.alloc.erase();
    // A copy of the run onto itself (the views only it used are left to
    // canonicalization).
    member.copy.erase();
  }
}

void fillBucketsInPlace(Block &block) {
  DenseMap<Operation *, int64_t> at;
  for (auto [i, op] : llvm::enumerate(block))
    at[&op] = static_cast<int64_t>(i);
  llvm::MapVector<Operation *, SmallVector<Member>> buckets;
  for (auto copy : block.getOps<memref::CopyOp>())
    if (std::optional<std::pair<memref::AllocOp, Member>> member =
            memberOf(copy, block, at))
      buckets[member->first].push_back(member->second);
  for (auto &[bucket, members] : buckets) {
    // Runs written by two members' copies stay copies (the later ones).
    SmallVector<Member> disjoint;
    for (const Member &member : members)
      if (llvm::none_of(disjoint, [&](const Member &kept) {
            return kept.run.overlaps(member.run) || kept.alloc == member.alloc;
          }))
        disjoint.push_back(member);
    fillInPlace(cast<memref::AllocOp>(bucket), disjoint);
  }
}

struct FillBucketsInPlacePass
    : public mlir::dt::impl::FillBucketsInPlacePassBase<
          FillBucketsInPlacePass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      fillBucketsInPlace(*block);
  }
};
} // namespace
