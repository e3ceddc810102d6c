//===- ShardLayout.cpp - Where each rank's shard lies ---------------------===//

#include "dt/Sharding/ShardLayout.h"

#include <algorithm>

namespace dt {

int64_t chunkSize(int64_t extent, int64_t parts) {
  return (extent + parts - 1) / parts;
}

ChunkRange chunkOf(int64_t extent, int64_t parts, int64_t index) {
  int64_t chunk = chunkSize(extent, parts);
  int64_t begin = std::min(index * chunk, extent);
  int64_t end = std::min(begin + chunk, extent);
  return {begin, end - begin};
}

int64_t meshSize(Span<int64_t> meshShape) {
  int64_t size = 1;
  for (int64_t axisSize : meshShape)
    size *= axisSize;
  return size;
}

std::vector<int64_t> meshCoords(Span<int64_t> meshShape, int64_t rank) {
  std::vector<int64_t> coords(meshShape.size());
  for (size_t axis = meshShape.size(); axis-- > 0;) {
    coords[axis] = rank % meshShape[axis];
    rank /= meshShape[axis];
  }
  return coords;
}

int64_t linearRank(Span<int64_t> meshShape, Span<int64_t> coords) {
  int64_t rank = 0;
  for (size_t axis = 0; axis < meshShape.size(); ++axis)
    rank = rank * meshShape[axis] + coords[axis];
  return rank;
}

std::vector<int64_t> axesShardingDim(Span<Placement> placements, int64_t dim) {
  std::vector<int64_t> axes;
  for (size_t axis = 0; axis < placements.size(); ++axis)
    if (placements[axis].isShard(dim))
      axes.push_back(static_cast<int64_t>(axis));
  return axes;
}

ShardBox shardBox(Span<int64_t> globalShape, Span<int64_t> meshShape,
                  Span<Placement> placements, Span<int64_t> coords) {
  ShardBox box{std::vector<int64_t>(globalShape.size(), 0),
               std::vector<int64_t>(globalShape.begin(), globalShape.end())};
  // Mesh-axis order is the nesting order: each axis splits the piece that the
  // axes before it left on this rank.
  for (size_t axis = 0; axis < placements.size(); ++axis) {
    if (!placements[axis].isShard())
      continue;
    size_t dim = static_cast<size_t>(placements[axis].dim());
    ChunkRange piece = chunkOf(box.shape[dim], meshShape[axis], coords[axis]);
    box.offset[dim] += piece.offset;
    box.shape[dim] = piece.size;
  }
  return box;
}

std::vector<int64_t> maxLocalShape(Span<int64_t> globalShape,
                                   Span<int64_t> meshShape,
                                   Span<Placement> placements) {
  // Piece 0 of every split is a largest piece, so coordinate 0 on every axis
  // holds a largest shard.
  std::vector<int64_t> origin(meshShape.size(), 0);
  return shardBox(globalShape, meshShape, placements, origin).shape;
}

bool isEvenlySharded(Span<int64_t> globalShape, Span<int64_t> meshShape,
                     Span<Placement> placements) {
  std::vector<int64_t> shape(globalShape.begin(), globalShape.end());
  for (size_t axis = 0; axis < placements.size(); ++axis) {
    if (!placements[axis].isShard())
      continue;
    int64_t &extent = shape[static_cast<size_t>(placements[axis].dim())];
    if (!dividesEvenly(extent, meshShape[axis]))
      return false;
    extent /= meshShape[axis];
  }
  return true;
}

} // namespace dt
