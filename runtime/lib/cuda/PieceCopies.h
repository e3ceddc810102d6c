//===- PieceCopies.h - Pieces along one dim as 2-D copies -------*- C++ -*-===//
//
// The collectives move pieces of row-major tensors along one dim: the piece
// of a shard that goes to a member, or a member's piece in the gathered
// result. Along one dim such a piece is a set of rows: one row per index of
// the dims before it, each the piece's extent times the dims after it, the
// rows a fixed pitch apart in the source and the destination. That is one
// cuMemcpy2D (and a padding is one cuMemsetD2D8). A dt.exchange moves boxes
// (several dims at once): one 2-D copy per block of rows (Boxes.h). Pure
// arithmetic, no CUDA: test/Unit checks the plans, executed with memcpy,
// against the threads backend's host code (placePiece, slicePiece,
// zeroTail), against element-by-element copies, and against the layouts an
// exchange goes between.
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_LIB_CUDA_PIECECOPIES_H
#define DT_RUNTIME_LIB_CUDA_PIECECOPIES_H

#include "../Boxes.h"
#include "../Context.h"
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

/// A box of `box` elements per dim from `srcOffset` of a row-major tensor
/// shaped `srcShape` to `dstOffset` of one shaped `dstShape`: one copy per
/// block of rows (Boxes.h). Empty for an empty box.
inline std::vector<Copy2D> boxCopies(const std::vector<int64_t> &srcShape,
                                     const std::vector<int64_t> &srcOffset,
                                     const std::vector<int64_t> &dstShape,
                                     const std::vector<int64_t> &dstOffset,
                                     const std::vector<int64_t> &box,
                                     size_t elementSize) {
  std::vector<Copy2D> copies;
  forEachRowBlock(srcShape, srcOffset, dstShape, dstOffset, box, elementSize,
                  [&](const Copy2D &block) { copies.push_back(block); });
  return copies;
}

/// What one rank sends to (or receives from) one other member in a
/// dt.exchange: `bytes` at `offset` of the staging buffer, packed there from
/// the input (unpacked from there to the output) by `copies` -- or, when
/// the member's parts are one contiguous run of the tensor, straight from
/// (into) the tensor at `offset`, with no copies.
struct ExchangeTransfer {
  int64_t member = 0;
  size_t bytes = 0, offset = 0;
  bool inPlace = false;
  std::vector<Copy2D> copies;
};

/// One rank's dt.exchange as device copies around one group of sends and
/// receives: its own parts copied from the input to the output, the parts
/// for each other member packed back to back in the order of the routes
/// (both sides list a pair's parts alike), and those received unpacked.
struct ExchangeCopies {
  std::vector<Copy2D> own;
  std::vector<ExchangeTransfer> sends, receives;
  size_t sendStaging = 0, receiveStaging = 0; ///< Bytes of staging needed.
};

/// `self`: this rank's index in the group.
inline ExchangeCopies planExchangeCopies(const ExchangeRoutes &routes,
                                         int64_t self, size_t elementSize) {
  ExchangeCopies plan;
  // `sending`: the parts leave the input; otherwise they arrive in the
  // output. Parts of one member are adjacent in the routes (by peer); the
  // rank's own parts are among its receives (as parts from itself).
  auto transfers = [&](const std::vector<ExchangeCopy> &parts, bool sending,
                       std::vector<ExchangeTransfer> &out, size_t &staging) {
    const std::vector<int64_t> &tensor =
        sending ? routes.inShape : routes.outShape;
    for (size_t first = 0; first < parts.size();) {
      size_t end = first;
      while (end < parts.size() && parts[end].member == parts[first].member)
        ++end;
      ExchangeTransfer t;
      t.member = parts[first].member;
      if (t.member == self) {
        for (size_t i = first; i < end; ++i) {
          std::vector<Copy2D> c =
              boxCopies(routes.inShape, parts[i].from, routes.outShape,
                        parts[i].to, parts[i].shape, elementSize);
          plan.own.insert(plan.own.end(), c.begin(), c.end());
        }
        first = end;
        continue;
      }
      t.offset = staging;
      for (size_t i = first; i < end; ++i) {
        const ExchangeCopy &part = parts[i];
        std::vector<int64_t> zero(part.shape.size(), 0);
        std::vector<Copy2D> c =
            sending ? boxCopies(tensor, part.from, part.shape, zero, part.shape,
                                elementSize)
                    : boxCopies(part.shape, zero, tensor, part.to, part.shape,
                                elementSize);
        for (Copy2D &copy : c)
          (sending ? copy.dstOffset : copy.srcOffset) += staging + t.bytes;
        t.copies.insert(t.copies.end(), c.begin(), c.end());
        t.bytes += part.count() * elementSize;
      }
      // One contiguous run of the tensor needs no staging.
      if (t.copies.size() == 1) {
        const Copy2D &c = t.copies.front();
        size_t pitch = sending ? c.srcPitch : c.dstPitch;
        if (c.height == 1 || pitch == c.width) {
          t.inPlace = true;
          t.offset = sending ? c.srcOffset : c.dstOffset;
          t.copies.clear();
        }
      }
      if (!t.inPlace)
        staging += t.bytes;
      if (t.bytes > 0)
        out.push_back(std::move(t));
      first = end;
    }
  };
  transfers(routes.sends, true, plan.sends, plan.sendStaging);
  transfers(routes.receives, false, plan.receives, plan.receiveStaging);
  return plan;
}

} // namespace dt::rt::cuda

#endif // DT_RUNTIME_LIB_CUDA_PIECECOPIES_H
