//===- Buckets.h - Which collectives run as one call ------------*- C++ -*-===//
//
// The bucketing dt-combine-collectives applies and dt-cost-report prices:
// collectives of one kind in one block whose windows (from the op that makes
// the input ready to the first op that reads the result) overlap run as one
// call when the alpha-beta model says the latencies saved outweigh the
// copies into and out of the combined buffer (none into it for an input
// made there: dt-fill-buckets-in-place).
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_TRANSFORMS_BUCKETS_H
#define DT_DIALECT_DT_TRANSFORMS_BUCKETS_H

#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "mlir/IR/Block.h"

#include <tuple>
#include <vector>

namespace mlir::dt {

/// The later of two ops of one block that make inputs ready (null: from
/// before the block).
Operation *laterReady(Operation *a, Operation *b);

/// The earlier of two ops of one block that read results (null: none).
Operation *earlierUse(Operation *a, Operation *b);

/// Whether a point right after `ready` comes before `use`: a window that is
/// not empty.
bool fits(Operation *ready, Operation *use);

/// The op of `block` that makes `value` (null: it comes from outside).
Operation *readyIn(Block &block, Value value);

/// The op of `block` that holds the first use of `value` (null: none).
Operation *firstUseIn(Block &block, Value value);

/// Where a member's run in a combined buffer must start, in bytes, for
/// dt-fill-buckets-in-place to make the member there (the alignment
/// bufferization gives every allocation).
constexpr int64_t kBucketRunAlignment = 64;

/// Whether `bytes` is a whole number of kBucketRunAlignment: a member of
/// that size leaves the next run aligned.
bool isWholeRuns(double bytes);

/// Whether `input`, as the only operand of a collective that combines it,
/// can be made in the combined buffer (dt-fill-buckets-in-place): an op
/// makes it for that collective alone, writing a buffer of its own (not a
/// view, a constant, a call or a loop's result). Where its run starts is
/// the layout's concern (bucketLayout).
bool isMadeForItsCollective(Value input);

/// The order of a combined all_reduce's or all_gather's members in its
/// buffer: those whose inputs are a whole number of kBucketRunAlignment
/// bytes first, then the others, each in program order. Every run of the
/// first kind starts aligned, and so does the first of the others.
SmallVector<Operation *> bucketLayout(ArrayRef<Operation *> members);

/// Whether a collective of `kind` whose local input has `inShape` can share
/// a call: any all_reduce; a gather or a reduce_scatter along `dim`, `even`
/// (every rank's piece the same size; a reduce_scatter's input dim a
/// multiple of `groupSize`), with only extent-1 dims before `dim` (its
/// pieces lie one after another in flat order). No all_to_all.
bool isCombinable(::dt::CollectiveKind kind, ArrayRef<int64_t> inShape,
                  int64_t dim, bool even, int64_t groupSize);

/// Modelled compute between points of one block: the contractions' flops at
/// the device's rate (what a collective on its own stream overlaps).
class ComputeTimeline {
public:
  ComputeTimeline(Block &block, const ::dt::DeviceModel &device);
  /// Seconds of compute after `from` (null: the block's start) up to and
  /// including `to`.
  double between(Operation *from, Operation *to) const;

private:
  DenseMap<Operation *, size_t> index;
  SmallVector<double> prefix;
};

/// Collectives that may share a call, as the caller tells them apart (for
/// dt-combine-collectives: the op's name, mesh, axes, reduction and element
/// type; attributes and types are uniqued, so their pointers compare).
using BucketKey =
    std::tuple<const void *, Attribute, Attribute, Attribute, Type>;

/// One collective offered to a bucket.
struct BucketCandidate {
  BucketKey key;
  Operation *op = nullptr;
  ::dt::CollectiveKind kind = ::dt::CollectiveKind::AllReduce;
  /// The group's size and link, and the devices (their memory bandwidth
  /// prices the copies).
  int64_t groupSize = 1;
  ::dt::AxisLink link;
  ::dt::DeviceModel device;
  /// What the ring formula counts (the tensor the group gathers or
  /// reduces), and the bytes a combined buffer costs it (setCopies).
  double bytes = 0, copiedIn = 0, copiedOut = 0;
  /// The input can be made in the combined buffer if its run starts
  /// aligned.
  bool fillable = false;
  /// The op of the block that makes the input ready (null: before the
  /// block) and the first that reads the result (null: none).
  Operation *ready = nullptr, *firstUse = nullptr;
  /// With a timeline, a member that starts later than its input is ready
  /// loses the compute in between (up to its own time) it would overlap.
  const ComputeTimeline *timeline = nullptr;

