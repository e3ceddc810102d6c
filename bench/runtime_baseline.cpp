//===- runtime_baseline.cpp - Hand-written baselines for bench/runtime.py -===//
//
//   dt-bench-baseline mlp M K H REPEAT   y = relu(x w1) w2, x: MxK, w1: KxH,
//                                        w2: HxK; prints seconds per call
//                                        (min and mean) for the same OpenBLAS
//                                        sgemm calls dt makes, on one thread.
//   dt-bench-baseline conv N H W C F KH KW REPEAT
//                                        y = conv(x, w), NHWC/HWCF, stride 1,
//                                        no padding: an im2col loop and one
//                                        OpenBLAS sgemm on one thread (the
//                                        textbook CPU convolution); prints
//                                        seconds per call (min and mean).
//   dt-bench-baseline gconv N H W G C F KH KW REPEAT
//                                        the same of G groups, NHWGC/GFHWC:
//                                        an im2col loop and an sgemm per
//                                        group.
//   dt-bench-baseline dconv N H W C F KH KW REPEAT
//                                        the gradient of conv's input: dx of
//                                        NxHxWxC from dy and w (HWCF), one
//                                        OpenBLAS sgemm into col and a col2im
//                                        loop adding each patch into dx.
//   dt-bench-baseline backward M K N REPEAT
//                                        a linear layer's gradients, dw =
//                                        x^T dy (KxN) and dx = dy w^T (MxK)
//                                        for x: MxK, dy: MxN, w: KxN: two
//                                        OpenBLAS sgemm calls with a trans
//                                        flag each, on one thread.
//   dt-bench-baseline attention B S H D REPEAT
//                                        attention's two products per batch
//                                        and head, q, k, v and o stored
//                                        [B, S, H, D]: s = q k^T (SxS) and
//                                        o = s v, two OpenBLAS sgemm calls a
//                                        head on one thread.
//   dt-bench-baseline gemm M K N REPEAT  C = A B, A: MxK, B: KxN: one
//                                        OpenBLAS sgemm on one thread.
//   dt-bench-baseline gemv M K REPEAT    y = A x and z = A^T u, A: MxK: two
//                                        OpenBLAS sgemv calls on one thread.
//   dt-bench-baseline memcpy BYTES REPEAT  prints the best memcpy bandwidth.
//   dt-bench-baseline rows N REPEAT      out = x * y + x - y over N floats,
//                                        one loop; prints seconds per call
//                                        (min and mean).
//   dt-bench-baseline sums M N REPEAT    the row sums and the column sums of
//                                        an MxN matrix, each row into 16
//                                        lanes (element j into lane j mod
//                                        16, the order dt fixes), the
//                                        columns one row at a time.
//
//===----------------------------------------------------------------------===//

#include <cblas.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace {
double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(
      stderr,
      "dt-bench-baseline: %s\nusage: dt-bench-baseline mlp M K H REPEAT"
      " | conv N H W C F KH KW REPEAT | gconv N H W G C F KH KW REPEAT"
      " | dconv N H W C F KH KW REPEAT | backward M K N REPEAT"
      " | attention B S H D REPEAT | gemm M K N REPEAT | gemv M K REPEAT"
      " | memcpy BYTES REPEAT"
      " | rows N REPEAT | sums M N REPEAT\n",
      why.c_str());
  std::exit(2);
}

/// `text` as a positive integer, or the usage line.
long positive(const char *text, const char *name) {
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno || end == text || *end || value <= 0)
    usage(std::string(name) + " must be a positive integer, got '" + text +
          "'");
  return value;
}

void *alignedBytes(size_t bytes) {
  void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) {
    std::fprintf(stderr, "dt-bench-baseline: cannot allocate %zu bytes\n",
                 bytes);
    std::exit(1);
  }
  return p;
}

/// The product of `factors`, or the usage line when it overflows.
long product(std::initializer_list<long> factors) {
  long result = 1;
  for (long factor : factors)
    if (__builtin_mul_overflow(result, factor, &result))
      usage("the matrices' sizes overflow");
  return result;
}

/// An a x b matrix of floats.
float *alignedFloats(long a, long b) {
  size_t bytes;
  if (__builtin_mul_overflow(static_cast<size_t>(a), static_cast<size_t>(b),
                             &bytes) ||
      __builtin_mul_overflow(bytes, sizeof(float), &bytes))
    usage("the matrices' sizes overflow");
  return static_cast<float *>(alignedBytes(bytes));
}

