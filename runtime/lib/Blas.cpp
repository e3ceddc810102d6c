//===- Blas.cpp - linalg.matmul and batch_matmul through OpenBLAS ---------===//
//
// C += A * B on buffers the generated code passes as unranked memrefs, or
// C = epilogue(A * B) (the `into` forms: gemm's beta = 0, then the bias and
// relu dt-convert-matmul-to-blas took from the program). An operand whose
// rows or columns are contiguous goes to gemm as it is (with the transpose
// flag for column-contiguous ones); anything else is copied to a dense array
// first. A product of one row or one column (a matvec: the compiler passes
// the vector as a matrix of one column or row) is a gemv. OpenBLAS runs on
// one thread when the runtime loads, its idle threads sleeping soon after a
// matmul; a job gives each rank the CPUs left over when every rank has one
// (RunOptions::blasThreads).
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "GemmParts.h"
#include "dt/Runtime/Job.h"
#include "dt/Runtime/Tensor.h"
#include "dt/runtime.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace dt::rt;

std::string dt::rt::blasKernels() {
  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64": the
  // version is its second word.
  std::string config = openblas_get_config();
  std::string version =
      config.substr(0, config.find(' ', config.find(' ') + 1));
  std::string kernels =
      absl::StrCat(version, ", its ", openblas_get_corename(), " kernels");
  if (const char *forced = std::getenv("OPENBLAS_CORETYPE"); forced && *forced)
    absl::StrAppend(&kernels, " (OPENBLAS_CORETYPE=", forced, ")");
  return kernels;
}

void dt::rt::setBlasThreads(int threads) {
  openblas_set_num_threads(std::max(threads, 1));
}

int dt::rt::blasThreads() { return openblas_get_num_threads(); }

int dt::rt::blasThreadsFor(int requested, int64_t ranksHere) {
  if (requested > 0)
    return requested;
  int fromEnvironment = 0;
  if (const char *env = std::getenv("OPENBLAS_NUM_THREADS");
      env && absl::SimpleAtoi(env, &fromEnvironment) && fromEnvironment > 0)
    return fromEnvironment;
  return cpusPerRank(ranksHere);
}

