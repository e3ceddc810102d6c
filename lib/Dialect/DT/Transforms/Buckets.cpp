//===- Buckets.cpp - Which collectives run as one call --------------------===//

#include "dt/Dialect/DT/Transforms/Buckets.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dt;

Operation *mlir::dt::laterReady(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? b : a;
}

Operation *mlir::dt::earlierUse(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? a : b;
}

bool mlir::dt::fits(Operation *ready, Operation *use) {
  return !ready || !use || ready->isBeforeInBlock(use);
}

Operation *mlir::dt::readyIn(Block &block, Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getBlock() == &block ? def : nullptr;
}

Operation *mlir::dt::firstUseIn(Block &block, Value value) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers())
    first = earlierUse(first, block.findAncestorOpInBlock(*user));
  return first;
}

bool mlir::dt::isMadeForItsCollective(Value input) {
  Operation *def = input.getDefiningOp();
  return def && input.hasOneUse() && !def->hasTrait<OpTrait::ConstantLike>() &&
         !isa<RegionBranchOpInterface, CallOpInterface, tensor::ExtractSliceOp,
              tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
              tensor::BitcastOp, tensor::ReshapeOp>(def);
}

void BucketCandidate::setCopies(Block &block, Value input, double inBytes,
                                Value result, double outBytes) {
  fillable = kind != ::dt::CollectiveKind::ReduceScatter &&
             isMadeForItsCollective(input) &&
             input.getDefiningOp()->getBlock() == &block;
  bool returned = llvm::any_of(result.getUsers(), [](Operation *user) {
    return isa<func::ReturnOp>(user);
  });
  copiedIn = inBytes;
  copiedOut =
      kind == ::dt::CollectiveKind::AllGather || returned ? outBytes : 0;
}

bool mlir::dt::isCombinable(::dt::CollectiveKind kind,
                            ArrayRef<int64_t> inShape, int64_t dim, bool even,
                            int64_t groupSize) {
  switch (kind) {
  case ::dt::CollectiveKind::AllReduce:
    return true;
  case ::dt::CollectiveKind::AllToAll:
    return false;
  case ::dt::CollectiveKind::AllGather:
  case ::dt::CollectiveKind::ReduceScatter:
    break;
  }
  if (!even || dim < 0 || dim >= static_cast<int64_t>(inShape.size()) ||
      !llvm::all_of(inShape.take_front(dim),
                    [](int64_t extent) { return extent == 1; }))
    return false;
  return kind == ::dt::CollectiveKind::AllGather ||
         inShape[dim] % groupSize == 0;
}

ComputeTimeline::ComputeTimeline(Block &block,
                                 const ::dt::DeviceModel &device) {
  double total = 0;
  prefix.push_back(0);
  for (Operation &op : block) {
    op.walk([&](Operation *inner) {
      OpWork work = estimateWork(inner);
      total += work.flops / device.flopsPerSecond(work.elementBits);
    });
    index[&op] = prefix.size();
    prefix.push_back(total);
  }
}

double ComputeTimeline::between(Operation *from, Operation *to) const {
  if (!to || from == to)
    return 0;
  double before = from ? prefix[index.lookup(from)] : 0;
  return std::max(0.0, prefix[index.lookup(to)] - before);
}

double Bucket::lostOverlap(ArrayRef<std::pair<Operation *, double>> members,
                           Operation *last) const {
  if (!timeline)
    return 0;
  double lost = 0;
  for (auto [ready, seconds] : members)
    lost += std::min(seconds, timeline->between(ready, last));
  return lost;
}

double Bucket::seconds() const {
  if (members.size() == 1)
    return collectiveSeconds(bytes);
  return collectiveSeconds(bytes) + device.copySeconds(copyBytes) +
         lostOverlap(readies, ready);
}

Bucket::Refusal Bucket::refusal(const BucketCandidate &c, double *combined,
                                double *apart) const {
  if (llvm::is_contained(members, c.ready))
    return Refusal::ReadsMember;
  if (!fits(laterReady(ready, c.ready), earlierUse(firstUse, c.firstUse)))
    return Refusal::Windows;
  SmallVector<std::pair<Operation *, double>> joined(readies);
  joined.push_back({c.ready, collectiveSeconds(c.bytes)});
  double together = collectiveSeconds(bytes + c.bytes) +
                    device.copySeconds(copyBytes + c.copiedOut +
                                       (madeInBufferBy(c) ? 0 : c.copiedIn)) +
                    lostOverlap(joined, laterReady(ready, c.ready));
  double separate = seconds() + collectiveSeconds(c.bytes);
  if (combined)
    *combined = together;
  if (apart)
    *apart = separate;
  return together < separate ? Refusal::None : Refusal::Costlier;
}

bool mlir::dt::isWholeRuns(double bytes) {
  return std::fmod(bytes, kBucketRunAlignment) == 0;
}

SmallVector<Operation *> mlir::dt::bucketLayout(ArrayRef<Operation *> members) {
  SmallVector<Operation *> layout(members);
  std::stable_partition(layout.begin(), layout.end(), [](Operation *op) {
    return isWholeRuns(
        tensorBytes(cast<RankedTensorType>(op->getOperand(0).getType())));
  });
  return layout;
}

bool Bucket::madeInBufferBy(const BucketCandidate &c) const {
  return c.fillable && (isWholeRuns(c.copiedIn) || !unevenMember);
}

void Bucket::add(const BucketCandidate &c) {
  if (members.empty()) {
    kind = c.kind;
    groupSize = c.groupSize;
    link = c.link;
    device = c.device;
    timeline = c.timeline;
  }
  members.push_back(c.op);
  readies.push_back({c.ready, collectiveSeconds(c.bytes)});
  bytes += c.bytes;
  bool made = madeInBufferBy(c);
  madeInBuffer += made;
  copyBytes += c.copiedOut + (made ? 0 : c.copiedIn);
  unevenMember |= !isWholeRuns(c.copiedIn);
  ready = laterReady(ready, c.ready);
  firstUse = earlierUse(firstUse, c.firstUse);
}

size_t Bucketing::offer(const BucketCandidate &c) {
  auto it = open.find(c.key);
  if (it != open.end()) {
    const Bucket &bucket = all[it->second];
    Apart kept{c.op, bucket.members.front(), Bucket::Refusal::None};
    kept.refusal = bucket.refusal(c, &kept.combined, &kept.apart);
    if (kept.refusal == Bucket::Refusal::None) {
      all[it->second].add(c);
      return it->second;
    }
    apart.push_back(kept);
  }
  open[c.key] = all.size();
  all.emplace_back().add(c);
  return all.size() - 1;
}