/// An a x b matrix of small floats centred on zero that repeat every
/// `period` elements: (i % period - period / 2) / scale at element i.
float *patterned(long a, long b, long period, float scale) {
  float *p = alignedFloats(a, b);
  for (long i = 0; i < a * b; ++i)
    p[i] = static_cast<float>((i % period) - period / 2) / scale;
  return p;
}

/// Calls `step` `repeat` times and prints its best and mean seconds per
/// call, and `check` (a value of the result, so the work is not dropped).
template <typename Step, typename Check>
int timeCalls(int repeat, Step step, Check check) {
  double best = 1e30, total = 0;
  for (int r = 0; r < repeat; ++r) {
    double start = now();
    step();
    double t = now() - start;
    best = std::min(best, t);
    total += t;
  }
  std::printf("%.9f %.9f %g\n", best, total / repeat, check());
  return 0;
}

int mlp(long m, long k, long h, int repeat) {
  openblas_set_num_threads(1);
  float *x = patterned(m, k, 13, 8), *w1 = patterned(k, h, 7, 16),
        *w2 = patterned(h, k, 7, 16), *a = alignedFloats(m, h),
        *y = alignedFloats(m, k);
  return timeCalls(
      repeat,
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, h, k, 1.0f, x,
                    k, w1, h, 0.0f, a, h);
        for (long i = 0; i < m * h; ++i)
          a[i] = std::max(a[i], 0.0f);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, h, 1.0f, a,
                    h, w2, k, 0.0f, y, k);
      },
      [&] { return y[0]; });
}

/// y = conv(x, w) of `groups` groups of c channels in and f out, stride 1,
/// no padding: NHWC/HWCF for one group, NHWGC/GFHWC (linalg's
/// conv_2d_nhwgc_gfhwc) for several; for each group an im2col loop and one
/// OpenBLAS sgemm on one thread (the textbook CPU convolution).
int conv(long n, long h, long w, long groups, long c, long f, long kh, long kw,
         int repeat) {
  openblas_set_num_threads(1);
  if (kh > h || kw > w)
    usage("the window must fit in the image");
  long oh = h - kh + 1, ow = w - kw + 1, pixels = product({n, h, w, groups}),
       rows = product({n, oh, ow}), depth = product({kh, kw, c});
  float *x = patterned(pixels, c, 13, 8),
        *filter = patterned(product({groups, depth}), f, 7, 16),
        *col = alignedFloats(rows, depth),
        *y = alignedFloats(rows, product({groups, f}));
  // A window row's channels of one group lie together: all of it with one
  // group, a pixel's c channels with several.
  long run = groups == 1 ? kw * c : c;
  return timeCalls(
      repeat,
      [&] {
        for (long g = 0; g < groups; ++g) {
          // col[(b, i, j), (p, q, ch)] = x[b, i + p, j + q, g, ch]: each row
          // a patch, copied `run` contiguous floats at a time.
          float *out = col;
          for (long b = 0; b < n; ++b)
            for (long i = 0; i < oh; ++i)
              for (long j = 0; j < ow; ++j)
                for (long p = 0; p < kh; ++p)
                  for (long q = 0; q < kw; q += run / c, out += run)
                    std::memcpy(
                        out,
                        x + (((b * h + i + p) * w + j + q) * groups + g) * c,
                        run * sizeof(float));
          // One group's filter: [depth, f] (HWCF) or [f, depth] (GFHWC).
          bool byRows = groups == 1;
          cblas_sgemm(CblasRowMajor, CblasNoTrans,
                      byRows ? CblasNoTrans : CblasTrans, rows, f, depth, 1.0f,
                      col, depth, filter + g * depth * f, byRows ? f : depth,
                      0.0f, y + g * f, groups * f);
        }
      },
      [&] { return y[rows / 2 * groups * f]; });
}

