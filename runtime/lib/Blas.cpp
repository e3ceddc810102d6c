//===- Blas.cpp - linalg.matmul and batch_matmul through OpenBLAS ---------===//
//
// C += A * B on buffers the generated code passes as unranked memrefs. An
// operand whose rows or columns are contiguous goes to gemm as it is (with
// the transpose flag for column-contiguous ones); anything else is copied to
// a dense array first. Each rank runs BLAS on one thread: the ranks are the
// parallelism (the runtime sets OpenBLAS to one thread when it loads).
//
//===----------------------------------------------------------------------===//

#include "dt/runtime.h"

#include <cblas.h>

#include <cstring>
#include <vector>

namespace {
struct SetBlasThreads {
  SetBlasThreads() { openblas_set_num_threads(1); }
} setBlasThreads;

/// A 2-D operand as gemm takes it.
template <typename T>
struct Matrix {
  T *data;
  int64_t rows, cols, ld;
  bool transposed;
  std::vector<T> copy; ///< Owns the data when the layout needed a copy.
};

template <typename T>
Matrix<T> matrix(T *base, int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if (s1 == 1 && s0 >= std::max<int64_t>(cols, 1))
    return {base, rows, cols, s0, false, {}};
  if (s0 == 1 && s1 >= std::max<int64_t>(rows, 1))
    return {base, rows, cols, s1, true, {}};
  Matrix<T> m{nullptr, rows, cols, std::max<int64_t>(cols, 1), false, {}};
  m.copy.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      m.copy[i * cols + j] = base[i * s0 + j * s1];
  m.data = m.copy.data();
  return m;
}

void gemm(const Matrix<float> &a, const Matrix<float> &b, float *c,
          int64_t ldc) {
  cblas_sgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
              b.transposed ? CblasTrans : CblasNoTrans, a.rows, b.cols, a.cols,
              1.0f, a.data, a.ld, b.data, b.ld, 1.0f, c, ldc);
}
void gemm(const Matrix<double> &a, const Matrix<double> &b, double *c,
          int64_t ldc) {
  cblas_dgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
              b.transposed ? CblasTrans : CblasNoTrans, a.rows, b.cols, a.cols,
              1.0, a.data, a.ld, b.data, b.ld, 1.0, c, ldc);
}

/// One C[b] += A[b] * B[b], with `batchDims` leading dims (0 or 1).
template <typename T>
void matmul(int batchDims, DtMemRef *a, DtMemRef *b, DtMemRef *c) {
  int rank = batchDims + 2;
  auto sizes = [&](DtMemRef *m) { return m->sizesAndStrides; };
  auto strides = [&](DtMemRef *m) { return m->sizesAndStrides + rank; };
  auto base = [&](DtMemRef *m) {
    return static_cast<T *>(m->aligned) + m->offset;
  };
  int64_t batches = batchDims ? sizes(c)[0] : 1;
  int64_t m = sizes(c)[batchDims], n = sizes(c)[batchDims + 1],
          k = sizes(a)[batchDims + 1];
  if (m == 0 || n == 0 || k == 0)
    return;
  for (int64_t i = 0; i < batches; ++i) {
    auto at = [&](DtMemRef *x) {
      return base(x) + (batchDims ? i * strides(x)[0] : 0);
    };
    Matrix<T> ma = matrix(at(a), m, k, strides(a)[batchDims],
                          strides(a)[batchDims + 1]);
    Matrix<T> mb = matrix(at(b), k, n, strides(b)[batchDims],
                          strides(b)[batchDims + 1]);
    int64_t c0 = strides(c)[batchDims], c1 = strides(c)[batchDims + 1];
    if (c1 == 1 && c0 >= n) {
      gemm(ma, mb, at(c), c0);
      continue;
    }
    // C with an unusual layout: accumulate densely and write back.
    std::vector<T> dense(m * n);
    T *cp = at(c);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t q = 0; q < n; ++q)
        dense[r * n + q] = cp[r * c0 + q * c1];
    gemm(ma, mb, dense.data(), n);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t q = 0; q < n; ++q)
        cp[r * c0 + q * c1] = dense[r * n + q];
  }
}
} // namespace

extern "C" {
void dt_rt_matmul_f32(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t,
                      DtMemRef *c) {
  matmul<float>(0, a, b, c);
}
void dt_rt_matmul_f64(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t,
                      DtMemRef *c) {
  matmul<double>(0, a, b, c);
}
void dt_rt_batch_matmul_f32(int64_t, DtMemRef *a, int64_t, DtMemRef *b,
                            int64_t, DtMemRef *c) {
  matmul<float>(1, a, b, c);
}
void dt_rt_batch_matmul_f64(int64_t, DtMemRef *a, int64_t, DtMemRef *b,
                            int64_t, DtMemRef *c) {
  matmul<double>(1, a, b, c);
}
}