namespace {
/// How long OpenBLAS's idle threads watch for the next matmul before they
/// sleep, as OPENBLAS_THREAD_TIMEOUT counts it: 2^16 cycles, about 25 us,
/// as long as a rank's kernel helpers watch (KernelThreads.cpp).
constexpr const char *kBlasWatch = "16";

/// OpenBLAS's idle threads spin, yielding, for 2^28 cycles (about 0.1 s
/// here) after each matmul before they sleep, on the CPUs that the rank's
/// kernel threads need between its matmuls. OpenBLAS reads
/// OPENBLAS_THREAD_TIMEOUT once, when it loads and starts its threads, so
/// unless the user set it the runtime has OpenBLAS read it again with
/// kBlasWatch and restarts the threads. Through functions OpenBLAS's
/// pthreads build exports (for its fork handler), looked up in the OpenBLAS
/// this runtime linked rather than linked themselves: a build without them
/// keeps its threads as they are.
void shortenBlasWatch() {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT"))
    return;
  Dl_info linked;
  if (!dladdr(reinterpret_cast<void *>(&openblas_set_num_threads), &linked))
    return;
  void *openblas = dlopen(linked.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!openblas)
    return;
  auto readEnvironment =
      reinterpret_cast<void (*)()>(dlsym(openblas, "openblas_read_env"));
  auto stopThreads =
      reinterpret_cast<int (*)()>(dlsym(openblas, "blas_thread_shutdown_"));
  auto startThreads =
      reinterpret_cast<int (*)()>(dlsym(openblas, "blas_thread_init"));
  if (readEnvironment && stopThreads && startThreads) {
    setenv("OPENBLAS_THREAD_TIMEOUT", kBlasWatch, /*overwrite=*/0);
    readEnvironment();
    unsetenv("OPENBLAS_THREAD_TIMEOUT");
    stopThreads();
    startThreads();
  }
  dlclose(openblas);
}

struct SetBlasThreads {
  SetBlasThreads() {
    openblas_set_num_threads(1);
    shortenBlasWatch();
  }
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

/// One CBLAS call, C = A B + beta C; every count fits an int.
void blasGemm(const GemmOperand<float> &a, const GemmOperand<float> &b,
              float beta, float *c, int64_t ldc, int64_t m, int64_t n,
              int64_t k) {
  cblas_sgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
              b.transposed ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a.data,
              a.ld, b.data, b.ld, beta, c, ldc);
}
void blasGemm(const GemmOperand<double> &a, const GemmOperand<double> &b,
              double beta, double *c, int64_t ldc, int64_t m, int64_t n,
              int64_t k) {
  cblas_dgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
              b.transposed ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a.data,
              a.ld, b.data, b.ld, beta, c, ldc);
}
/// One CBLAS call, y = op(A) x + beta y, A `rows` x `cols` row-major.
void blasGemv(bool transposed, int64_t rows, int64_t cols, const float *a,
              int64_t lda, const float *x, int64_t incx, float beta, float *y,
              int64_t incy) {
  cblas_sgemv(CblasRowMajor, transposed ? CblasTrans : CblasNoTrans, rows, cols,
              1.0f, a, lda, x, incx, beta, y, incy);
}
void blasGemv(bool transposed, int64_t rows, int64_t cols, const double *a,
              int64_t lda, const double *x, int64_t incx, double beta,
              double *y, int64_t incy) {
  cblas_dgemv(CblasRowMajor, transposed ? CblasTrans : CblasNoTrans, rows, cols,
              1.0, a, lda, x, incx, beta, y, incy);
}

/// C = A B + beta C in one BLAS call; every count fits an int. A product of
/// one column (a matrix times a vector) or one row (a vector times a
/// matrix) is a gemv, which reads the matrix once where gemm packs it
/// first: 2.2 ms against 7-8 ms for 4096x4096 here.
template <typename T>
void blasProduct(const GemmOperand<T> &a, const GemmOperand<T> &b, T beta, T *c,
                 int64_t ldc, int64_t m, int64_t n, int64_t k) {
  if (m != 1 && n != 1)
    return blasGemm(a, b, beta, c, ldc, m, n, k);
  // y is C's one column (stride ldc) or its one row.
  int64_t length = n == 1 ? m : n, incy = n == 1 ? ldc : 1;
  if (beta == T(0)) {
    // gemv may scale y by zero rather than not read it: a NaN there stays.
    for (int64_t i = 0; i < length; ++i)
      c[i * incy] = T(0);
  }
  if (n == 1) {
    // C[:, 0] = A B[:, 0], A stored m x k (transposed: k x m).
    int64_t incx = b.transposed ? 1 : b.ld;
    if (a.transposed)
      return blasGemv(true, k, m, a.data, a.ld, b.data, incx, beta, c, incy);
    return blasGemv(false, m, k, a.data, a.ld, b.data, incx, beta, c, incy);
  }
  // C[0, :] = A[0, :] B, that is B^T A[0, :], B stored k x n (transposed:
  // n x k).
  int64_t incx = a.transposed ? a.ld : 1;
  if (b.transposed)
    return blasGemv(false, n, k, b.data, b.ld, a.data, incx, beta, c, incy);
  blasGemv(true, k, n, b.data, b.ld, a.data, incx, beta, c, incy);
}

/// `m` read as its transpose: the same elements, rows and columns swapped.
template <typename T> Matrix<T> transposedOf(Matrix<T> m) {
  return {m.data, m.cols, m.rows, m.ld, !m.transposed, std::move(m.copy)};
}

