//===- CostModel.h - Alpha-beta cost of collectives on a mesh ---*- C++ -*-===//
//
// The one cost model that propagation, the redistribution planner and
// dt-cost-report share (DESIGN.md section 5). Each mesh axis has a link with a
// latency (alpha, seconds per message step) and a bandwidth (beta^-1, bytes
// per second). Collectives cost what the ring algorithms cost:
//
//   all_gather, reduce_scatter, all_to_all:  (n-1)   alpha + (n-1)/n  S / B
//   all_reduce:                              2(n-1) alpha + 2(n-1)/n S / B
//
// where n is the group size and S the size in bytes of the whole tensor the
// group gathers or reduces (for all_to_all, of one rank's piece).
//
// Each device computes at a roofline: an op takes as long as the slower of
// its arithmetic (flops at the peak rate of its element width) and its memory
// traffic (bytes at the memory bandwidth). Propagation adds that time on each
// rank to the collectives a choice causes, so splitting work is worth
// something and replicating it has a price.
//
// Plain C++17: no LLVM/MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef DT_SHARDING_COSTMODEL_H
#define DT_SHARDING_COSTMODEL_H

#include "dt/Sharding/ShardLayout.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dt {

/// The links of one mesh axis.
struct AxisLink {
  double latencySeconds = 0;
  double bytesPerSecond = 1;
};

enum class CollectiveKind : uint8_t { AllGather, ReduceScatter, AllReduce, AllToAll };

/// "all_gather", "reduce_scatter", "all_reduce", "all_to_all".
std::string_view collectiveKindName(CollectiveKind kind);

/// Bytes each rank sends in the ring algorithm of `kind` over `groupSize`
/// ranks, for a tensor of `bytes` (see the file comment for what S is).
double ringBytesPerRank(CollectiveKind kind, int64_t groupSize, double bytes);

/// Estimated time of `kind` over `groupSize` ranks connected by `link`.
double ringSeconds(CollectiveKind kind, int64_t groupSize, double bytes,
                   const AxisLink &link);

/// The speed and memory of one device. Defaults: an H200 (dense bf16/f16
/// tensor-core and plain f32 rates, HBM3e bandwidth, at what real kernels
/// reach; 141 GB of memory), with no cache: every byte a copy moves goes at
/// the memory's rate unless a topology description says what the cache
/// holds and how fast.
struct DeviceModel {
  double flopsPerSecond16 = 800e12;
  double flopsPerSecond32 = 60e12;
  double memoryBytesPerSecond = 4e12;
  double memoryBytes = 141e9;
  /// The cache a copy of data just made stays in (a CPU core's L2, a GPU's
  /// L2), and its rate; 0: none.
  double cacheBytes = 0;
  double cacheBytesPerSecond = 0;

  /// The rate for elements of `elementBits` bits: 16-bit and narrower use
  /// tensor cores, wider types the f32 rate.
  double flopsPerSecond(unsigned elementBits) const {
    return elementBits <= 16 ? flopsPerSecond16 : flopsPerSecond32;
  }
  /// Seconds for `flops` on elements of `elementBits` bits that move `bytes`
  /// to and from memory: the slower of the two.
  double seconds(double flops, double bytes, unsigned elementBits) const;
  /// Seconds to copy `bytes`, each read and written once, from data that
  /// was just made: of the `2 bytes` the source and the destination span,
  /// the part that fits in the cache moves at its rate, the rest at the
  /// memory's (the small buffers a bucket of gradients copies stay in the
  /// cache, several times faster than a large tensor's copy).
  double copySeconds(double bytes) const;
};

/// The links of every axis of one mesh, and the device at each rank.
class Topology {
public:
  /// Default links (docs/Design.md): ranks are row-major, so the last axes
  /// hold neighbouring ranks. An axis whose ranks all lie within one node of
  /// `ranksPerNode` devices (the product of its size and the sizes after it
  /// is at most `ranksPerNode`) uses the intra-node link; the others use the
  /// inter-node network.
  static Topology defaults(Span<int64_t> meshShape, int64_t ranksPerNode = 8);

  /// Defaults overridden by a description with one line per axis to change,
  /// and optionally one line for the devices:
  ///
  ///   # comment
  ///   <axis name> <latency in microseconds> <bandwidth in GB/s>
  ///   device <16-bit TFLOP/s> <32-bit TFLOP/s> <memory GB/s> [<memory GB>]
  ///   cache <MB> <GB/s>
  ///
  /// On a malformed line, an unknown or repeated axis (or device or cache
  /// line), or a non-positive number, returns false and sets `error` to a
  /// message naming the line.
  static bool parse(std::string_view text, Span<std::string> axisNames,
                    Span<int64_t> meshShape, Topology &topology,
                    std::string &error);

  /// Every one of `rank` axes with the same link.
  static Topology uniform(size_t rank, AxisLink link);

  static const AxisLink kIntraNode;
  static const AxisLink kInterNode;

  size_t rank() const { return links_.size(); }
  const AxisLink &link(size_t axis) const { return links_[axis]; }
  const DeviceModel &device() const { return device_; }

  /// The link a ring over the ranks of several axes runs at: it crosses
  /// every axis, so it is as slow as the slowest (lowest bandwidth, highest
  /// latency).
  AxisLink groupLink(Span<int64_t> axes) const;

private:
  std::vector<AxisLink> links_;
  DeviceModel device_;
};

} // namespace dt

#endif // DT_SHARDING_COSTMODEL_H
