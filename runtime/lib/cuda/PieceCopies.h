//===- PieceCopies.h - Pieces along one dim as 2-D copies -------*- C++ -*-===//
//
// The collectives move pieces of row-major tensors along one dim: the piece
// of a shard that goes to a member, or a member's piece in the gathered
// result. Along one dim such a piece is a set of rows: one row per index of
// the dims before it, each the piece's extent times the dims after it, the
// rows a fixed pitch apart in the source and the destination. That is one
// cuMemcpy2D (and a padding is one cuMemsetD2D8); a dt.exchange's boxes
// are planned in ExchangeCopies.h. Pure arithmetic, no CUDA: test/Unit
// checks the plans, executed with memcpy, against the threads backend's
// host code (placePiece, slicePiece, zeroTail).
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_LIB_CUDA_PIECECOPIES_H
#define DT_RUNTIME_LIB_CUDA_PIECECOPIES_H

#include "../Boxes.h"
#include "dt/Sharding/ShardLayout.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dt::rt::cuda {

using ::dt::rt::Copy2D;

/// `height` rows of `width` zero bytes from `offset`, rows `pitch` apart.
struct Zero2D {
  size_t offset = 0, pitch = 0, width = 0, height = 0;
  bool empty() const { return width == 0 || height == 0; }
};

/// A dim of a row-major shape as rows: how many (the product of the dims
/// before it) and the bytes of one of its indices (the dims after it).
struct DimRows {
  size_t rows = 1, bytesPerIndex = 0;
};
inline DimRows dimRows(const std::vector<int64_t> &shape, int dim,
                       size_t elementSize) {
  DimRows r;
  r.bytesPerIndex = elementSize;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int>(d) < dim)
      r.rows *= shape[d];
    else if (static_cast<int>(d) > dim)
      r.bytesPerIndex *= shape[d];
  }
  return r;
}

/// `size` indices along `dim`, from index `from` of a tensor shaped `in` to
/// index `to` of one shaped `out` (the two differ along `dim` only).
inline Copy2D copyAlong(const std::vector<int64_t> &in,
                        const std::vector<int64_t> &out, int dim, int64_t size,
                        int64_t from, int64_t to, size_t elementSize) {
  DimRows r = dimRows(in, dim, elementSize);
  Copy2D c;
  c.srcOffset = from * r.bytesPerIndex;
  c.srcPitch = in[dim] * r.bytesPerIndex;
  c.dstOffset = to * r.bytesPerIndex;
  c.dstPitch = out[dim] * r.bytesPerIndex;
  c.width = size > 0 ? size * r.bytesPerIndex : 0;
  c.height = r.rows;
  return c;
}

/// Piece `at` along `dim` of a tensor shaped `in` into the start of one
/// shaped `out` (the same but along `dim`, where it is at least at.size).
inline Copy2D sliceCopy(const std::vector<int64_t> &in,
                        const std::vector<int64_t> &out, int dim, ChunkRange at,
                        size_t elementSize) {
  return copyAlong(in, out, dim, at.size, at.offset, 0, elementSize);
}

/// The first at.size indices along `dim` of a tensor shaped `in` to at.offset
/// along `dim` of one shaped `out`.
inline Copy2D placeCopy(const std::vector<int64_t> &in,
                        const std::vector<int64_t> &out, int dim, ChunkRange at,
                        size_t elementSize) {
  return copyAlong(in, out, dim, at.size, 0, at.offset, elementSize);
}

/// Indices from `from` to the end along `dim` of a tensor shaped `shape`.
inline Zero2D tailZeros(const std::vector<int64_t> &shape, int dim,
                        int64_t from, size_t elementSize) {
  DimRows r = dimRows(shape, dim, elementSize);
  Zero2D z;
  if (from >= shape[dim])
    return z;
  z.offset = from * r.bytesPerIndex;
  z.pitch = shape[dim] * r.bytesPerIndex;
  z.width = (shape[dim] - from) * r.bytesPerIndex;
  z.height = r.rows;
  return z;
}

} // namespace dt::rt::cuda

#endif // DT_RUNTIME_LIB_CUDA_PIECECOPIES_H