/// C = A B + beta C; with beta = 0 C is not read (BLAS semantics). Counts
/// past a BLAS int are cut into several calls (GemmParts.h).
template <typename T>
void gemm(const Matrix<T> &a, const Matrix<T> &b, T beta, T *c, int64_t ldc) {
  gemmInParts(GemmOperand<T>{a.data, a.ld, a.transposed},
              GemmOperand<T>{b.data, b.ld, b.transposed}, beta, c, ldc, a.rows,
              b.cols, a.cols, INT_MAX,
              [](const auto &...part) { blasProduct(part...); });
}

/// What the `into` forms do after the product: the bits of their epilogue
/// argument (dt-convert-matmul-to-blas).
enum EpilogueBits : int32_t { kBias = 1, kRelu = 2 };

/// arith.maximumf(x, +0.0): NaN stays NaN, -0.0 becomes +0.0.
template <typename T> T relu(T x) {
  return x > T(0) || std::isnan(x) ? x : T(0);
}

/// rows x cols of C (strides c0, c1) = relu?(C + bias?) in place. Rows of
/// contiguous elements and a contiguous bias, the usual case, take loops
/// the compiler vectorizes; the general loop would not be.
template <typename T>
void applyEpilogue(T *c, int64_t rows, int64_t cols, int64_t c0, int64_t c1,
                   const T *bias, int64_t biasStride, int32_t epilogue) {
  bool addBias = epilogue & kBias, applyRelu = epilogue & kRelu;
  bool contiguous = c1 == 1 && (!addBias || biasStride == 1);
  for (int64_t r = 0; r < rows; ++r) {
    T *row = c + r * c0;
    if (contiguous) {
      if (addBias)
        for (int64_t q = 0; q < cols; ++q)
          row[q] += bias[q];
      if (applyRelu)
        for (int64_t q = 0; q < cols; ++q)
          row[q] = relu(row[q]);
      continue;
    }
    for (int64_t q = 0; q < cols; ++q) {
      T v = row[q * c1];
      if (addBias)
        v += bias[q * biasStride];
      if (applyRelu)
        v = relu(v);
      row[q * c1] = v;
    }
  }
}

/// A memref the generated code passed, as this file reads it: its first
/// element, sizes and strides.
template <typename T> struct Strided {
  T *base;
  const int64_t *sizes, *strides;

  static Strided of(DtMemRef *m, int rank) {
    return {static_cast<T *>(m->aligned) + m->offset, m->sizesAndStrides,
            m->sizesAndStrides + rank};
  }
};

