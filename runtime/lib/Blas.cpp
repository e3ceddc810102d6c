//===- Blas.cpp - linalg.matmul and batch_matmul through OpenBLAS ---------===//
//
// C += A * B on buffers the generated code passes as unranked memrefs, or
// C = epilogue(A * B) (the `into` forms: gemm's beta = 0, then the bias and
// relu dt-convert-matmul-to-blas took from the program). An operand whose
// rows or columns are contiguous goes to gemm as it is (with the transpose
// flag for column-contiguous ones); anything else is copied to a dense array
// first. Each rank runs BLAS on one thread: the ranks are the
// parallelism (the runtime sets OpenBLAS to one thread when it loads).
//
//===----------------------------------------------------------------------===//

#include "dt/runtime.h"

#include <cblas.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {
struct SetBlasThreads {
  SetBlasThreads() { openblas_set_num_threads(1); }
} setBlasThreads;

/// A 2-D operand as gemm takes it.
template <typename T> struct Matrix {
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

/// C = A B + beta C; with beta = 0 C is not read (BLAS semantics).
void gemm(const Matrix<float> &a, const Matrix<float> &b, float beta, float *c,
          int64_t ldc) {
  cblas_sgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
              b.transposed ? CblasTrans : CblasNoTrans, a.rows, b.cols, a.cols,
              1.0f, a.data, a.ld, b.data, b.ld, beta, c, ldc);
}
void gemm(const Matrix<double> &a, const Matrix<double> &b, double beta,
          double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
              b.transposed ? CblasTrans : CblasNoTrans, a.rows, b.cols, a.cols,
              1.0, a.data, a.ld, b.data, b.ld, beta, c, ldc);
}

/// What the `into` forms do after the product: the bits of their epilogue
/// argument (dt-convert-matmul-to-blas).
enum EpilogueBits : int32_t { kBias = 1, kRelu = 2 };

/// arith.maximumf(x, +0.0): NaN stays NaN, -0.0 becomes +0.0.
template <typename T> T relu(T x) {
  return x > T(0) || std::isnan(x) ? x : T(0);
}

/// rows x cols of C (strides c0, c1) = relu?(C + bias?) in place.
template <typename T>
void applyEpilogue(T *c, int64_t rows, int64_t cols, int64_t c0, int64_t c1,
                   const T *bias, int64_t biasStride, int32_t epilogue) {
  for (int64_t r = 0; r < rows; ++r) {
    T *row = c + r * c0;
    for (int64_t q = 0; q < cols; ++q) {
      T v = row[q * c1];
      if (epilogue & kBias)
        v += bias[q * biasStride];
      if (epilogue & kRelu)
        v = relu(v);
      row[q * c1] = v;
    }
  }
}

/// One C[b] = epilogue(A[b] * B[b] + beta C[b]), with `batchDims` leading
/// dims (0 or 1); beta is 1 (linalg.matmul's accumulation) or 0.
template <typename T>
void matmul(int batchDims, DtMemRef *a, DtMemRef *b, DtMemRef *c, T beta = 1,
            DtMemRef *bias = nullptr, int32_t epilogue = 0) {
  int rank = batchDims + 2;
  auto sizes = [&](DtMemRef *m) { return m->sizesAndStrides; };
  auto strides = [&](DtMemRef *m) { return m->sizesAndStrides + rank; };
  auto base = [&](DtMemRef *m) {
    return static_cast<T *>(m->aligned) + m->offset;
  };
  int64_t batches = batchDims ? sizes(c)[0] : 1;
  int64_t m = sizes(c)[batchDims], n = sizes(c)[batchDims + 1],
          k = sizes(a)[batchDims + 1];
  if (m == 0 || n == 0)
    return;
  const T *biasData =
      bias ? static_cast<T *>(bias->aligned) + bias->offset : nullptr;
  int64_t biasStride = bias ? bias->sizesAndStrides[1] : 0;
  for (int64_t i = 0; i < batches; ++i) {
    auto at = [&](DtMemRef *x) {
      return base(x) + (batchDims ? i * strides(x)[0] : 0);
    };
    Matrix<T> ma =
        matrix(at(a), m, k, strides(a)[batchDims], strides(a)[batchDims + 1]);
    Matrix<T> mb =
        matrix(at(b), k, n, strides(b)[batchDims], strides(b)[batchDims + 1]);
    int64_t c0 = strides(c)[batchDims], c1 = strides(c)[batchDims + 1];
    T *cp = at(c);
    if (k == 0) {
      // No product: C keeps its value, or is zero when overwritten.
      if (beta == T(0))
        for (int64_t r = 0; r < m; ++r)
          for (int64_t q = 0; q < n; ++q)
            cp[r * c0 + q * c1] = T(0);
    } else if (c1 == 1 && c0 >= n) {
      gemm(ma, mb, beta, cp, c0);
    } else {
      // C with an unusual layout: compute densely and write back.
      std::vector<T> dense(m * n);
      if (beta != T(0))
        for (int64_t r = 0; r < m; ++r)
          for (int64_t q = 0; q < n; ++q)
            dense[r * n + q] = cp[r * c0 + q * c1];
      gemm(ma, mb, beta, dense.data(), n);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t q = 0; q < n; ++q)
          cp[r * c0 + q * c1] = dense[r * n + q];
    }
    if (epilogue)
      applyEpilogue(cp, m, n, c0, c1, biasData, biasStride, epilogue);
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
void dt_rt_batch_matmul_f32(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t,
                            DtMemRef *c) {
  matmul<float>(1, a, b, c);
}
void dt_rt_batch_matmul_f64(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t,
                            DtMemRef *c) {
  matmul<double>(1, a, b, c);
}
void dt_rt_matmul_into_f32(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t,
                           DtMemRef *c, int64_t, DtMemRef *bias,
                           int32_t epilogue) {
  matmul<float>(0, a, b, c, 0.0f, bias, epilogue);
}
void dt_rt_matmul_into_f64(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t,
                           DtMemRef *c, int64_t, DtMemRef *bias,
                           int32_t epilogue) {
  matmul<double>(0, a, b, c, 0.0, bias, epilogue);
}
void dt_rt_batch_matmul_into_f32(int64_t, DtMemRef *a, int64_t, DtMemRef *b,
                                 int64_t, DtMemRef *c, int64_t, DtMemRef *bias,
                                 int32_t epilogue) {
  matmul<float>(1, a, b, c, 0.0f, bias, epilogue);
}
void dt_rt_batch_matmul_into_f64(int64_t, DtMemRef *a, int64_t, DtMemRef *b,
                                 int64_t, DtMemRef *c, int64_t, DtMemRef *bias,
                                 int32_t epilogue) {
  matmul<double>(1, a, b, c, 0.0, bias, epilogue);
}
}