/// dx = the gradient of conv(x, w)'s input x (NHWC/HWCF, stride 1, no
/// padding) from dy: col[(b, i, j), (p, q, ch)] = dy[(b, i, j), :] . w[(p,
/// q, ch), :] by one OpenBLAS sgemm on one thread, then each patch of col
/// added into dx where the forward read it (Caffe's col2im).
int convInputGradient(long n, long h, long w, long c, long f, long kh, long kw,
                      int repeat) {
  openblas_set_num_threads(1);
  if (kh > h || kw > w)
    usage("the window must fit in the image");
  long oh = h - kh + 1, ow = w - kw + 1, pixels = product({n, h, w}),
       rows = product({n, oh, ow}), depth = product({kh, kw, c});
  float *dy = patterned(rows, f, 13, 8), *filter = patterned(depth, f, 7, 16),
        *col = alignedFloats(rows, depth), *dx = alignedFloats(pixels, c);
  return timeCalls(
      repeat,
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, depth, f,
                    1.0f, dy, f, filter, f, 0.0f, col, depth);
        std::memset(dx, 0, pixels * c * sizeof(float));
        const float *patch = col;
        for (long b = 0; b < n; ++b)
          for (long i = 0; i < oh; ++i)
            for (long j = 0; j < ow; ++j)
              for (long p = 0; p < kh; ++p)
                for (long q = 0; q < kw; ++q, patch += c) {
                  float *to = dx + ((b * h + i + p) * w + j + q) * c;
                  for (long ch = 0; ch < c; ++ch)
                    to[ch] += patch[ch];
                }
      },
      [&] { return dx[pixels / 2 * c]; });
}

int rows(long n, int repeat) {
  float *x = patterned(n, 1, 13, 8), *y = patterned(n, 1, 7, 16),
        *out = alignedFloats(n, 1);
  return timeCalls(
      repeat,
      [&] {
        for (long i = 0; i < n; ++i)
          out[i] = x[i] * y[i] + x[i] - y[i];
      },
      [&] { return out[n / 2]; });
}

int sums(long m, long n, int repeat) {
  constexpr long kLanes = 16;
  float *x = patterned(m, n, 13, 8), *rowSums = alignedFloats(m, 1),
        *columnSums = alignedFloats(n, 1);
  return timeCalls(
      repeat,
      [&] {
        for (long i = 0; i < m; ++i) {
          const float *row = x + i * n;
          float lanes[kLanes];
          std::fill(lanes, lanes + kLanes, -0.0f);
          long j = 0;
          for (; j + kLanes <= n; j += kLanes)
            for (long l = 0; l < kLanes; ++l)
              lanes[l] += row[j + l];
          for (long l = 0; j < n; ++j, ++l)
            lanes[l] += row[j];
          float sum = 0.0f;
          for (float lane : lanes)
            sum += lane;
          rowSums[i] = sum;
        }
        std::fill(columnSums, columnSums + n, 0.0f);
        for (long i = 0; i < m; ++i)
          for (long j = 0; j < n; ++j)
            columnSums[j] += x[i * n + j];
      },
      [&] { return rowSums[m / 2] + columnSums[n / 2]; });
}

int backward(long m, long k, long n, int repeat) {
  openblas_set_num_threads(1);
  float *x = patterned(m, k, 13, 8), *dy = patterned(m, n, 7, 16),
        *w = patterned(k, n, 11, 16), *dw = alignedFloats(k, n),
        *dx = alignedFloats(m, k);
  return timeCalls(
      repeat,
      [&] {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, n, m, 1.0f, x,
                    k, dy, n, 0.0f, dw, n);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, n, 1.0f, dy,
                    n, w, n, 0.0f, dx, k);
      },
      [&] { return dw[0] + dx[0]; });
}

int attention(long b, long s, long h, long d, int repeat) {
  openblas_set_num_threads(1);
  long rows = product({b, s}), width = product({h, d});
  float *q = patterned(rows, width, 13, 8), *k = patterned(rows, width, 7, 16),
        *v = patterned(rows, width, 11, 16),
        *scores = alignedFloats(product({b, h, s}), s),
        *o = alignedFloats(rows, width);
  return timeCalls(
      repeat,
      [&] {
        for (long bi = 0; bi < b; ++bi)
          for (long hi = 0; hi < h; ++hi) {
            long at = bi * s * width + hi * d;
            float *sc = scores + (bi * h + hi) * s * s;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s, s, d, 1.0f,
                        q + at, width, k + at, width, 0.0f, sc, s);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s, d, s,
                        1.0f, sc, s, v + at, width, 0.0f, o + at, width);
          }
      },
      [&] { return o[0] + scores[0]; });
}

int gemm(long m, long k, long n, int repeat) {
  openblas_set_num_threads(1);
  float *a = patterned(m, k, 13, 8), *b = patterned(k, n, 7, 16),
        *c = alignedFloats(m, n);
  return timeCalls(
      repeat,
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a,
                    k, b, n, 0.0f, c, n);
      },
      [&] { return c[0]; });
}

