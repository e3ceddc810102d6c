//===- Exchange.h - Point-to-point changes of layout ------------*- C++ -*-===//
//
// An exchange changes a tensor from one layout to another in one step: each
// rank receives, from the rank that holds it, every part of its new piece
// that it does not hold itself. Where a chain of one-axis collectives would
// gather more than the new piece needs (`[S(0), S(0)] -> [R, S(0)]`, a
// transposition of the axes that split a dim), one exchange moves exactly
// the missing parts. The planner, the dialect's verifier, the runtime and
// the tests share these functions.
//
// Which rank sends a part: the source pieces of the ranks that differ only
// in axes the source does not shard are copies; a receiver takes each part
// from the copy whose coordinates on those axes are its own (itself, where
// it holds the part).
//
// Plain C++17: no LLVM/MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef DT_SHARDING_EXCHANGE_H
#define DT_SHARDING_EXCHANGE_H

#include "dt/Sharding/CostModel.h"
#include "dt/Sharding/ShardLayout.h"

#include <optional>
#include <vector>

namespace dt {

/// True when an exchange can go from `source` to `target`: the same partial
/// placements on the same axes (an exchange moves pieces of each partial
/// value; it reduces nothing), and at least one axis in `exchangeAxes`.
bool canExchange(Span<int64_t> meshShape, Span<Placement> source,
                 Span<Placement> target);

/// The mesh axes whose ranks trade parts, in mesh order: every axis of more
/// than one rank that shards something in `source` or `target`, except the
/// axes that split a dim in both the same way as its first splitters (the
/// common prefix of the dim's splitting axes). The ranks that agree on the
/// other axes hold, together, everything each of them needs.
std::vector<int64_t> exchangeAxes(Span<int64_t> meshShape,
                                  Span<Placement> source,
                                  Span<Placement> target);

/// One part a rank receives: a non-empty box of the global tensor, the rank
/// it comes from (possibly the receiver itself), and where the box starts
/// in the sender's piece and in the receiver's.
struct ExchangePart {
  int64_t peer = 0;
  ShardBox box; ///< Global offset and shape.
  std::vector<int64_t> from, to;
};

/// The parts the rank at `coords` receives, which together make its piece of
/// `target`; ordered by peer. Requires `canExchange`.
std::vector<ExchangePart> exchangeReceives(Span<int64_t> globalShape,
                                           Span<int64_t> meshShape,
                                           Span<Placement> source,
                                           Span<Placement> target,
                                           Span<int64_t> coords);

/// The modelled cost of an exchange: the rank that waits longest receives
/// each part from another rank in turn over the slowest link between them
/// (one latency and its bytes per part).
struct ExchangeCost {
  double seconds = 0;
  double bytesPerRank = 0; ///< Bytes that rank receives from others.
  int64_t peers = 0;       ///< How many others it receives from.
};

/// Prices the exchange on the group of rank 0 (the largest pieces when
/// shards are uneven). Nullopt when the group has more than `maxGroup`
/// ranks: the planner does not weigh exchanges that large.
std::optional<ExchangeCost>
exchangeCost(Span<int64_t> globalShape, int64_t elementBytes,
             Span<int64_t> meshShape, const Topology &topology,
             Span<Placement> source, Span<Placement> target,
             int64_t maxGroup = 256);

} // namespace dt

#endif // DT_SHARDING_EXCHANGE_H
