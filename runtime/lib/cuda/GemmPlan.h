//===- GemmPlan.h - A row-major matmul as a column-major GEMM ---*- C++ -*-===//
//
// cuBLASLt is column-major: it computes D = op(A) op(B) + C on stored
// matrices described by (rows, cols, leading dimension), op N or T. A
// row-major C (m x n) += A (m x k) B (k x n) is the column-major product
// C^T = B^T A^T, and a row-major matrix with contiguous rows is, read
// column-major, its own transpose: so B goes first, A second, each with op N
// when its rows are contiguous and op T when its columns are (a transposed
// view). Pure arithmetic, no CUDA: test/Unit checks it against a
// column-major reference of those semantics.
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_LIB_CUDA_GEMMPLAN_H
#define DT_RUNTIME_LIB_CUDA_GEMMPLAN_H

#include <algorithm>
#include <cstdint>
#include <optional>

namespace dt::rt::cuda {

/// A stored column-major matrix and the op applied to it.
struct StoredMatrix {
  int64_t rows = 0, cols = 0, ld = 0;
  bool transpose = false;
};

/// The column-major GEMM D = op(first) op(second) + C; the shapes are the
/// stored matrices' (M x N is `result`'s).
struct ColumnMajorGemm {
  StoredMatrix first;  ///< From the row-major B.
  StoredMatrix second; ///< From the row-major A.
  StoredMatrix result; ///< From the row-major C.
};

/// A row-major rows x cols operand with strides (s0, s1), read in place:
/// rows contiguous (s1 == 1) or columns contiguous (s0 == 1).
struct RowMajorOperand {
  int64_t rows, cols, s0, s1;
};

/// The column-major GEMM for row-major C (m x n) += A (m x k) B (k x n);
/// nothing when an operand has neither rows nor columns contiguous, or C is
/// not row-contiguous.
inline std::optional<ColumnMajorGemm>
planColumnMajorGemm(RowMajorOperand a, RowMajorOperand b, RowMajorOperand c) {
  // Read column-major, a row-contiguous r x c matrix is stored as c x r
  // (op N gives its transpose); a column-contiguous one is stored as r x c
  // (op T gives its transpose).
  auto transposeOf = [](RowMajorOperand x) -> std::optional<StoredMatrix> {
    if (x.s1 == 1 && x.s0 >= std::max<int64_t>(x.cols, 1))
      return StoredMatrix{x.cols, x.rows, x.s0, false};
    if (x.s0 == 1 && x.s1 >= std::max<int64_t>(x.rows, 1))
      return StoredMatrix{x.rows, x.cols, x.s1, true};
    return std::nullopt;
  };
  std::optional<StoredMatrix> first = transposeOf(b), second = transposeOf(a),
                              result = transposeOf(c);
  if (!first || !second || !result || result->transpose)
    return std::nullopt;
  return ColumnMajorGemm{*first, *second, *result};
}

/// The alignment in bytes (a power of two, at most the 256 cuBLASLt assumes
/// unless told) of every address a GEMM starts one operand's matrix at: its
/// base and, batched, each batch's (`batchBytes` apart).
inline uint32_t matrixAlignment(uint64_t base, int64_t batches,
                                int64_t batchBytes) {
  uint64_t bits = base | 256u;
  if (batches > 1)
    bits |= static_cast<uint64_t>(batchBytes);
  return static_cast<uint32_t>(bits & (~bits + 1));
}

} // namespace dt::rt::cuda

#endif // DT_RUNTIME_LIB_CUDA_GEMMPLAN_H
