// The hand-written CUDA baseline of bench/gpu.py, with the same library
// calls dt makes: cuBLASLt for the matmuls (bf16, f32 accumulation, the
// same column-major formulation and heuristic), hand-fused kernels for the
// elementwise work.
//
//   gpu-baseline copy BYTES REPS      device-to-device copy bandwidth
//   gpu-baseline mlp REPS             the MLP step of bench_mlp_bf16.mlir
//   gpu-baseline transformer REPS     the step of bench_transformer_bf16.mlir
//
// Prints "copy: best S s, GB/s X" / "mlp: best S s, mean S s" /
// "transformer: best S s, mean S s".
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

/// A bf16 matrix (or a batch of them) as the generated code passes it:
/// rows x cols, row stride s0, column stride s1, batch stride sb.
struct View {
  const __nv_bfloat16 *p;
  int64_t rows, cols, s0, s1, sb = 0;
};
/// A row-major-contiguous rows x cols matrix.
View dense(const __nv_bfloat16 *p, int64_t rows, int64_t cols) {
  return {p, rows, cols, cols, 1};
}
/// Its transpose, as a view (no copy).
View transposed(View v) { return {v.p, v.cols, v.rows, v.s1, v.s0, v.sb}; }

/// A column-major stored matrix and its op, as cuBLASLt takes it: a view
/// with contiguous rows is, read column-major, its own transpose (op N); one
/// with contiguous columns is stored as it is (op T gives the transpose).
struct Stored {
  int64_t rows, cols, ld;
  bool trans;
};
Stored transposeOf(View v) {
  if (v.s1 == 1)
    return {v.cols, v.rows, v.s0, false};
  return {v.rows, v.cols, v.s1, true};
}

/// A GEMM's cuBLASLt descriptors and algorithm, chosen once (as dt's runtime
/// caches them).
struct Plan {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
};

cublasLtMatrixLayout_t layout(Stored m, int batches, int64_t stride) {
  cublasLtMatrixLayout_t l;
  CHECK_LT(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, m.rows, m.cols, m.ld));
  if (batches > 1) {
    CHECK_LT(cublasLtMatrixLayoutSetAttribute(
        l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batches, sizeof(batches)));
    CHECK_LT(cublasLtMatrixLayoutSetAttribute(
        l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
        sizeof(stride)));
  }
  return l;
}