/// One C[b] = epilogue(A[b] * B[b] + beta C[b]), with `batchDims` leading
/// dims (0 or 1); beta is 1 (linalg.matmul's accumulation) or 0.
template <typename T>
void matmul(int batchDims, Strided<T> a, Strided<T> b, Strided<T> c, T beta,
            const T *bias = nullptr, int64_t biasStride = 0,
            int32_t epilogue = 0) {
  int64_t batches = batchDims ? c.sizes[0] : 1;
  int64_t m = c.sizes[batchDims], n = c.sizes[batchDims + 1],
          k = a.sizes[batchDims + 1];
  if (m == 0 || n == 0)
    return;
  for (int64_t i = 0; i < batches; ++i) {
    auto at = [&](const Strided<T> &x) {
      return x.base + (batchDims ? i * x.strides[0] : 0);
    };
    Matrix<T> ma =
        matrix(at(a), m, k, a.strides[batchDims], a.strides[batchDims + 1]);
    Matrix<T> mb =
        matrix(at(b), k, n, b.strides[batchDims], b.strides[batchDims + 1]);
    int64_t c0 = c.strides[batchDims], c1 = c.strides[batchDims + 1];
    T *cp = at(c);
    if (k == 0) {
      // No product: C keeps its value, or is zero when overwritten.
      if (beta == T(0))
        for (int64_t r = 0; r < m; ++r)
          for (int64_t q = 0; q < n; ++q)
            cp[r * c0 + q * c1] = T(0);
    } else if (c1 == 1 && c0 >= n) {
      gemm(ma, mb, beta, cp, c0);
    } else if (c0 == 1 && c1 >= m) {
      // C stored column by column (an NCHW convolution's product, per
      // image): C^T = B^T A^T, stored row by row.
      gemm(transposedOf(std::move(mb)), transposedOf(std::move(ma)), beta, cp,
           c1);
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
      applyEpilogue(cp, m, n, c0, c1, bias, biasStride, epilogue);
  }
}

//===----------------------------------------------------------------------===//
// 16-bit GEMMs
//===----------------------------------------------------------------------===//
//
// f16 and bf16 are computed as cuBLASLt computes them on the GPU (an f32
// compute type): the operands widened to f32, the product and its epilogue
// in f32, the result rounded once. So a 16-bit matmul gives the same numbers
// on both targets, up to the order of the sums, instead of rounding its
// accumulator at every step (docs/Design.md, "Documented choices").

/// Calls fn(offset, row) for each row (the innermost dim) of a rank-`rank`
/// array of `sizes` and `strides`: `offset` is the row's first element, `row`
/// its index in row-major order.
template <typename Fn>
void forEachRow(int rank, const int64_t *sizes, const int64_t *strides, Fn fn) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d)
    rows *= sizes[d];
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0, rest = row;
    for (int d = rank - 2; d >= 0; --d) {
      offset += rest % sizes[d] * strides[d];
      rest /= sizes[d];
    }
    fn(offset, row);
  }
}

/// `n` 16-bit values `stride` apart widened into `to` (contiguous), and back.
void widenRow(float *to, const uint16_t *from, int64_t n, int64_t stride,
              bool bf16) {
  if (stride == 1)
    return widenHalves(to, from, n, bf16);
  for (int64_t q = 0; q < n; ++q)
    widenHalves(to + q, from + q * stride, 1, bf16);
}
void narrowRow(uint16_t *to, int64_t stride, const float *from, int64_t n,
               bool bf16) {
  if (stride == 1)
    return narrowHalves(to, from, n, bf16);
  for (int64_t q = 0; q < n; ++q)
    narrowHalves(to + q * stride, from + q, 1, bf16);
}

/// The 16-bit `x` widened to f32 in `storage`: with x's own strides when x
/// is (nearly) dense, so that gemm reads a transposed operand as it is, else
/// packed row-major. `storage` holds wideElements(x) floats.
class Widened {
public:
  static int64_t span(const Strided<uint16_t> &x, int rank) {
    int64_t span = 1;
    for (int d = 0; d < rank; ++d) {
      if (x.sizes[d] == 0)
        return 0;
      span += (x.sizes[d] - 1) * x.strides[d];
    }
    return span;
  }
  static int64_t elements(const Strided<uint16_t> &x, int rank) {
    return numElements(absl::MakeConstSpan(x.sizes, rank));
  }
  /// A view on a span at most twice its elements keeps its strides.
  static bool keepsStrides(const Strided<uint16_t> &x, int rank) {
    for (int d = 0; d < rank; ++d)
      if (x.strides[d] < 0)
        return false;
    return span(x, rank) <= 2 * elements(x, rank);
  }
  static int64_t wideElements(const Strided<uint16_t> &x, int rank) {
    return keepsStrides(x, rank) ? span(x, rank) : elements(x, rank);
  }

  Widened(const Strided<uint16_t> &x, int rank, bool bf16, float *storage)
      : sizes(x.sizes, x.sizes + rank) {
    if (keepsStrides(x, rank)) {
      strides.assign(x.strides, x.strides + rank);
      widenHalves(storage, x.base, span(x, rank), bf16);
    } else {
      strides = rowMajorStrides(sizes);
      int64_t n = sizes[rank - 1], inner = x.strides[rank - 1];
      forEachRow(rank, x.sizes, x.strides, [&](int64_t offset, int64_t row) {
        widenRow(storage + row * n, x.base + offset, n, inner, bf16);
      });
    }
    view = {storage, sizes.data(), strides.data()};
  }

