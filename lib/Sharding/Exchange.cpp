//===- Exchange.cpp - Point-to-point changes of layout --------------------===//

#include "dt/Sharding/Exchange.h"

#include <algorithm>

namespace dt {

bool canExchange(Span<int64_t> meshShape, Span<Placement> source,
                 Span<Placement> target) {
  for (size_t axis = 0; axis < source.size(); ++axis)
    if ((source[axis].isPartial() || target[axis].isPartial()) &&
        source[axis] != target[axis])
      return false;
  return !exchangeAxes(meshShape, source, target).empty();
}

/// The axes of more than one rank that split `dim`, in splitting order.
static std::vector<int64_t> splitters(Span<int64_t> meshShape,
                                      Span<Placement> placements, int64_t dim) {
  std::vector<int64_t> axes;
  for (int64_t axis : axesShardingDim(placements, dim))
    if (meshShape[axis] > 1)
      axes.push_back(axis);
  return axes;
}

std::vector<int64_t> exchangeAxes(Span<int64_t> meshShape,
                                  Span<Placement> source,
                                  Span<Placement> target) {
  std::vector<int64_t> axes;
  for (size_t axis = 0; axis < source.size(); ++axis) {
    const Placement &from = source[axis], &to = target[axis];
    if (meshShape[axis] == 1 || from.isPartial() ||
        !(from.isShard() || to.isShard()))
      continue;
    if (from == to) {
      // Splits the dim the same way in both, after the same axes: every
      // rank's region of the dim is the same before and after.
      std::vector<int64_t> before = splitters(meshShape, source, from.dim());
      std::vector<int64_t> after = splitters(meshShape, target, to.dim());
      size_t at =
          std::find(before.begin(), before.end(), axis) - before.begin();
      if (at < after.size() &&
          std::equal(before.begin(), before.begin() + at + 1, after.begin()))
        continue;
    }
    axes.push_back(static_cast<int64_t>(axis));
  }
  return axes;
}

/// The intersection of two boxes; empty shape entries when they miss.
static ShardBox intersect(const ShardBox &a, const ShardBox &b) {
  ShardBox box;
  for (size_t d = 0; d < a.offset.size(); ++d) {
    int64_t begin = std::max(a.offset[d], b.offset[d]);
    int64_t end = std::min(a.offset[d] + a.shape[d], b.offset[d] + b.shape[d]);
    box.offset.push_back(begin);
    box.shape.push_back(std::max<int64_t>(0, end - begin));
  }
  return box;
}

static double volume(const ShardBox &box) {
  double elements = 1;
  for (int64_t extent : box.shape)
    elements *= static_cast<double>(extent);
  return elements;
}

static bool isEmpty(const ShardBox &box) {
  return std::any_of(box.shape.begin(), box.shape.end(),
                     [](int64_t extent) { return extent == 0; });
}

/// Calls `visit` with every coordinate vector that agrees with `coords`
/// outside `axes`, row-major over `axes`.
template <typename Fn>
static void forEachMember(Span<int64_t> meshShape, Span<int64_t> coords,
                          const std::vector<int64_t> &axes, Fn &&visit) {
  std::vector<int64_t> c(coords.begin(), coords.end());
  for (int64_t axis : axes)
    c[axis] = 0;
  while (true) {
    visit(static_cast<const std::vector<int64_t> &>(c));
    size_t i = axes.size();
    while (i > 0 && ++c[axes[i - 1]] == meshShape[axes[i - 1]])
      c[axes[--i]] = 0;
    if (i == 0)
      return;
  }
}

/// The axes of `axes` that `source` shards: a receiver takes each part from
/// the member that differs from it only there (elsewhere the members'
/// pieces are copies of one another).
static std::vector<int64_t> holderAxes(Span<Placement> source,
                                       const std::vector<int64_t> &axes) {
  std::vector<int64_t> holders;
  for (int64_t axis : axes)
    if (source[axis].isShard())
      holders.push_back(axis);
  return holders;
}

/// exchangeReceives with its holder axes given.
static std::vector<ExchangePart>
receives(Span<int64_t> globalShape, Span<int64_t> meshShape,
         Span<Placement> source, Span<Placement> target,
         const std::vector<int64_t> &holders, Span<int64_t> coords) {
  std::vector<ExchangePart> parts;
  ShardBox wanted = shardBox(globalShape, meshShape, target, coords);
  if (isEmpty(wanted))
    return parts;
  forEachMember(
      meshShape, coords, holders, [&](const std::vector<int64_t> &holder) {
        ShardBox held = shardBox(globalShape, meshShape, source, holder);
        ShardBox box = intersect(held, wanted);
        if (isEmpty(box))
          return;
        ExchangePart part{linearRank(meshShape, holder), box, box.offset,
                          box.offset};
        for (size_t d = 0; d < box.offset.size(); ++d) {
          part.from[d] -= held.offset[d];
          part.to[d] -= wanted.offset[d];
        }
        parts.push_back(std::move(part));
      });
  return parts;
}

std::vector<ExchangePart> exchangeReceives(Span<int64_t> globalShape,
                                           Span<int64_t> meshShape,
                                           Span<Placement> source,
                                           Span<Placement> target,
                                           Span<int64_t> coords) {
  return receives(globalShape, meshShape, source, target,
                  holderAxes(source, exchangeAxes(meshShape, source, target)),
                  coords);
}

std::optional<ExchangeCost>
exchangeCost(Span<int64_t> globalShape, int64_t elementBytes,
             Span<int64_t> meshShape, const Topology &topology,
             Span<Placement> source, Span<Placement> target, int64_t maxGroup) {
  std::vector<int64_t> axes = exchangeAxes(meshShape, source, target);
  int64_t groupSize = 1;
  for (int64_t axis : axes)
    groupSize *= meshShape[axis];
  if (groupSize > maxGroup)
    return std::nullopt;
  ExchangeCost worst;
  std::vector<int64_t> holders = holderAxes(source, axes);
  std::vector<int64_t> origin(meshShape.size(), 0);
  forEachMember(meshShape, origin, axes, [&](const std::vector<int64_t> &me) {
    int64_t rank = linearRank(meshShape, me);
    ExchangeCost cost;
    for (const ExchangePart &part :
         receives(globalShape, meshShape, source, target, holders, me)) {
      if (part.peer == rank)
        continue;
      std::vector<int64_t> peer = meshCoords(meshShape, part.peer), crossed;
      for (size_t axis = 0; axis < peer.size(); ++axis)
        if (peer[axis] != me[axis])
          crossed.push_back(static_cast<int64_t>(axis));
      AxisLink link = topology.groupLink(crossed);
      double bytes = volume(part.box) * static_cast<double>(elementBytes);
      cost.seconds += link.latencySeconds + bytes / link.bytesPerSecond;
      cost.bytesPerRank += bytes;
      ++cost.peers;
    }
    if (cost.seconds > worst.seconds)
      worst = cost;
  });
  return worst;
}

} // namespace dt
