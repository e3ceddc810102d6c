//===- ShardLayout.h - Where each rank's shard lies -------------*- C++ -*-===//
//
// The one place that says which part of a global tensor a rank holds. The
// verifier, the passes, the runtime's input scatter and output gather, and the
// tests all call these functions; there is no second copy of this math.
//
// Conventions (DESIGN.md section 3):
//  - Ranks are numbered row-major over the mesh shape.
//  - Uneven shards follow torch.chunk: with n elements split k ways, the chunk
//    is ceil(n / k) and piece i covers [i*chunk, min((i+1)*chunk, n)), which
//    may be empty.
//  - When several mesh axes shard one tensor dim, the dim is split over the
//    lowest-numbered axis first, then each piece over the next, left to right.
//
// Plain C++17: no LLVM/MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef DT_SHARDING_SHARDLAYOUT_H
#define DT_SHARDING_SHARDLAYOUT_H

#include "dt/Sharding/Placement.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dt {

/// A read-only view of a contiguous array: any container with data() and
/// size() converts to it (std::vector, std::array, llvm::ArrayRef, ...).
template <typename T>
class Span {
public:
  Span() = default;
  Span(const T *data, size_t size) : data_(data), size_(size) {}
  template <typename Container,
            typename = decltype(std::declval<const Container &>().data())>
  Span(const Container &c) : data_(c.data()), size_(c.size()) {}

  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T &operator[](size_t i) const { return data_[i]; }

private:
  const T *data_ = nullptr;
  size_t size_ = 0;
};

/// A half-open range [offset, offset + size) of one tensor dim.
struct ChunkRange {
  int64_t offset = 0;
  int64_t size = 0;
  friend bool operator==(const ChunkRange &a, const ChunkRange &b) {
    return a.offset == b.offset && a.size == b.size;
  }
};

/// The largest piece when `extent` elements are split `parts` ways:
/// ceil(extent / parts). Requires extent >= 0 and parts > 0.
int64_t chunkSize(int64_t extent, int64_t parts);

/// Piece `index` of `extent` elements split `parts` ways, torch.chunk style.
/// Requires extent >= 0, parts > 0 and 0 <= index < parts.
ChunkRange chunkOf(int64_t extent, int64_t parts, int64_t index);

/// True when every piece of `extent` split `parts` ways has the same size.
inline bool dividesEvenly(int64_t extent, int64_t parts) {
  return extent % parts == 0;
}

/// Number of ranks of a mesh: the product of its axis sizes.
int64_t meshSize(Span<int64_t> meshShape);

/// The coordinates of `rank` on a mesh, row-major. Requires
/// 0 <= rank < meshSize(meshShape).
std::vector<int64_t> meshCoords(Span<int64_t> meshShape, int64_t rank);

/// The inverse of `meshCoords`.
int64_t linearRank(Span<int64_t> meshShape, Span<int64_t> coords);

/// The mesh axes that shard tensor dim `dim`, in the order they split it.
std::vector<int64_t> axesShardingDim(Span<Placement> placements, int64_t dim);

/// The box of a global tensor held by one rank.
struct ShardBox {
  std::vector<int64_t> offset; ///< Global index of the first element.
  std::vector<int64_t> shape;  ///< Local shape; entries may be 0.
};

/// The shard of a tensor of `globalShape` held by the rank at `coords` on a
/// mesh of `meshShape`, under `placements` (one per mesh axis). Replicated and
/// partial axes do not split the tensor.
///
/// Requires placements.size() == meshShape.size() == coords.size(), each
/// S(d) with 0 <= d < globalShape.size(), and coordinates within the mesh:
/// callers validate user input first (the dialect verifier does).
ShardBox shardBox(Span<int64_t> globalShape, Span<int64_t> meshShape,
                  Span<Placement> placements, Span<int64_t> coords);

/// The largest local shape over all ranks: what a rank allocates when shards
/// are padded to a common size. Each sharded dim is the chunk size of its
/// nested split; equals every rank's shape when `isEvenlySharded`.
std::vector<int64_t> maxLocalShape(Span<int64_t> globalShape,
                                   Span<int64_t> meshShape,
                                   Span<Placement> placements);

/// True when every rank holds a shard of the same shape.
bool isEvenlySharded(Span<int64_t> globalShape, Span<int64_t> meshShape,
                     Span<Placement> placements);

} // namespace dt

#endif // DT_SHARDING_SHARDLAYOUT_H