  static std::vector<int64_t>
  rowMajorStrides(const std::vector<int64_t> &sizes) {
    std::vector<int64_t> strides(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;)
      strides[d - 1] = strides[d] * sizes[d];
    return strides;
  }

  std::vector<int64_t> sizes, strides;
  Strided<float> view;
};

/// A and B of a 16-bit matmul widened to f32, in one block with `extra`
/// floats after them for the caller (a wide C and bias).
class WidenedOperands {
public:
  WidenedOperands(DtMemRef *a, DtMemRef *b, int rank, bool bf16, int64_t extra)
      : sa(Strided<uint16_t>::of(a, rank)), sb(Strided<uint16_t>::of(b, rank)),
        aWide(Widened::wideElements(sa, rank)),
        bWide(Widened::wideElements(sb, rank)),
        block(hostBlock((aWide + bWide + extra) * sizeof(float))),
        wa(sa, rank, bf16, storage()), wb(sb, rank, bf16, storage() + aWide) {}

  Strided<float> a() const { return wa.view; }
  Strided<float> b() const { return wb.view; }
  float *extra() { return storage() + aWide + bWide; }

private:
  float *storage() { return reinterpret_cast<float *>(block.get()); }
  Strided<uint16_t> sa, sb;
  int64_t aWide, bWide;
  HostBlock block;
  Widened wa, wb;
};

/// C = epilogue(A B + beta C) in f16 or bf16, through an f32 gemm.
void matmulHalf(int batchDims, DtMemRef *a, DtMemRef *b, DtMemRef *c, bool bf16,
                float beta, DtMemRef *bias = nullptr, int32_t epilogue = 0) {
  int rank = batchDims + 2;
  auto sc = Strided<uint16_t>::of(c, rank);
  int64_t n = sc.sizes[rank - 1];
  int64_t cWide = Widened::elements(sc, rank);
  // Without the bias bit, `bias` is C standing in (never read).
  bool hasBias = bias && (epilogue & kBias);
  int64_t biasWide = hasBias ? n : 0;
  if (cWide == 0)
    return;
  WidenedOperands wide(a, b, rank, bf16, cWide + biasWide);
  // C packed row-major in f32: read only when accumulated into.
  float *wc = wide.extra();
  std::vector<int64_t> cStrides =
      Widened::rowMajorStrides({sc.sizes, sc.sizes + rank});
  int64_t cInner = sc.strides[rank - 1];
  if (beta != 0.0f)
    forEachRow(rank, sc.sizes, sc.strides, [&](int64_t offset, int64_t row) {
      widenRow(wc + row * n, sc.base + offset, n, cInner, bf16);
    });
  float *wideBias = nullptr;
  if (hasBias) {
    wideBias = wc + cWide;
    auto sbias = Strided<uint16_t>::of(bias, 1);
    widenRow(wideBias, sbias.base, n, sbias.strides[0], bf16);
  }
  matmul<float>(batchDims, wide.a(), wide.b(), {wc, sc.sizes, cStrides.data()},
                beta, wideBias, 1, epilogue);
  forEachRow(rank, sc.sizes, sc.strides, [&](int64_t offset, int64_t row) {
    narrowRow(sc.base + offset, cInner, wc + row * n, n, bf16);
  });
}

