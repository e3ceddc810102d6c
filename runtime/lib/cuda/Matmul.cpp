//===- Matmul.cpp - linalg.matmul and batch_matmul through cuBLASLt -------===//
//
// C += A * B on device buffers the generated code passes as unranked
// memrefs, on the rank's stream; or, for the `into` forms, C = epilogue(A B)
// with beta = 0 and cuBLASLt's epilogue doing the bias and relu that
// dt-convert-matmul-to-blas took from the program (computed in f32 before C
// is rounded to its type). cuBLASLt is column-major; a row-major
// product C = A B is the column-major product C^T = B^T A^T, so the operands
// go in swapped and each row-major matrix is read as its own transpose. An
// operand whose columns are contiguous instead (a transposed view) flips its
// op. f16 and bf16 use tensor cores with f32 accumulation; f32 computes in
// f32 (no TF32: --verify compares against an f32 reference).
//
// The algorithm of each distinct problem is chosen once per rank
// (cublasLtMatmulAlgoGetHeuristic) and cached: a step's matmuls cost one
// cublasLtMatmul call each on the host. A problem includes its operands'
// alignment: cuBLASLt's heuristic assumes 256-byte aligned matrices unless
// told, and a view (a head's columns) may start at any element.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "GemmPlan.h"

#include "dt/runtime.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

#include <string>
#include <tuple>

