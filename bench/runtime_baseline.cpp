//===- runtime_baseline.cpp - Hand-written baselines for bench/runtime.py -===//
//
//   dt-bench-baseline mlp M K H REPEAT   y = relu(x w1) w2, x: MxK, w1: KxH,
//                                        w2: HxK; prints seconds per call
//                                        (min and mean) for the same OpenBLAS
//                                        sgemm calls dt makes, on one thread.
//   dt-bench-baseline memcpy BYTES REPEAT  prints the best memcpy bandwidth.
//
//===----------------------------------------------------------------------===//

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

float *alignedFloats(size_t n) {
  void *p = std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  return static_cast<float *>(p);
}

int mlp(long m, long k, long h, int repeat) {
  openblas_set_num_threads(1);
  float *x = alignedFloats(m * k), *w1 = alignedFloats(k * h),
        *w2 = alignedFloats(h * k), *a = alignedFloats(m * h),
        *y = alignedFloats(m * k);
  for (long i = 0; i < m * k; ++i)
    x[i] = static_cast<float>((i % 13) - 6) / 8;
  for (long i = 0; i < k * h; ++i)
    w1[i] = w2[i] = static_cast<float>((i % 7) - 3) / 16;
  double best = 1e30, total = 0;
  for (int r = 0; r < repeat; ++r) {
    double start = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, h, k, 1.0f, x, k,
                w1, h, 0.0f, a, h);
    for (long i = 0; i < m * h; ++i)
      a[i] = std::max(a[i], 0.0f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, h, 1.0f, a, h,
                w2, k, 0.0f, y, k);
    double t = now() - start;
    best = std::min(best, t);
    total += t;
  }
  std::printf("%.9f %.9f %g\n", best, total / repeat, y[0]);
  return 0;
}

int copy(size_t bytes, int repeat) {
  char *src = static_cast<char *>(std::aligned_alloc(64, bytes));
  char *dst = static_cast<char *>(std::aligned_alloc(64, bytes));
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
  if (argc == 6 && !std::strcmp(argv[1], "mlp"))
    return mlp(std::atol(argv[2]), std::atol(argv[3]), std::atol(argv[4]),
               std::atoi(argv[5]));
  if (argc == 4 && !std::strcmp(argv[1], "memcpy"))
    return copy(std::strtoull(argv[2], nullptr, 10), std::atoi(argv[3]));
  std::fprintf(stderr, "usage: dt-bench-baseline mlp M K H REPEAT | memcpy BYTES REPEAT\n");
  return 2;
}
