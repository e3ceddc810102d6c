// The hand-written CUDA baseline of bench/gpu.py, with the same library
// calls dt makes: cuBLASLt for the matmuls (bf16, f32 accumulation, the
// same column-major formulation and heuristic), hand-fused kernels for the
// elementwise work.
//
//   gpu-baseline copy BYTES REPS      device-to-device copy bandwidth
//   gpu-baseline mlp REPS             the MLP step of bench_mlp_bf16.mlir
//
// Prints "copy: best S s, GB/s X" / "mlp: best S s, mean S s".
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));             \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define CHECK_LT(x)                                                            \
  do {                                                                         \
    cublasStatus_t s = (x);                                                    \
    if (s != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "%s: status %d\n", #x, (int)s);                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {
constexpr int B = 4096, D = 1024, H = 4096;

cublasLtHandle_t lt;
void *workspace;
constexpr size_t kWorkspace = 32 << 20;

/// A matmul's cuBLASLt descriptors and algorithm, chosen once (as dt's
/// runtime caches them).
struct Plan {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
};

/// C (m x n, row-major) = relu?(op(A) op(B)), bf16, f32 accumulation: the
/// column-major product C^T = op(B)^T op(A)^T with beta = 0 and cuBLASLt's
/// relu epilogue, as dt's runtime does it.
void matmul(const __nv_bfloat16 *a, bool ta, const __nv_bfloat16 *b, bool tb,
            __nv_bfloat16 *c, int m, int n, int k, cudaStream_t stream,
            bool relu = false) {
  static std::map<std::tuple<int, int, int, bool, bool, bool>, Plan> plans;
  auto key = std::make_tuple(m, n, k, ta, tb, relu);
  auto it = plans.find(key);
  if (it == plans.end()) {
    Plan p;
    CHECK_LT(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    CHECK_LT(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &opB, sizeof(opB)));
    CHECK_LT(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &opA, sizeof(opA)));
    cublasLtEpilogue_t ep =
        relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
    CHECK_LT(cublasLtMatmulDescSetAttribute(
        p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
    // Row-major B (k x n, or n x k when transposed) is column-major B^T.
    CHECK_LT(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_16BF, tb ? k : n,
                                        tb ? n : k, tb ? k : n));
    CHECK_LT(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_16BF, ta ? m : k,
                                        ta ? k : m, ta ? m : k));
    CHECK_LT(cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_16BF, n, m, n));
    cublasLtMatmulPreference_t pref;
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = kWorkspace;
    CHECK_LT(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    CHECK_LT(cublasLtMatmulAlgoGetHeuristic(lt, p.desc, p.la, p.lb, p.lc, p.lc,
                                            pref, 1, &result, &found));
    cublasLtMatmulPreferenceDestroy(pref);
    if (!found) {
      std::fprintf(stderr, "no cuBLASLt algorithm\n");
      std::exit(1);
    }
    p.algo = result.algo;
    it = plans.emplace(key, p).first;
  }
  const Plan &p = it->second;
  float one = 1.0f, zero = 0.0f;
  CHECK_LT(cublasLtMatmul(lt, p.desc, &one, b, p.la, a, p.lb, &zero, c, p.lc, c,
                          p.lc, &p.algo, workspace, kWorkspace, stream));
}

__global__ void sub(const __nv_bfloat16 *y, const __nv_bfloat16 *t,
                    __nv_bfloat16 *dy, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n)
    dy[i] = __hsub(y[i], t[i]);
}
__global__ void reluGrad(const __nv_bfloat16 *a, const __nv_bfloat16 *da,
                         __nv_bfloat16 *dh, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n)
    dh[i] = __bfloat162float(a[i]) > 0.0f ? da[i] : __float2bfloat16(0.0f);
}

unsigned blocks(size_t n) { return (unsigned)((n + 255) / 256); }

template <typename Fn> std::pair<double, double> timeIt(int reps, Fn &&fn) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  fn(); // warm-up
  CHECK(cudaDeviceSynchronize());
  double best = 1e30, total = 0;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(start));
    fn();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms / 1e3);
    total += ms / 1e3;
  }
  return {best, total / reps};
}

int copy(size_t bytes, int reps) {
  void *src, *dst;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemset(src, 1, bytes));
  auto [best, mean] = timeIt(reps, [&] {
    CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
  });
  // A copy reads and writes every byte.
  std::printf("copy: best %.6f s, mean %.6f s, GB/s %.1f\n", best, mean,
              2.0 * bytes / best / 1e9);
  return 0;
}

int mlp(int reps) {
  CHECK_LT(cublasLtCreate(&lt));
  CHECK(cudaMalloc(&workspace, kWorkspace));
  auto alloc = [](size_t n) {
    __nv_bfloat16 *p;
    CHECK(cudaMalloc(&p, n * sizeof(__nv_bfloat16)));
    CHECK(cudaMemset(p, 0, n * sizeof(__nv_bfloat16)));
    return p;
  };
  __nv_bfloat16 *x = alloc((size_t)B * D), *t = alloc((size_t)B * D),
                *w1 = alloc((size_t)D * H), *w2 = alloc((size_t)H * D),
                *a = alloc((size_t)B * H),
                *y = alloc((size_t)B * D), *dy = alloc((size_t)B * D),
                *dw2 = alloc((size_t)H * D), *da = alloc((size_t)B * H),
                *dh = alloc((size_t)B * H), *dw1 = alloc((size_t)D * H);
  cudaStream_t s = 0;
  size_t bh = (size_t)B * H, bd = (size_t)B * D;
  auto step = [&] {
    // a = relu(x w1) in the GEMM's epilogue; every product overwrites.
    matmul(x, false, w1, false, a, B, H, D, s, /*relu=*/true);
    matmul(a, false, w2, false, y, B, D, H, s);
    sub<<<blocks(bd), 256, 0, s>>>(y, t, dy, bd);
    matmul(a, true, dy, false, dw2, H, D, B, s);
    matmul(dy, false, w2, true, da, B, H, D, s);
    reluGrad<<<blocks(bh), 256, 0, s>>>(a, da, dh, bh);
    matmul(x, true, dh, false, dw1, D, H, B, s);
  };
  auto [best, mean] = timeIt(reps, step);
  std::printf("mlp: best %.6f s, mean %.6f s\n", best, mean);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  if (argc >= 4 && !std::strcmp(argv[1], "copy"))
    return copy(std::strtoull(argv[2], nullptr, 10), std::atoi(argv[3]));
  if (argc >= 3 && !std::strcmp(argv[1], "mlp"))
    return mlp(std::atoi(argv[2]));
  std::fprintf(stderr, "usage: gpu-baseline copy BYTES REPS | mlp REPS\n");
  return 2;
}