/// C = relu?(A B) (+ C when accumulating), each of `batches` matrices, bf16
/// with f32 accumulation: the column-major product C^T = B^T A^T with
/// cuBLASLt's relu epilogue, as dt's runtime does it.
void gemm(View a, View b, View c, cudaStream_t stream, int batches = 1,
          bool accumulate = false, bool relu = false) {
  Stored first = transposeOf(b), second = transposeOf(a),
         result = transposeOf(c);
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, bool, bool, int, int64_t,
                         int64_t, int64_t, bool>;
  static std::map<Key, Plan> plans;
  Key key{first.rows,  first.cols,  first.ld,     second.rows,
          second.cols, second.ld,   result.rows,  result.cols,
          result.ld,   first.trans, second.trans, batches,
          a.sb,        b.sb,        c.sb,         relu};
  auto it = plans.find(key);
  if (it == plans.end()) {
    Plan p;
    CHECK_LT(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t opFirst = first.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opSecond = second.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    CHECK_LT(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &opFirst, sizeof(opFirst)));
    CHECK_LT(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &opSecond, sizeof(opSecond)));
    cublasLtEpilogue_t ep =
        relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
    CHECK_LT(cublasLtMatmulDescSetAttribute(
        p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
    p.la = layout(first, batches, b.sb);
    p.lb = layout(second, batches, a.sb);
    p.lc = layout(result, batches, c.sb);
    cublasLtMatmulPreference_t pref;
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = kWorkspace;
    CHECK_LT(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t found;
    int count = 0;
    CHECK_LT(cublasLtMatmulAlgoGetHeuristic(lt, p.desc, p.la, p.lb, p.lc, p.lc,
                                            pref, 1, &found, &count));
    cublasLtMatmulPreferenceDestroy(pref);
    if (!count) {
      std::fprintf(stderr, "no cuBLASLt algorithm\n");
      std::exit(1);
    }
    p.algo = found.algo;
    it = plans.emplace(key, p).first;
  }
  const Plan &p = it->second;
  float one = 1.0f, zero = 0.0f;
  void *out = const_cast<__nv_bfloat16 *>(c.p);
  CHECK_LT(cublasLtMatmul(lt, p.desc, &one, b.p, p.la, a.p, p.lb,
                          accumulate ? &one : &zero, out, p.lc, out, p.lc,
                          &p.algo, workspace, kWorkspace, stream));
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

/// The cuBLASLt handle and workspace the steps' GEMMs share.
void startLt() {
  CHECK_LT(cublasLtCreate(&lt));
  CHECK(cudaMalloc(&workspace, kWorkspace));
}

/// A zeroed device array of n bf16 values.
__nv_bfloat16 *alloc(size_t n) {
  __nv_bfloat16 *p;
  CHECK(cudaMalloc(&p, n * sizeof(__nv_bfloat16)));
  CHECK(cudaMemset(p, 0, n * sizeof(__nv_bfloat16)));
  return p;
}

int mlp(int reps) {
  startLt();
  __nv_bfloat16 *x = alloc((size_t)B * D), *t = alloc((size_t)B * D),
                *w1 = alloc((size_t)D * H), *w2 = alloc((size_t)H * D),
                *a = alloc((size_t)B * H), *y = alloc((size_t)B * D),
                *dy = alloc((size_t)B * D), *dw2 = alloc((size_t)H * D),
                *da = alloc((size_t)B * H), *dh = alloc((size_t)B * H),
                *dw1 = alloc((size_t)D * H);
  cudaStream_t s = 0;
  size_t bh = (size_t)B * H, bd = (size_t)B * D;
  auto step = [&] {
    // a = relu(x w1) in the GEMM's epilogue; every product overwrites.
    gemm(dense(x, B, D), dense(w1, D, H), dense(a, B, H), s, 1, false, true);
    gemm(dense(a, B, H), dense(w2, H, D), dense(y, B, D), s);
    sub<<<blocks(bd), 256, 0, s>>>(y, t, dy, bd);
    gemm(transposed(dense(a, B, H)), dense(dy, B, D), dense(dw2, H, D), s);
    gemm(dense(dy, B, D), transposed(dense(w2, H, D)), dense(da, B, H), s);
    reluGrad<<<blocks(bh), 256, 0, s>>>(a, da, dh, bh);
    gemm(transposed(dense(x, B, D)), dense(dh, B, H), dense(dw1, D, H), s);
  };
  auto [best, mean] = timeIt(reps, step);
  std::printf("mlp: best %.6f s, mean %.6f s\n", best, mean);
  return 0;
}

// ---- The transformer block (bench_transformer_bf16.mlir) ----------------
//
// The same GEMMs as dt's (attention as strided batched GEMMs on the
// [S, NH, HD] layout), and one kernel per row for each norm and softmax,
// forward and backward, holding the row in registers: what a hand-written
// training step does.
constexpr int S = 2048, DM = 1024, NH = 16, HD = DM / NH, FF = 4096;
constexpr int kThreads = 256;

/// The op of all of the block's threads' v (every thread gets it).
template <typename Op> __device__ float blockReduce(float v, Op op) {
  __shared__ float partial[kThreads / 32];
  for (int o = 16; o > 0; o /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads(); // partial may still be read by a previous call
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < kThreads / 32; ++w)
    v = op(v, partial[w]);
  return v;
}
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ float ld(const __nv_bfloat16 *p) { return __bfloat162float(*p); }

/// This thread's PER elements of the rows of a and b that start at `base`
/// (less the thread index), and the rows' dot product (every thread gets
/// it).
template <int PER>
__device__ float loadRowsDot(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                             size_t base, float (&av)[PER], float (&bv)[PER]) {
  float dot = 0;
  for (int i = 0; i < PER; ++i) {
    av[i] = ld(a + base + i * kThreads);
    bv[i] = ld(b + base + i * kThreads);
    dot += av[i] * bv[i];
  }
  return blockReduce(dot, Sum());
}

/// Rows of PER * kThreads: ss = sum x^2, n = x / sqrt(ss / DM + eps).
template <int PER>
__global__ void rmsForward(const __nv_bfloat16 *x, __nv_bfloat16 *n,
                           float *ss) {
  const __nv_bfloat16 *row = x + (size_t)blockIdx.x * PER * kThreads;
  float v[PER], sq = 0;
  for (int i = 0; i < PER; ++i) {
    v[i] = ld(row + i * kThreads + threadIdx.x);
    sq += v[i] * v[i];
  }
  sq = blockReduce(sq, Sum());
  if (threadIdx.x == 0)
    ss[blockIdx.x] = sq;
  float r = rsqrtf(sq / DM + 1e-5f);
  for (int i = 0; i < PER; ++i)
    n[(size_t)blockIdx.x * PER * kThreads + i * kThreads + threadIdx.x] =
        __float2bfloat16(v[i] * r);
}

/// out = dres + r dn - x r^3 (dn . x) / DM, per row.
template <int PER>
__global__ void rmsBackward(const __nv_bfloat16 *x, const float *ss,
                            const __nv_bfloat16 *dn, const __nv_bfloat16 *dres,
                            __nv_bfloat16 *out) {
  size_t base = (size_t)blockIdx.x * PER * kThreads + threadIdx.x;
  float xv[PER], gv[PER];
  float dot = loadRowsDot<PER>(x, dn, base, xv, gv);
  float r = rsqrtf(ss[blockIdx.x] / DM + 1e-5f);
  float k = dot / DM * r * r * r;
  for (int i = 0; i < PER; ++i)
    out[base + i * kThreads] = __float2bfloat16(r * gv[i] - xv[i] * k +
                                                ld(dres + base + i * kThreads));
}

/// p = softmax(scale * s) per row.
template <int PER>
__global__ void softmaxForward(const __nv_bfloat16 *s, __nv_bfloat16 *p,
                               float scale) {
  size_t base = (size_t)blockIdx.x * PER * kThreads + threadIdx.x;
  float v[PER], mx = -INFINITY;
  for (int i = 0; i < PER; ++i) {
    v[i] = ld(s + base + i * kThreads) * scale;
    mx = fmaxf(mx, v[i]);
  }
  mx = blockReduce(mx, Max());
  float sum = 0;
  for (int i = 0; i < PER; ++i) {
    v[i] = __expf(v[i] - mx);
    sum += v[i];
  }
  sum = blockReduce(sum, Sum());
  for (int i = 0; i < PER; ++i)
    p[base + i * kThreads] = __float2bfloat16(v[i] / sum);
}

/// ds = scale * p (dp - p . dp) per row.
template <int PER>
__global__ void softmaxBackward(const __nv_bfloat16 *p, const __nv_bfloat16 *dp,
                                __nv_bfloat16 *ds, float scale) {
  size_t base = (size_t)blockIdx.x * PER * kThreads + threadIdx.x;
  float pv[PER], gv[PER];
  float dot = loadRowsDot<PER>(p, dp, base, pv, gv);
  for (int i = 0; i < PER; ++i)
    ds[base + i * kThreads] = __float2bfloat16(pv[i] * (gv[i] - dot) * scale);
}

__global__ void add(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                    __nv_bfloat16 *c, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = __hadd(a[i], b[i]);
}
/// dy = (h1 + m) - t.
__global__ void residualMinusTarget(const __nv_bfloat16 *h1,
                                    const __nv_bfloat16 *m,
                                    const __nv_bfloat16 *t, __nv_bfloat16 *dy,
                                    size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n)
    dy[i] = __hsub(__hadd(h1[i], m[i]), t[i]);
}

int transformer(int reps) {
  startLt();
  size_t sd = (size_t)S * DM, dd = (size_t)DM * DM, sf = (size_t)S * FF,
         df = (size_t)DM * FF, hss = (size_t)NH * S * S;
  __nv_bfloat16 *x = alloc(sd), *tg = alloc(sd), *wq = alloc(dd),
                *wk = alloc(dd), *wv = alloc(dd), *wo = alloc(dd),
                *w1 = alloc(df), *w2 = alloc(df);
  __nv_bfloat16 *n1 = alloc(sd), *q = alloc(sd), *k = alloc(sd), *v = alloc(sd),
                *sc = alloc(hss), *p = alloc(hss), *ctx = alloc(sd),
                *attn = alloc(sd), *h1 = alloc(sd), *n2 = alloc(sd),
                *a = alloc(sf), *m = alloc(sd), *dy = alloc(sd);
  __nv_bfloat16 *dw2 = alloc(df), *da = alloc(sf), *du = alloc(sf),
                *dw1 = alloc(df), *dn2 = alloc(sd), *dh1 = alloc(sd),
                *dwo = alloc(dd), *dctx = alloc(sd), *dp = alloc(hss),
                *ds = alloc(hss), *dq = alloc(sd), *dk = alloc(sd),
                *dv = alloc(sd), *dwq = alloc(dd), *dwk = alloc(dd),
                *dwv = alloc(dd), *dn1 = alloc(sd), *dx = alloc(sd);
  float *ss1, *ss2;
  CHECK(cudaMalloc(&ss1, S * sizeof(float)));
  CHECK(cudaMalloc(&ss2, S * sizeof(float)));
  const float scale = 1.0f / sqrtf((float)HD);
  cudaStream_t s = 0;
  // [S, NH, HD] as NH matrices S x HD, and the NH x S x S scores.
  auto heads = [](const __nv_bfloat16 *t) { return View{t, S, HD, DM, 1, HD}; };
  auto scores = [](const __nv_bfloat16 *t) {
    return View{t, S, S, S, 1, (int64_t)S * S};
  };
  auto step = [&] {
    // Forward.
    rmsForward<DM / kThreads><<<S, kThreads, 0, s>>>(x, n1, ss1);
    gemm(dense(n1, S, DM), dense(wq, DM, DM), dense(q, S, DM), s);
    gemm(dense(n1, S, DM), dense(wk, DM, DM), dense(k, S, DM), s);
    gemm(dense(n1, S, DM), dense(wv, DM, DM), dense(v, S, DM), s);
    gemm(heads(q), transposed(heads(k)), scores(sc), s, NH);
    softmaxForward<S / kThreads><<<NH * S, kThreads, 0, s>>>(sc, p, scale);
    gemm(scores(p), heads(v), heads(ctx), s, NH);
    gemm(dense(ctx, S, DM), dense(wo, DM, DM), dense(attn, S, DM), s);
    add<<<blocks(sd), 256, 0, s>>>(x, attn, h1, sd);
    rmsForward<DM / kThreads><<<S, kThreads, 0, s>>>(h1, n2, ss2);
    gemm(dense(n2, S, DM), dense(w1, DM, FF), dense(a, S, FF), s, 1, false,
         /*relu=*/true);
    gemm(dense(a, S, FF), dense(w2, FF, DM), dense(m, S, DM), s);
    residualMinusTarget<<<blocks(sd), 256, 0, s>>>(h1, m, tg, dy, sd);
    // Backward: the MLP.
    gemm(transposed(dense(a, S, FF)), dense(dy, S, DM), dense(dw2, FF, DM), s);
    gemm(dense(dy, S, DM), transposed(dense(w2, FF, DM)), dense(da, S, FF), s);
    reluGrad<<<blocks(sf), 256, 0, s>>>(a, da, du, sf);
    gemm(transposed(dense(n2, S, DM)), dense(du, S, FF), dense(dw1, DM, FF), s);
    gemm(dense(du, S, FF), transposed(dense(w1, DM, FF)), dense(dn2, S, DM), s);
    rmsBackward<DM / kThreads><<<S, kThreads, 0, s>>>(h1, ss2, dn2, dy, dh1);
    // The attention.
    gemm(transposed(dense(ctx, S, DM)), dense(dh1, S, DM), dense(dwo, DM, DM),
         s);
    gemm(dense(dh1, S, DM), transposed(dense(wo, DM, DM)), dense(dctx, S, DM),
         s);
    gemm(heads(dctx), transposed(heads(v)), scores(dp), s, NH);
    gemm(transposed(scores(p)), heads(dctx), heads(dv), s, NH);
    softmaxBackward<S / kThreads><<<NH * S, kThreads, 0, s>>>(p, dp, ds, scale);
    gemm(scores(ds), heads(k), heads(dq), s, NH);
    gemm(transposed(scores(ds)), heads(q), heads(dk), s, NH);
    gemm(transposed(dense(n1, S, DM)), dense(dq, S, DM), dense(dwq, DM, DM), s);
    gemm(transposed(dense(n1, S, DM)), dense(dk, S, DM), dense(dwk, DM, DM), s);
    gemm(transposed(dense(n1, S, DM)), dense(dv, S, DM), dense(dwv, DM, DM), s);
    gemm(dense(dq, S, DM), transposed(dense(wq, DM, DM)), dense(dn1, S, DM), s);
    gemm(dense(dk, S, DM), transposed(dense(wk, DM, DM)), dense(dn1, S, DM), s,
         1, /*accumulate=*/true);
    gemm(dense(dv, S, DM), transposed(dense(wv, DM, DM)), dense(dn1, S, DM), s,
         1, /*accumulate=*/true);
    rmsBackward<DM / kThreads><<<S, kThreads, 0, s>>>(x, ss1, dn1, dh1, dx);
  };
  auto [best, mean] = timeIt(reps, step);
  std::printf("transformer: best %.6f s, mean %.6f s\n", best, mean);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  if (argc >= 4 && !std::strcmp(argv[1], "copy"))
    return copy(std::strtoull(argv[2], nullptr, 10), std::atoi(argv[3]));
  if (argc >= 3 && !std::strcmp(argv[1], "mlp"))
    return mlp(std::atoi(argv[2]));
  if (argc >= 3 && !std::strcmp(argv[1], "transformer"))
    return transformer(std::atoi(argv[2]));
  std::fprintf(stderr, "usage: gpu-baseline copy BYTES REPS | mlp REPS | "
                       "transformer REPS\n");
  return 2;
}
