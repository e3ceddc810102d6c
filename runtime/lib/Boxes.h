//===- Boxes.h - A box of row-major tensors as blocks of rows --*- C++ -*-===//
//
// A box (an offset and an extent per dim) of one row-major tensor copied to
// a box of the same extents in another is a set of blocks of equal rows: a
// row is the box's innermost dim, with the dims after it merged in when
// both tensors hold them whole; the dim before the row counts the rows of a
// block, a fixed pitch apart in each tensor; every index of the dims before
// that is one block. The host copies each row with memcpy (copyBox,
// zeroBox); the CUDA runtime makes each block one cuMemcpy2D.
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_LIB_BOXES_H
#define DT_RUNTIME_LIB_BOXES_H

#include "absl/types/span.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace dt::rt {

/// `height` rows of `width` bytes from `srcOffset` (rows `srcPitch` apart)
/// to `dstOffset` (rows `dstPitch` apart). Empty when width or height is 0.
struct Copy2D {
  size_t srcOffset = 0, srcPitch = 0, dstOffset = 0, dstPitch = 0, width = 0,
         height = 0;
  bool empty() const { return width == 0 || height == 0; }
};

/// Runs `copy` on host memory.
inline void copyRows(const Copy2D &copy, const void *src, void *dst) {
  for (size_t row = 0; row < copy.height; ++row)
    std::memcpy(static_cast<char *>(dst) + copy.dstOffset + row * copy.dstPitch,
                static_cast<const char *>(src) + copy.srcOffset +
                    row * copy.srcPitch,
                copy.width);
}

/// Calls fn(const Copy2D &) for each block of rows of the box of `box`
/// elements at `srcOffset` of a tensor shaped `srcShape` and at `dstOffset`
/// of one shaped `dstShape` (`elementSize`-byte elements), in row-major
/// order of the blocks. Nothing for an empty box.
template <typename Fn>
void forEachRowBlock(absl::Span<const int64_t> srcShape,
                     absl::Span<const int64_t> srcOffset,
                     absl::Span<const int64_t> dstShape,
                     absl::Span<const int64_t> dstOffset,
                     absl::Span<const int64_t> box, size_t elementSize, Fn fn) {
  size_t rank = box.size();
  for (int64_t extent : box)
    if (extent <= 0)
      return;
  std::vector<size_t> srcStride(rank), dstStride(rank);
  size_t srcStep = elementSize, dstStep = elementSize;
  for (size_t d = rank; d-- > 0;) {
    srcStride[d] = srcStep;
    dstStride[d] = dstStep;
    srcStep *= srcShape[d];
    dstStep *= dstShape[d];
  }
  // The row holds the dims from `inner` on.
  Copy2D block;
  block.width = elementSize;
  size_t inner = rank;
  while (inner > 0) {
    size_t d = --inner;
    block.width *= box[d];
    if (box[d] != srcShape[d] || box[d] != dstShape[d])
      break;
  }
  block.height = 1;
  block.srcPitch = block.dstPitch = block.width;
  size_t outer = inner; // Dims [0, outer) make one block per index.
  if (inner > 0) {
    outer = inner - 1;
    block.height = box[outer];
    block.srcPitch = srcStride[outer];
    block.dstPitch = dstStride[outer];
  }
  std::vector<int64_t> index(outer, 0);
  while (true) {
    block.srcOffset = block.dstOffset = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = d < outer ? index[d] : 0;
      block.srcOffset += (srcOffset[d] + i) * srcStride[d];
      block.dstOffset += (dstOffset[d] + i) * dstStride[d];
    }
    fn(static_cast<const Copy2D &>(block));
    size_t d = outer;
    for (; d > 0; --d) {
      if (++index[d - 1] < box[d - 1])
        break;
      index[d - 1] = 0;
    }
    if (d == 0)
      return;
  }
}

} // namespace dt::rt

#endif // DT_RUNTIME_LIB_BOXES_H