namespace dt::rt::cuda {
namespace {

struct TypeInfo {
  cudaDataType_t data; ///< A and B.
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cudaDataType_t out; ///< C and D (and the bias).
  size_t bytes, outBytes;
  const char *name; ///< How --profile names it: "bf16", "bf16 -> f32".
};

using ProblemKey =
    std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               bool, bool, int64_t, int64_t, int64_t, int64_t, int32_t,
               uint32_t, uint32_t, uint32_t>;

/// The bits of the `into` forms' epilogue argument.
enum EpilogueBits : int32_t { kBias = 1, kRelu = 2 };

cublasLtEpilogue_t ltEpilogue(int32_t bits) {
  switch (bits & (kBias | kRelu)) {
  case kBias:
    return CUBLASLT_EPILOGUE_BIAS;
  case kRelu:
    return CUBLASLT_EPILOGUE_RELU;
  case kBias | kRelu:
    return CUBLASLT_EPILOGUE_RELU_BIAS;
  default:
    return CUBLASLT_EPILOGUE_DEFAULT;
  }
}

/// A problem's cuBLASLt descriptors and chosen algorithm.
struct Plan {
  /// How --profile names the problem: "matmul 2048x1024 by 1024x4096 bf16".
  std::string site;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
  ~Plan() {
    if (desc)
      cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : {a, b, c})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
  }
};

absl::Status ltError(cublasStatus_t status, const char *what) {
  return absl::InternalError(
      absl::StrCat("cuBLASLt: ", what, " failed with status ", status));
}
#define DT_LT(call)                                                            \
  do {                                                                         \
    cublasStatus_t dtStatus = (call);                                          \
    if (dtStatus != CUBLAS_STATUS_SUCCESS)                                     \
      return ltError(dtStatus, #call);                                         \
  } while (0)

absl::Status layout(cublasLtMatrixLayout_t &l, cudaDataType_t type,
                    int64_t rows, int64_t cols, int64_t ld, int64_t batches,
                    int64_t batchStride) {
  DT_LT(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  if (batches > 1) {
    int32_t count = static_cast<int32_t>(batches);
    DT_LT(cublasLtMatrixLayoutSetAttribute(
        l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    DT_LT(cublasLtMatrixLayoutSetAttribute(
        l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batchStride,
        sizeof(batchStride)));
  }
  return absl::OkStatus();
}

cublasStatus_t setBias(cublasLtMatmulDesc_t desc, CUdeviceptr bias) {
  const void *pointer = reinterpret_cast<const void *>(bias);
  return cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                        &pointer, sizeof(pointer));
}

/// C = epilogue(A B + beta C); beta is 1 (linalg.matmul's accumulation) or
/// 0 (the `into` forms).
absl::Status matmul(const TypeInfo &type, int batchDims, DtMemRef *a,
                    DtMemRef *b, DtMemRef *c, bool accumulate, DtMemRef *bias,
                    int32_t epilogue) {
  RankDevice *device = currentDevice();
  if (!device)
    return absl::FailedPreconditionError(
        "a GPU matmul ran on a thread bound to no device");
  int rank = batchDims + 2;
  auto sizes = [&](DtMemRef *m) { return m->sizesAndStrides; };
  auto strides = [&](DtMemRef *m) { return m->sizesAndStrides + rank; };
  auto base = [](DtMemRef *m, size_t element) {
    return reinterpret_cast<CUdeviceptr>(m->aligned) + m->offset * element;
  };
  // A and B hold `data`, C and the bias `out` (wider when mixed).
  size_t element = type.bytes, outElement = type.outBytes;
  CUdeviceptr baseA = base(a, element), baseB = base(b, element),
              baseC = base(c, outElement);
  int64_t batches = batchDims ? sizes(c)[0] : 1;
  int64_t m = sizes(c)[batchDims], n = sizes(c)[batchDims + 1],
          k = sizes(a)[batchDims + 1];
  if (m == 0 || n == 0 || batches == 0)
    return absl::OkStatus();
  int d = batchDims;
  if (k == 0) {
    // No product: C keeps its value, or is zero when overwritten.
    // dt-convert-matmul-to-blas gives no epilogue to a product whose inner
    // dim is empty.
    if (accumulate)
      return absl::OkStatus();
    if (epilogue)
      return absl::InternalError(
          "a GPU matmul with an empty inner dimension got an epilogue");
    if (strides(c)[d + 1] != 1)
      return absl::UnimplementedError(
          "a GPU matmul result needs contiguous rows");
    for (int64_t i = 0; i < batches; ++i)
      DT_CU(cuMemsetD2D8Async(
          baseC + (batchDims ? i * strides(c)[0] * outElement : 0),
          strides(c)[d] * outElement, 0, n * outElement, m, device->stream()));
    return absl::OkStatus();
  }
  if ((epilogue & kBias) && (batches > 1 || bias->sizesAndStrides[0] != n ||
                             bias->sizesAndStrides[1] != 1))
    return absl::UnimplementedError(
        absl::StrCat("a GPU matmul bias must be one contiguous vector of ", n,
                     " elements for an unbatched product (got ",
                     bias->sizesAndStrides[0], " elements, stride ",
                     bias->sizesAndStrides[1], ", ", batches, " batches)"));
  std::optional<ColumnMajorGemm> gemm =
      planColumnMajorGemm({m, k, strides(a)[d], strides(a)[d + 1]},
                          {k, n, strides(b)[d], strides(b)[d + 1]},
                          {m, n, strides(c)[d], strides(c)[d + 1]});
  if (!gemm)
    return absl::UnimplementedError(
        "a GPU matmul operand has a layout cuBLASLt cannot read in place "
        "(neither rows nor columns contiguous, or a transposed result)");
  int64_t sa = batchDims ? strides(a)[0] : 0,
          sb = batchDims ? strides(b)[0] : 0,
          sc = batchDims ? strides(c)[0] : 0;

  // Views (a head's columns, a slice's rows) may start anywhere: the
  // algorithm must work at the operands' alignment, which is part of the
  // problem.
  uint32_t alignA = matrixAlignment(baseA, batches, sa * element),
           alignB = matrixAlignment(baseB, batches, sb * element),
           alignC = matrixAlignment(baseC, batches, sc * outElement);
  static thread_local absl::flat_hash_map<ProblemKey, std::unique_ptr<Plan>>
      plans;
  const StoredMatrix &first = gemm->first, &second = gemm->second,
                     &result = gemm->result;
  ProblemKey key{static_cast<int>(type.data),
                 static_cast<int>(type.out),
                 m,
                 n,
                 k,
                 second.ld,
                 first.ld,
                 result.ld,
                 second.transpose,
                 first.transpose,
                 batches,
                 sa,
                 sb,
                 sc,
                 epilogue,
                 alignA,
                 alignB,
                 alignC};
  std::unique_ptr<Plan> &plan = plans[key];
  if (!plan) {
    auto fresh = std::make_unique<Plan>();
    DT_LT(cublasLtMatmulDescCreate(&fresh->desc, type.compute, type.scale));
    cublasOperation_t opFirst = first.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opSecond = second.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    DT_LT(cublasLtMatmulDescSetAttribute(
        fresh->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst)));
    DT_LT(cublasLtMatmulDescSetAttribute(
        fresh->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond)));
    // Row-major C's columns are the column-major result's rows: bias[j]
    // is cuBLASLt's per-row bias.
    cublasLtEpilogue_t ep = ltEpilogue(epilogue);
    DT_LT(cublasLtMatmulDescSetAttribute(
        fresh->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
    if (epilogue & kBias)
      DT_LT(setBias(fresh->desc, base(bias, outElement)));
    if (absl::Status s = layout(fresh->a, type.data, first.rows, first.cols,
                                first.ld, batches, sb);
        !s.ok())
      return s;
    if (absl::Status s = layout(fresh->b, type.data, second.rows, second.cols,
                                second.ld, batches, sa);
        !s.ok())
      return s;
    if (absl::Status s = layout(fresh->c, type.out, result.rows, result.cols,
                                result.ld, batches, sc);
        !s.ok())
      return s;
    cublasLtMatmulPreference_t preference;
    DT_LT(cublasLtMatmulPreferenceCreate(&preference));
    size_t workspace = device->workspaceSize();
    cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
        sizeof(workspace));
    // cuBLASLt's A is the row-major B and its B the row-major A (the
    // operands go in swapped); C and D are both the result.
    for (auto [attribute, alignment] :
         {std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignB},
          std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignA},
          std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC},
          std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignC}})
      cublasLtMatmulPreferenceSetAttribute(preference, attribute, &alignment,
                                           sizeof(alignment));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        device->lt(), fresh->desc, fresh->a, fresh->b, fresh->c, fresh->c,
        preference, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(preference);
    if (status != CUBLAS_STATUS_SUCCESS || found == 0)
      return absl::InternalError(
          absl::StrCat("cuBLASLt has no algorithm for a ", m, "x", k, " by ", k,
                       "x", n, " matmul (status ", status, ")"));
    fresh->algo = result.algo;
    fresh->site = absl::StrCat(
        batches > 1 ? "batch_matmul " : "matmul ",
        batches > 1 ? absl::StrCat(batches, "x") : "", m, "x", k, " by ", k,
        "x", n, " ", type.name, second.transpose ? ", A transposed" : "",
        first.transpose ? ", B transposed" : "",
        epilogue & kBias ? ", + bias" : "", epilogue & kRelu ? ", relu" : "");
    plan = std::move(fresh);
  }
  // The plan is shared by every call of the same shape: each brings its
  // own bias.
  if (epilogue & kBias)
    DT_LT(setBias(plan->desc, base(bias, outElement)));
  float one32 = 1.0f, zero32 = 0.0f;
  double one64 = 1.0, zero64 = 0.0;
  bool f64 = type.scale == CUDA_R_64F;
  const void *one = f64 ? static_cast<const void *>(&one64)
                        : static_cast<const void *>(&one32);
  const void *beta = accumulate ? one
                     : f64      ? static_cast<const void *>(&zero64)
                                : static_cast<const void *>(&zero32);
  SiteTimer timer(currentRank()); // --profile: by the problem.
  DT_LT(cublasLtMatmul(
      device->lt(), plan->desc, one, reinterpret_cast<void *>(baseB), plan->a,
      reinterpret_cast<void *>(baseA), plan->b, beta,
      reinterpret_cast<void *>(baseC), plan->c, reinterpret_cast<void *>(baseC),
      plan->c, &plan->algo, reinterpret_cast<void *>(device->workspace()),
      device->workspaceSize(), device->stream()));
  timer.done(SiteRun{plan->site.c_str(), /*compute=*/true});
  return absl::OkStatus();
}