/// C = epilogue(A B + beta C) with f16 or bf16 A and B and an f32 C (and
/// bias): the operands widened, C written as the f32 gemm leaves it.
void matmulHalfToFloat(int batchDims, DtMemRef *a, DtMemRef *b, DtMemRef *c,
                       bool bf16, float beta, DtMemRef *bias = nullptr,
                       int32_t epilogue = 0) {
  int rank = batchDims + 2;
  auto sc = Strided<float>::of(c, rank);
  if (numElements(absl::MakeConstSpan(sc.sizes, rank)) == 0)
    return;
  WidenedOperands wide(a, b, rank, bf16, 0);
  bool hasBias = bias && (epilogue & kBias);
  matmul<float>(batchDims, wide.a(), wide.b(), sc, beta,
                hasBias ? Strided<float>::of(bias, 1).base : nullptr,
                hasBias ? bias->sizesAndStrides[1] : 0, epilogue);
}

struct Half {};
struct BFloat16 {};
/// 16-bit A and B, an f32 C.
struct HalfToFloat {};
struct BFloat16ToFloat {};

/// What every entry point runs: C = epilogue(A B + C), or C = epilogue(A B)
/// when `overwrite`, in element type E (float, double, Half or BFloat16), or
/// from 16-bit A and B into an f32 C (HalfToFloat, BFloat16ToFloat).
template <typename E>
void matmulEntry(int batchDims, DtMemRef *a, DtMemRef *b, DtMemRef *c,
                 bool overwrite, DtMemRef *bias = nullptr,
                 int32_t epilogue = 0) {
  if constexpr (std::is_floating_point_v<E>) {
    int rank = batchDims + 2;
    matmul(batchDims, Strided<E>::of(a, rank), Strided<E>::of(b, rank),
           Strided<E>::of(c, rank), overwrite ? E(0) : E(1),
           bias ? Strided<E>::of(bias, 1).base : nullptr,
           bias ? bias->sizesAndStrides[1] : 0, epilogue);
  } else if constexpr (std::is_same_v<E, HalfToFloat> ||
                       std::is_same_v<E, BFloat16ToFloat>) {
    matmulHalfToFloat(batchDims, a, b, c, std::is_same_v<E, BFloat16ToFloat>,
                      overwrite ? 0.0f : 1.0f, bias, epilogue);
  } else {
    matmulHalf(batchDims, a, b, c, std::is_same_v<E, BFloat16>,
               overwrite ? 0.0f : 1.0f, bias, epilogue);
  }
}
} // namespace

extern "C" {
#define DT_RT_DEFINE_MATMULS(T, E)                                             \
  void dt_rt_matmul_##T(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t,   \
                        DtMemRef *c) {                                         \
    matmulEntry<E>(0, a, b, c, false);                                         \
  }                                                                            \
  void dt_rt_batch_matmul_##T(int64_t, DtMemRef *a, int64_t, DtMemRef *b,      \
                              int64_t, DtMemRef *c) {                          \
    matmulEntry<E>(1, a, b, c, false);                                         \
  }                                                                            \
  void dt_rt_matmul_into_##T(int64_t, DtMemRef *a, int64_t, DtMemRef *b,       \
                             int64_t, DtMemRef *c, int64_t, DtMemRef *bias,    \
                             int32_t epilogue) {                               \
    matmulEntry<E>(0, a, b, c, true, bias, epilogue);                          \
  }                                                                            \
  void dt_rt_batch_matmul_into_##T(int64_t, DtMemRef *a, int64_t, DtMemRef *b, \
                                   int64_t, DtMemRef *c, int64_t,              \
                                   DtMemRef *bias, int32_t epilogue) {         \
    matmulEntry<E>(1, a, b, c, true, bias, epilogue);                          \
  }
DT_RT_DEFINE_MATMULS(f32, float)
DT_RT_DEFINE_MATMULS(f64, double)
DT_RT_DEFINE_MATMULS(f16, Half)
DT_RT_DEFINE_MATMULS(bf16, BFloat16)
DT_RT_DEFINE_MATMULS(f16_f32, HalfToFloat)
DT_RT_DEFINE_MATMULS(bf16_f32, BFloat16ToFloat)
#undef DT_RT_DEFINE_MATMULS
}