  /// Sets the copies a combined buffer costs this collective of `kind`
  /// in `block`, whose `input` and `result` have `inBytes` and `outBytes`
  /// on a rank. In: the input, unless dt-fill-buckets-in-place can make it
  /// in the buffer (`fillable`: an all_reduce's or all_gather's input that
  /// an op of the block makes for it alone, writing a buffer of its own:
  /// not a view, a constant, a call or a loop's result). Out: a gather's
  /// result (its column block is not contiguous), and any result the
  /// function returns (apart, the collective writes the caller's buffer;
  /// combined, its slice is copied there); other results are views.
  void setCopies(Block &block, Value input, double inBytes, Value result,
                 double outBytes);
};

/// Collectives that run as one call.
struct Bucket {
  ::dt::CollectiveKind kind = ::dt::CollectiveKind::AllReduce;
  SmallVector<Operation *> members;
  /// Each member's ready point and modelled time alone (for the overlap it
  /// would lose; with a timeline only).
  SmallVector<std::pair<Operation *, double>> readies;
  const ComputeTimeline *timeline = nullptr;
  /// The op that makes the last input ready (null: all come from before the
  /// block), and the first that reads a result (null: none does).
  Operation *ready = nullptr, *firstUse = nullptr;
  double bytes = 0, copyBytes = 0;
  /// Whether a member's input is not a whole number of runs' alignment
  /// (kBucketRunAlignment): the buffer lays those after the others, so the
  /// first of them starts aligned and the later ones need not.
  bool unevenMember = false;
  /// How many members dt-fill-buckets-in-place will make in the buffer.
  int64_t madeInBuffer = 0;
  /// The group's size, link and devices, from the first member.
  int64_t groupSize = 1;
  ::dt::AxisLink link;
  ::dt::DeviceModel device;

  double collectiveSeconds(double size) const {
    return ::dt::ringSeconds(kind, groupSize, size, link);
  }
  /// The overlap with compute that members lose by starting at `last`
  /// instead of at their own ready points.
  double lostOverlap(ArrayRef<std::pair<Operation *, double>> members,
                     Operation *last) const;
  /// The modelled time of the bucket as it stands: one call, the copies and
  /// the overlap lost (a bucket of one is the collective alone).
  double seconds() const;
  /// Why a collective does not join a bucket.
  enum class Refusal { None, Windows, ReadsMember, Costlier };
  /// Whether `c` can run with the bucket, for less than on its own, and if
  /// not, why. One whose input is a member's result cannot (the windows do
  /// not see that: the member's first reader is the collective itself).
  /// With `combined` and `apart`, the times of one call and of the bucket
  /// and `c` apart (when the windows allow one call).
  Refusal refusal(const BucketCandidate &c, double *combined = nullptr,
                  double *apart = nullptr) const;
  void add(const BucketCandidate &c);

private:
  /// Whether `c`, as the next member, would be made in the buffer.
  bool madeInBufferBy(const BucketCandidate &c) const;
};

/// Forms the buckets of one block from its collectives, offered in program
/// order: each key has one open bucket, which a collective joins when the
/// bucket accepts it; otherwise that bucket closes and a new one starts.
class Bucketing {
public:
  /// A collective that started a bucket while another of its key was open:
  /// why it did not join that one (for explanations).
  struct Apart {
    Operation *op, *openFirst;
    Bucket::Refusal refusal;
    double combined = 0, apart = 0;
  };

  /// Puts `c` in a bucket; returns that bucket's index.
  size_t offer(const BucketCandidate &c);
  ArrayRef<Bucket> buckets() const { return all; }
  ArrayRef<Apart> kept() const { return apart; }

private:
  std::vector<Bucket> all;
  DenseMap<BucketKey, size_t> open;
  SmallVector<Apart> apart;
};

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_BUCKETS_H
