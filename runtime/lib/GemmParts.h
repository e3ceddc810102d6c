//===- GemmParts.h - A GEMM cut to counts a BLAS int holds -----*- C++ -*-===//
//
// CBLAS takes its sizes and leading dims as ints (32 bits in the LP64
// OpenBLAS the runtime links), dt's tensors as int64. A product with a
// count past the limit is computed as blocks of C, and a sum over k past it
// as several calls that accumulate (beta = 1 after the first). A leading
// dim past the limit cannot be cut; the matrix it strides is then taken one
// stored row per call, where the leading dim is never stepped. Pure
// arithmetic over pointers: test/Unit runs it with a small limit.
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_LIB_GEMMPARTS_H
#define DT_RUNTIME_LIB_GEMMPARTS_H

#include <algorithm>
#include <cstdint>

namespace dt::rt {

/// A row-major operand of C = A B + beta C as BLAS reads it: `data` holds
/// the matrix (transposed: its transpose, row-major) with rows `ld` apart.
template <typename T> struct GemmOperand {
  const T *data;
  int64_t ld;
  bool transposed;

  /// Element (row, col) of the matrix the operand stands for.
  const T *at(int64_t row, int64_t col) const {
    return transposed ? data + col * ld + row : data + row * ld + col;
  }
};

/// C (m x n, rows `ldc` apart) = A (m x k) B (k x n) + beta C as calls of
/// `call(a, b, beta, c, ldc, m, n, k)` whose counts and leading dims are
/// each at most `limit`; `c` and `ldc` of a call are its block of C.
template <typename T, typename Call>
void gemmInParts(GemmOperand<T> a, GemmOperand<T> b, T beta, T *c,
                 int64_t ldc, int64_t m, int64_t n, int64_t k, int64_t limit,
                 Call call) {
  // The dim a too-long leading dim steps along is taken one at a time.
  int64_t mStep = limit, nStep = limit, kStep = limit;
  if (a.ld > limit)
    (a.transposed ? kStep : mStep) = 1;
  if (b.ld > limit)
    (b.transposed ? nStep : kStep) = 1;
  if (ldc > limit)
    mStep = 1;
  // A leading dim as the call sees it: the operand's own, or, for a single
  // stored row, the least BLAS accepts (the length of that row).
  auto lead = [&](int64_t ld, int64_t rowLength) {
    return ld <= limit ? ld : std::max<int64_t>(1, rowLength);
  };
  for (int64_t i = 0; i < m; i += mStep)
    for (int64_t j = 0; j < n; j += nStep)
      for (int64_t p = 0; p < k; p += kStep) {
        int64_t rows = std::min(mStep, m - i), cols = std::min(nStep, n - j),
                depth = std::min(kStep, k - p);
        GemmOperand<T> pa{a.at(i, p), lead(a.ld, a.transposed ? rows : depth),
                          a.transposed};
        GemmOperand<T> pb{b.at(p, j), lead(b.ld, b.transposed ? depth : cols),
                          b.transposed};
        call(pa, pb, p == 0 ? beta : T(1), c + i * ldc + j, lead(ldc, cols),
             rows, cols, depth);
      }
}

} // namespace dt::rt

#endif // DT_RUNTIME_LIB_GEMMPARTS_H