int gemv(long m, long k, int repeat) {
  openblas_set_num_threads(1);
  float *a = patterned(m, k, 13, 8), *x = patterned(k, 1, 7, 16),
        *u = patterned(m, 1, 11, 16), *y = alignedFloats(m, 1),
        *z = alignedFloats(k, 1);
  return timeCalls(
      repeat,
      [&] {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, a, k, x, 1, 0.0f,
                    y, 1);
        cblas_sgemv(CblasRowMajor, CblasTrans, m, k, 1.0f, a, k, u, 1, 0.0f, z,
                    1);
      },
      [&] { return y[0] + z[0]; });
}

int copy(size_t bytes, int repeat) {
  char *src = static_cast<char *>(alignedBytes(bytes));
  char *dst = static_cast<char *>(alignedBytes(bytes));
  std::memset(src, 1, bytes);
  std::memset(dst, 2, bytes);
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    double start = now();
    std::memcpy(dst, src, bytes);
    best = std::min(best, now() - start);
  }
  std::printf("%.9f %g\n", best, bytes / best / 1e9 + dst[bytes / 2] * 0);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  if (argc == 6 && !std::strcmp(argv[1], "mlp")) {
    long m = positive(argv[2], "M"), k = positive(argv[3], "K"),
         h = positive(argv[4], "H"), repeat = positive(argv[5], "REPEAT");
    return mlp(m, k, h, repeat);
  }
  if (argc == 10 && !std::strcmp(argv[1], "conv")) {
    long sizes[7];
    const char *names[7] = {"N", "H", "W", "C", "F", "KH", "KW"};
    for (int i = 0; i < 7; ++i)
      sizes[i] = positive(argv[2 + i], names[i]);
    return conv(sizes[0], sizes[1], sizes[2], 1, sizes[3], sizes[4], sizes[5],
                sizes[6], positive(argv[9], "REPEAT"));
  }
  if (argc == 11 && !std::strcmp(argv[1], "gconv")) {
    long sizes[8];
    const char *names[8] = {"N", "H", "W", "G", "C", "F", "KH", "KW"};
    for (int i = 0; i < 8; ++i)
      sizes[i] = positive(argv[2 + i], names[i]);
    return conv(sizes[0], sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
                sizes[6], sizes[7], positive(argv[10], "REPEAT"));
  }
  if (argc == 10 && !std::strcmp(argv[1], "dconv")) {
    long sizes[7];
    const char *names[7] = {"N", "H", "W", "C", "F", "KH", "KW"};
    for (int i = 0; i < 7; ++i)
      sizes[i] = positive(argv[2 + i], names[i]);
    return convInputGradient(sizes[0], sizes[1], sizes[2], sizes[3], sizes[4],
                             sizes[5], sizes[6], positive(argv[9], "REPEAT"));
  }
  if (argc == 6 && !std::strcmp(argv[1], "backward")) {
    long m = positive(argv[2], "M"), k = positive(argv[3], "K"),
         n = positive(argv[4], "N"), repeat = positive(argv[5], "REPEAT");
    return backward(m, k, n, repeat);
  }
  if (argc == 7 && !std::strcmp(argv[1], "attention")) {
    long b = positive(argv[2], "B"), s = positive(argv[3], "S"),
         h = positive(argv[4], "H"), d = positive(argv[5], "D"),
         repeat = positive(argv[6], "REPEAT");
    return attention(b, s, h, d, repeat);
  }
  if (argc == 6 && !std::strcmp(argv[1], "gemm")) {
    long m = positive(argv[2], "M"), k = positive(argv[3], "K"),
         n = positive(argv[4], "N"), repeat = positive(argv[5], "REPEAT");
    return gemm(m, k, n, repeat);
  }
  if (argc == 5 && !std::strcmp(argv[1], "gemv")) {
    long m = positive(argv[2], "M"), k = positive(argv[3], "K"),
         repeat = positive(argv[4], "REPEAT");
    return gemv(m, k, repeat);
  }
  if (argc == 4 && !std::strcmp(argv[1], "memcpy")) {
    long bytes = positive(argv[2], "BYTES"),
         repeat = positive(argv[3], "REPEAT");
    return copy(bytes, repeat);
  }
  if (argc == 4 && !std::strcmp(argv[1], "rows")) {
    long n = positive(argv[2], "N"), repeat = positive(argv[3], "REPEAT");
    return rows(n, repeat);
  }
  if (argc == 5 && !std::strcmp(argv[1], "sums")) {
    long m = positive(argv[2], "M"), n = positive(argv[3], "N"),
         repeat = positive(argv[4], "REPEAT");
    return sums(m, n, repeat);
  }
  usage("expected mlp, conv, gconv, dconv, backward, attention, gemm, gemv, "
        "memcpy, rows or sums and their numbers");
}