void run(const TypeInfo &type, int batchDims, DtMemRef *a, DtMemRef *b,
         DtMemRef *c, bool accumulate = true, DtMemRef *bias = nullptr,
         int32_t epilogue = 0) {
  if (absl::Status s =
          matmul(type, batchDims, a, b, c, accumulate, bias, epilogue);
      !s.ok())
    reportError(std::move(s));
}

const TypeInfo kF32{
    CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, 4, 4, "f32"};
const TypeInfo kF64{
    CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, 8, 8, "f64"};
const TypeInfo kF16{
    CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, 2, 2, "f16"};
const TypeInfo kBF16{
    CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, 2, 2, "bf16"};
// Mixed precision: 16-bit operands, an f32 result (tensor cores, f32
// accumulation; nothing rounded).
const TypeInfo kF16ToF32{
    CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, 2, 4, "f16 -> f32"};
const TypeInfo kBF16ToF32{
    CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, 2,
    4,           "bf16 -> f32"};
} // namespace
} // namespace dt::rt::cuda

using namespace dt::rt::cuda;

#define DT_GPU_MATMUL(T, INFO)                                                 \
  extern "C" void dt_rt_gpu_matmul_##T(int64_t, DtMemRef *a, int64_t,          \
                                       DtMemRef *b, int64_t, DtMemRef *c) {    \
    run(INFO, 0, a, b, c);                                                     \
  }                                                                            \
  extern "C" void dt_rt_gpu_batch_matmul_##T(                                  \
      int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t, DtMemRef *c) {      \
    run(INFO, 1, a, b, c);                                                     \
  }                                                                            \
  extern "C" void dt_rt_gpu_matmul_into_##T(                                   \
      int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t, DtMemRef *c,        \
      int64_t, DtMemRef *bias, int32_t epilogue) {                             \
    run(INFO, 0, a, b, c, false, bias, epilogue);                              \
  }                                                                            \
  extern "C" void dt_rt_gpu_batch_matmul_into_##T(                             \
      int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t, DtMemRef *c,        \
      int64_t, DtMemRef *bias, int32_t epilogue) {                             \
    run(INFO, 1, a, b, c, false, bias, epilogue);                              \
  }
DT_GPU_MATMUL(f32, kF32)
DT_GPU_MATMUL(f64, kF64)
DT_GPU_MATMUL(f16, kF16)
DT_GPU_MATMUL(bf16, kBF16)
DT_GPU_MATMUL(f16_f32, kF16ToF32)
DT_GPU_MATMUL(bf16_f32, kBF16ToF32)
#undef DT_GPU_MATMUL
