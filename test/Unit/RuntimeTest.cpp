//===- RuntimeTest.cpp - The runtime's host-side pieces -------------------===//

#include "dt/runtime.h"
#include "dt/Runtime/Job.h"
#include "dt/Runtime/Program.h"
#include "dt/Runtime/Tensor.h"
#include "dt/Sharding/Exchange.h"
#include "dt/Sharding/ShardLayout.h"

#include "Context.h"
#include "ExchangeCopies.h"
#include "GemmParts.h"
#include "cuda/GemmPlan.h"
#include "cuda/PieceCopies.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <sched.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

#define DT_STR_(x) #x
#define DT_STR(x) DT_STR_(x)
/// "dt-program N" of the runtime's ABI version.
#define DT_ABI_STR DT_STR(DT_ABI_VERSION)

using namespace dt;
using namespace dt::rt;

namespace {
std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
}

TEST(Half, RoundTripsEveryFiniteHalf) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    if ((h & 0x7c00) == 0x7c00)
      continue; // Inf and NaN.
    EXPECT_EQ(floatToHalf(halfToFloat(h)), h) << bits;
  }
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // Rounds to infinity.
  // Halfway between two halves: ties go to the even mantissa.
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3c02);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  float halfway;
  uint32_t bits = 0x3f808000; // Exactly between 0x3f80 and 0x3f81.
  std::memcpy(&halfway, &bits, 4);
  EXPECT_EQ(floatToBF16(halfway), 0x3f80);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(NAN))));
}

} // namespace

// The compiler-runtime helpers the runtime defines for artifacts
// (runtime/lib/CompilerHelpers.cpp), named as LLVM calls them.
extern "C" float __truncsfbf2(float);
extern "C" float __truncdfbf2(double);

namespace {
/// The bf16 in the low 16 bits of a helper's result.
uint16_t lowBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits);
}

TEST(BFloat16, CompilerHelpersRoundAsTheRuntimeDoes) {
  std::mt19937 random(5);
  for (int i = 0; i < 100000; ++i) {
    uint32_t bits = random();
    if (i % 4 == 0)
      bits = (bits & 0xffff0000) | 0x8000; // A tie.
    float f;
    std::memcpy(&f, &bits, 4);
    ASSERT_EQ(lowBits(__truncsfbf2(f)), floatToBF16(f)) << std::hex << bits;
    // An f32 is a double exactly: the f64 helper rounds it alike.
    ASSERT_EQ(lowBits(__truncdfbf2(static_cast<double>(f))), floatToBF16(f))
        << std::hex << bits;
  }
  // The largest finite f32 rounds to infinity, a NaN whose payload the
  // carry would make infinite stays a NaN.
  EXPECT_EQ(lowBits(__truncsfbf2(std::numeric_limits<float>::max())), 0x7f80);
  uint32_t nanBits = 0x7f800001;
  float nan;
  std::memcpy(&nan, &nanBits, 4);
  EXPECT_EQ(lowBits(__truncsfbf2(nan)), 0x7fc0);
  // Just above the midpoint between 1 and its bf16 successor: to f32 first
  // (to nearest) lands on the midpoint, whose tie goes down; once, up.
  double above = 1.0 + 1.0 / 256 + 1.0 / (1 << 30);
  EXPECT_EQ(lowBits(__truncdfbf2(above)), 0x3f81);
  EXPECT_EQ(lowBits(__truncdfbf2(-above)), 0xbf81);
  EXPECT_EQ(lowBits(__truncdfbf2(1e39)), 0x7f80);
  EXPECT_EQ(lowBits(__truncdfbf2(-std::numeric_limits<double>::infinity())),
            0xff80);
  EXPECT_TRUE(std::isnan(bf16ToFloat(lowBits(__truncdfbf2(NAN)))));
}

TEST(Npy, WritesAndReadsEveryDType) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16,
                      DType::I32, DType::I64}) {
    HostTensor t(dtype, {3, 5});
    for (size_t i = 0; i < t.byteSize(); ++i)
      static_cast<unsigned char *>(t.data())[i] =
          static_cast<unsigned char>(i * 7);
    std::string path = tempPath("npy");
    ASSERT_TRUE(writeNpy(path, t).ok());
    absl::StatusOr<NpyHeader> header = readNpyHeader(path, "test");
    ASSERT_TRUE(header.ok()) << header.status();
    EXPECT_EQ(header->dtype, dtype);
    EXPECT_EQ(header->shape, (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(header->dataOffset % 64, 0u);
    HostTensor back(dtype, {3, 5});
    ASSERT_TRUE(
        readNpyBox(path, "test", dtype, {3, 5}, {0, 0}, {3, 5}, back).ok());
    EXPECT_EQ(std::memcmp(back.data(), t.data(), t.byteSize()), 0);
    std::remove(path.c_str());
  }
}

TEST(Npy, ReadsABoxIntoALargerBuffer) {
  HostTensor t(DType::I32, {4, 6});
  for (int i = 0; i < 24; ++i)
    static_cast<int32_t *>(t.data())[i] = i;
  std::string path = tempPath("box");
  ASSERT_TRUE(writeNpy(path, t).ok());
  HostTensor box(DType::I32, {3, 4}); // One row and one column of padding.
  ASSERT_TRUE(
      readNpyBox(path, "test", DType::I32, {4, 6}, {1, 2}, {2, 3}, box).ok());
  const int32_t *b = static_cast<const int32_t *>(box.data());
  EXPECT_EQ(b[0], 8);  // (1, 2)
  EXPECT_EQ(b[2], 10); // (1, 4)
  EXPECT_EQ(b[4], 14); // (2, 2)
  EXPECT_EQ(b[3], 0);  // Padding stays zero.
  EXPECT_EQ(b[8], 0);
  std::remove(path.c_str());
}

namespace {
/// copyBox of int32 elements, one element at a time.
void copyElementwise(const std::vector<int32_t> &src,
                     const std::vector<int64_t> &srcShape,
                     const std::vector<int64_t> &srcOffset,
                     std::vector<int32_t> &dst,
                     const std::vector<int64_t> &dstShape,
                     const std::vector<int64_t> &dstOffset,
                     const std::vector<int64_t> &box) {
  int rank = box.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < numElements(box); ++i) {
    int64_t rest = i, fs = 0, fd = 0;
    for (int d = rank - 1; d >= 0; --d) {
      index[d] = rest % box[d];
      rest /= box[d];
    }
    for (int d = 0; d < rank; ++d) {
      fs = fs * srcShape[d] + srcOffset[d] + index[d];
      fd = fd * dstShape[d] + dstOffset[d] + index[d];
    }
    dst[fd] = src[fs];
  }
}
} // namespace

TEST(CopyBox, CopyAndZeroMatchElementwiseOnRandomBoxes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    int rank = 1 + rng() % 4;
    std::vector<int64_t> src(rank), dst(rank), box(rank), so(rank), to(rank);
    for (int d = 0; d < rank; ++d) {
      box[d] = rng() % 4;
      src[d] = box[d] + rng() % 3;
      dst[d] = box[d] + rng() % 3;
      so[d] = rng() % (src[d] - box[d] + 1);
      to[d] = rng() % (dst[d] - box[d] + 1);
    }
    std::vector<int32_t> a(numElements(src)), b(numElements(dst), -1),
        expected(numElements(dst), -1);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = static_cast<int32_t>(i);
    copyElementwise(a, src, so, expected, dst, to, box);
    copyBox(a.data(), src, so, b.data(), dst, to, box, sizeof(int32_t));
    ASSERT_EQ(b, expected) << "trial " << trial;
    // zeroBox clears exactly the elements copyBox wrote.
    std::vector<int32_t> cleared = b;
    for (size_t i = 0; i < b.size(); ++i)
      if (expected[i] != -1)
        cleared[i] = 0;
    zeroBox(b.data(), dst, to, box, sizeof(int32_t));
    ASSERT_EQ(b, cleared) << "trial " << trial;
  }
}

TEST(MemrefCopy, MatchesElementwiseOnRandomViews) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    int rank = rng() % 4;
    std::vector<int64_t> sizes(rank);
    for (int d = 0; d < rank; ++d)
      sizes[d] = rng() % 4;
    // Each side a view into a larger buffer: padded extents, a permutation
    // of the dims, an offset.
    auto makeView = [&](std::vector<int32_t> &buffer,
                        std::vector<int64_t> &desc) {
      std::vector<int> order(rank);
      for (int d = 0; d < rank; ++d)
        order[d] = d;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<int64_t> strides(rank);
      int64_t stride = 1;
      for (int i = rank - 1; i >= 0; --i) {
        strides[order[i]] = stride;
        stride *= sizes[order[i]] + rng() % 2;
      }
      int64_t offset = rng() % 3;
      buffer.assign(static_cast<size_t>(offset + stride), -1);
      // allocated, aligned, offset, sizes, strides: as int64 words.
      desc.assign(3 + 2 * rank, 0);
      desc[2] = offset;
      for (int d = 0; d < rank; ++d) {
        desc[3 + d] = sizes[d];
        desc[3 + rank + d] = strides[d];
      }
      void *data = buffer.data();
      std::memcpy(&desc[0], &data, sizeof(void *));
      std::memcpy(&desc[1], &data, sizeof(void *));
    };
    std::vector<int32_t> from, to;
    std::vector<int64_t> fromDesc, toDesc;
    makeView(from, fromDesc);
    makeView(to, toDesc);
    for (size_t i = 0; i < from.size(); ++i)
      from[i] = static_cast<int32_t>(i);
    std::vector<int32_t> expected = to;
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < numElements(sizes); ++i) {
      int64_t rest = i, at = fromDesc[2], dst = toDesc[2];
      for (int d = rank - 1; d >= 0; --d) {
        index[d] = rest % sizes[d];
        rest /= sizes[d];
      }
      for (int d = 0; d < rank; ++d) {
        at += index[d] * fromDesc[3 + rank + d];
        dst += index[d] * toDesc[3 + rank + d];
      }
      expected[dst] = from[at];
    }
    DtUnrankedMemRef source{rank,
                            reinterpret_cast<DtMemRef *>(fromDesc.data())};
    DtUnrankedMemRef target{rank, reinterpret_cast<DtMemRef *>(toDesc.data())};
    memrefCopy(sizeof(int32_t), &source, &target);
    ASSERT_EQ(to, expected) << "trial " << trial;
  }
}

TEST(Description, ParsesEntriesAndRejectsGarbage) {
  absl::StatusOr<ProgramSpec> spec = parseDescription(
      "dt-program " DT_ABI_STR "\nentry main\nmesh dp=2 tp=2\n"
      "arg 0 x f32 16x64 S(0),R\narg 1 - bf16 scalar R,P(max)\n"
      "result 0 y f64 16x64 S(0),S(1)\nend\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const EntrySpec *main = spec->find("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->mesh.size(), 4);
  EXPECT_EQ(main->mesh.str(), "dp=2 tp=2");
  ASSERT_EQ(main->args.size(), 2u);
  EXPECT_EQ(main->args[0].label("argument"), "argument #0 (x)");
  EXPECT_EQ(main->args[1].label("argument"), "argument #1");
  EXPECT_TRUE(main->args[1].shape.empty());
  EXPECT_EQ(main->args[1].placements[1],
            Placement::partial(ReductionKind::Max));
  EXPECT_EQ(main->results[0].dtype, DType::F64);

  EXPECT_FALSE(parseDescription("").ok());
  // Another ABI version: refused, with the one it has and the one expected.
  absl::StatusOr<ProgramSpec> other = parseDescription(
      "dt-program " + std::to_string(DT_ABI_VERSION + 1) + "\n");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("ABI version"), std::string::npos)
      << other.status();
  EXPECT_FALSE(parseDescription("dt-program " DT_ABI_STR
                                "\nentry f\nmesh tp=2\narg 0 x f32 4 S(1)\n")
                   .ok());
  EXPECT_FALSE(parseDescription("dt-program " DT_ABI_STR
                                "\nentry f\nmesh tp=2\narg 0 x f32 4 R,R\n")
                   .ok());
  EXPECT_FALSE(
      parseDescription("dt-program " DT_ABI_STR "\nentry f\nmesh tp=0\n").ok());
}

/// Scattering a global tensor to every rank and assembling it back is the
/// identity, for random meshes, shapes and placements (shards, replicas and
/// partial sums, whose non-first ranks hold zeros).
TEST(Layout, ScatterThenAssembleIsIdentity) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    Mesh mesh;
    int axes = 1 + rng() % 3;
    for (int a = 0; a < axes; ++a) {
      mesh.axisNames.push_back("a" + std::to_string(a));
      mesh.shape.push_back(1 + rng() % 3);
    }
    TensorSpec spec;
    spec.dtype = DType::F32;
    int rank = 1 + rng() % 3;
    for (int d = 0; d < rank; ++d)
      spec.shape.push_back(1 + rng() % 7);
    for (int a = 0; a < axes; ++a) {
      int kind = rng() % 3;
      spec.placements.push_back(kind == 0   ? Placement::replicate()
                                : kind == 1 ? Placement::shard(rng() % rank)
                                            : Placement::partial());
    }
    HostTensor global(DType::F32, spec.shape);
    for (int64_t i = 0; i < global.numElements(); ++i)
      static_cast<float *>(global.data())[i] = static_cast<float>(i % 17) - 8;
    std::vector<HostTensor> locals;
    for (int64_t r = 0; r < mesh.size(); ++r)
      locals.push_back(extractShard(global, spec, mesh, r));
    std::vector<const HostTensor *> pointers;
    for (const HostTensor &t : locals)
      pointers.push_back(&t);
    absl::StatusOr<HostTensor> back = assembleGlobal(pointers, spec, mesh);
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(std::memcmp(back->data(), global.data(), global.byteSize()), 0)
        << "trial " << trial;
  }
}

TEST(Layout, SeededValuesDoNotDependOnTheMesh) {
  TensorSpec spec;
  spec.dtype = DType::F32;
  spec.shape = {6, 4};
  spec.placements = {Placement::shard(0), Placement::shard(1)};
  Mesh mesh{{"a", "b"}, {3, 2}};
  HostTensor global(DType::F32, spec.shape);
  fillSeeded(global, spec, Mesh{}, 0, 42);
  for (int64_t r = 0; r < mesh.size(); ++r) {
    HostTensor local(DType::F32, localShape(spec, mesh));
    fillSeeded(local, spec, mesh, r, 42);
    HostTensor expected = extractShard(global, spec, mesh, r);
    EXPECT_EQ(std::memcmp(local.data(), expected.data(), local.byteSize()), 0);
  }
}
} // namespace

//===----------------------------------------------------------------------===//
// The CUDA matmul's column-major formulation (runtime/lib/cuda/GemmPlan.h),
// checked against BLAS semantics on the CPU: no GPU needed.
//===----------------------------------------------------------------------===//

namespace {
/// Element (i, j) of op(X), X stored column-major as `s` describes.
double opAt(const cuda::StoredMatrix &s, const std::vector<double> &x,
            int64_t i, int64_t j) {
  return s.transpose ? x[j + i * s.ld] : x[i + j * s.ld];
}
} // namespace

// The parts of a GEMM cut at a small limit, each computed by a plain loop
// that reads only what BLAS would (rows up to the part's leading dim), sum
// to the whole product: every count and leading dim of a part is within
// the limit, an operand whose leading dim is past it is read a stored row
// at a time, and beta applies once.
TEST(GemmParts, PartsWithinTheLimitComputeTheWholeProduct) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 400; ++trial) {
    int64_t limit = pick(1, 5);
    int64_t m = pick(1, 9), n = pick(1, 9), k = pick(1, 9);
    // A stored r x c with rows `ld` apart (padding of up to 4; a padded ld
    // may pass the limit), filled with small integers: exact sums.
    auto operand = [&](int64_t r, int64_t c, bool transposed,
                       std::vector<double> &data) {
      int64_t rows = transposed ? c : r, cols = transposed ? r : c;
      int64_t ld = cols + pick(0, 4);
      data.assign(rows * ld, 0.0);
      for (double &v : data)
        v = pick(-3, 3);
      return GemmOperand<double>{data.data(), ld, transposed};
    };
    std::vector<double> da, db;
    GemmOperand<double> a = operand(m, k, pick(0, 1), da);
    GemmOperand<double> b = operand(k, n, pick(0, 1), db);
    int64_t ldc = n + pick(0, 4);
    double beta = pick(0, 1);
    std::vector<double> c(m * ldc), expected;
    for (double &v : c)
      v = pick(-3, 3);
    expected = c;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += *a.at(i, p) * *b.at(p, j);
        expected[i * ldc + j] = sum + beta * expected[i * ldc + j];
      }
    int calls = 0;
    gemmInParts(
        a, b, beta, c.data(), ldc, m, n, k, limit,
        [&](const GemmOperand<double> &pa, const GemmOperand<double> &pb,
            double pbeta, double *pc, int64_t pldc, int64_t pm, int64_t pn,
            int64_t pk) {
          ++calls;
          for (int64_t x : {pa.ld, pb.ld, pldc, pm, pn, pk})
            ASSERT_LE(x, limit);
          // BLAS's own checks of the leading dims.
          ASSERT_GE(pa.ld, std::max<int64_t>(1, pa.transposed ? pm : pk));
          ASSERT_GE(pb.ld, std::max<int64_t>(1, pb.transposed ? pk : pn));
          ASSERT_GE(pldc, std::max<int64_t>(1, pn));
          for (int64_t i = 0; i < pm; ++i)
            for (int64_t j = 0; j < pn; ++j) {
              double sum = 0;
              for (int64_t p = 0; p < pk; ++p)
                sum += *pa.at(i, p) * *pb.at(p, j);
              double &out = pc[i * pldc + j];
              out = sum + (pbeta == 0 ? 0 : pbeta * out);
            }
        });
    EXPECT_GE(calls, 1);
    EXPECT_EQ(c, expected) << "m " << m << " n " << n << " k " << k << " limit "
                           << limit << " lda " << a.ld << " ldb " << b.ld
                           << " ldc " << ldc;
  }
}

TEST(GemmPlan, ColumnMajorGemmComputesTheRowMajorProduct) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 300; ++trial) {
    int64_t m = pick(1, 9), n = pick(1, 9), k = pick(1, 9);
    // A row-major r x c operand: rows contiguous, or a transposed view
    // (columns contiguous), with a padded leading dimension.
    auto operand = [&](int64_t r, int64_t c, bool columns,
                       std::vector<double> &data) {
      int64_t pad = pick(0, 3);
      cuda::RowMajorOperand op = columns
                                     ? cuda::RowMajorOperand{r, c, 1, r + pad}
                                     : cuda::RowMajorOperand{r, c, c + pad, 1};
      data.assign(columns ? (r + pad) * c : r * (c + pad), 0.0);
      for (double &v : data)
        v = pick(-9, 9);
      return op;
    };
    std::vector<double> a, b, c;
    cuda::RowMajorOperand ra = operand(m, k, pick(0, 1), a);
    cuda::RowMajorOperand rb = operand(k, n, pick(0, 1), b);
    cuda::RowMajorOperand rc = operand(m, n, false, c);
    std::vector<double> want = c;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p)
          want[i * rc.s0 + j] +=
              a[i * ra.s0 + p * ra.s1] * b[p * rb.s0 + j * rb.s1];

    std::optional<cuda::ColumnMajorGemm> g =
        cuda::planColumnMajorGemm(ra, rb, rc);
    ASSERT_TRUE(g) << trial;
    // The shapes must agree as cuBLASLt checks them: op(first) is M x K,
    // op(second) K x N, the result M x N.
    int64_t M = g->result.rows, N = g->result.cols;
    auto opRows = [](const cuda::StoredMatrix &s) {
      return s.transpose ? s.cols : s.rows;
    };
    auto opCols = [](const cuda::StoredMatrix &s) {
      return s.transpose ? s.rows : s.cols;
    };
    ASSERT_EQ(opRows(g->first), M);
    ASSERT_EQ(opCols(g->first), opRows(g->second));
    ASSERT_EQ(opCols(g->second), N);
    ASSERT_EQ(opCols(g->first), k);
    // D = op(first) op(second) + C, column-major, on the same memory: B's
    // data is `first`, A's `second`, C's `result`.
    std::vector<double> got = c;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += opAt(g->first, b, i, p) * opAt(g->second, a, p, j);
        got[i + j * g->result.ld] += sum;
      }
    EXPECT_EQ(got, want) << "trial " << trial << ": " << m << "x" << k << " by "
                         << k << "x" << n;
  }
}

TEST(GemmPlan, RejectsLayoutsItCannotReadInPlace) {
  // Neither rows nor columns contiguous; a transposed result.
  EXPECT_FALSE(
      cuda::planColumnMajorGemm({4, 4, 8, 2}, {4, 4, 4, 1}, {4, 4, 4, 1}));
  EXPECT_FALSE(
      cuda::planColumnMajorGemm({4, 4, 4, 1}, {4, 4, 4, 1}, {4, 4, 1, 4}));
}

// cuBLASLt assumes 256-byte aligned matrices unless told: a view's start,
// and every batch's, lowers what the matmul may assume.
TEST(GemmPlan, MatrixAlignmentIsTheLeastOfEveryStart) {
  EXPECT_EQ(cuda::matrixAlignment(0x7f0000000000, 1, 0), 256u);
  EXPECT_EQ(cuda::matrixAlignment(0x7f0000000000 + 64 * 2, 1, 0), 128u);
  EXPECT_EQ(cuda::matrixAlignment(0x7f0000000000 + 3 * 4, 1, 0), 4u);
  // One batch: its stride is never stepped.
  EXPECT_EQ(cuda::matrixAlignment(0x7f0000000000, 1, 6), 256u);
  EXPECT_EQ(cuda::matrixAlignment(0x7f0000000000, 4, 48 * 2), 32u);
  EXPECT_EQ(cuda::matrixAlignment(0x7f0000000000 + 8, 4, 1024), 8u);
}

//===----------------------------------------------------------------------===//
// The CUDA collectives' piece copies (runtime/lib/cuda/PieceCopies.h): the
// 2-D copy plans, executed with memcpy, against the threads backend's host
// layout code. No GPU needed.
//===----------------------------------------------------------------------===//

namespace {
void run(const cuda::Copy2D &c, const void *src, void *dst) {
  for (size_t row = 0; row < c.height && c.width > 0; ++row)
    std::memcpy(static_cast<char *>(dst) + c.dstOffset + row * c.dstPitch,
                static_cast<const char *>(src) + c.srcOffset + row * c.srcPitch,
                c.width);
}
void run(const cuda::Zero2D &z, void *dst) {
  for (size_t row = 0; row < z.height && z.width > 0; ++row)
    std::memset(static_cast<char *>(dst) + z.offset + row * z.pitch, 0,
                z.width);
}

struct PieceCase {
  std::vector<int64_t> in, out;
  int dim;
  ChunkRange at;
};

/// Random shapes of rank 1 to 3 and a piece along one dim; `in` and `out`
/// differ only along it, by a piece of at most the smaller extent.
PieceCase randomCase(std::mt19937 &rng) {
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  PieceCase c;
  int rank = pick(1, 3);
  for (int d = 0; d < rank; ++d)
    c.in.push_back(pick(0, 4));
  c.dim = pick(0, rank - 1);
  c.out = c.in;
  c.out[c.dim] = pick(0, 6);
  return c;
}

std::vector<int32_t> iota(int64_t n, int32_t from) {
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = from + static_cast<int32_t>(i);
  return v;
}
} // namespace

TEST(PieceCopies, SliceMatchesTheHostLayoutCode) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    PieceCase c = randomCase(rng);
    // A piece of `in` that fits `out`: at most out[dim] long.
    int64_t extent = c.in[c.dim];
    int64_t size = std::uniform_int_distribution<int64_t>(
        0, std::min(extent, c.out[c.dim]))(rng);
    int64_t offset =
        std::uniform_int_distribution<int64_t>(0, extent - size)(rng);
    c.at = {offset, size};
    std::vector<int32_t> in = iota(numElements(c.in), 1);
    std::vector<int32_t> expected(numElements(c.out), -1),
        actual(numElements(c.out), -1);
    Dense din{in.data(), c.in, DType::I32},
        dexp{expected.data(), c.out, DType::I32};
    slicePiece(din, in.data(), dexp, c.dim, c.at);
    run(cuda::sliceCopy(c.in, c.out, c.dim, c.at, 4), in.data(), actual.data());
    run(cuda::tailZeros(c.out, c.dim, c.at.size, 4), actual.data());
    ASSERT_EQ(actual, expected) << "trial " << trial;
  }
}

TEST(PieceCopies, PlaceAndTailMatchTheHostLayoutCode) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 2000; ++trial) {
    PieceCase c = randomCase(rng);
    // The first `size` indices of `in` placed at `offset` of `out`.
    int64_t size = std::uniform_int_distribution<int64_t>(
        0, std::min(c.in[c.dim], c.out[c.dim]))(rng);
    int64_t offset =
        std::uniform_int_distribution<int64_t>(0, c.out[c.dim] - size)(rng);
    c.at = {offset, size};
    int64_t tail =
        std::uniform_int_distribution<int64_t>(0, c.out[c.dim] + 1)(rng);
    std::vector<int32_t> in = iota(numElements(c.in), 1);
    std::vector<int32_t> expected = iota(numElements(c.out), 1000);
    std::vector<int32_t> actual = expected;
    Dense din{in.data(), c.in, DType::I32},
        dexp{expected.data(), c.out, DType::I32};
    placePiece(din, in.data(), dexp, c.dim, c.at);
    zeroTail(dexp, c.dim, tail);
    run(cuda::placeCopy(c.in, c.out, c.dim, c.at, 4), in.data(), actual.data());
    run(cuda::tailZeros(c.out, c.dim, tail, 4), actual.data());
    ASSERT_EQ(actual, expected) << "trial " << trial;
  }
}

TEST(PieceCopies, BoxCopiesMatchElementwiseCopies) {
  std::mt19937 rng(17);
  int several = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    int rank = std::uniform_int_distribution<int>(0, 4)(rng);
    std::vector<int64_t> src(rank), dst(rank), box(rank), so(rank), to(rank);
    for (int d = 0; d < rank; ++d) {
      box[d] = rng() % 4;
      // Often whole in both, so that dims merge into longer rows.
      src[d] = box[d] + (rng() % 2 ? 0 : rng() % 3);
      dst[d] = box[d] + (rng() % 2 ? 0 : rng() % 3);
      so[d] = rng() % (src[d] - box[d] + 1);
      to[d] = rng() % (dst[d] - box[d] + 1);
    }
    std::vector<int32_t> in = iota(numElements(src), 1);
    std::vector<int32_t> expected(numElements(dst), -1), actual = expected;
    copyElementwise(in, src, so, expected, dst, to, box);
    std::vector<cuda::Copy2D> copies = boxCopies(src, so, dst, to, box, 4);
    for (const cuda::Copy2D &c : copies) {
      ASSERT_FALSE(c.empty()) << "trial " << trial;
      ASSERT_TRUE(c.height == 1 ||
                  (c.srcPitch >= c.width && c.dstPitch >= c.width))
          << "trial " << trial;
      run(c, in.data(), actual.data());
    }
    several += copies.size() > 1;
    ASSERT_EQ(actual, expected) << "trial " << trial;
    // The box's elements, no copy more than one row's worth each.
    size_t bytes = 0;
    for (const cuda::Copy2D &c : copies)
      bytes += c.width * c.height;
    ASSERT_EQ(bytes, 4 * numElements(box)) << "trial " << trial;
  }
  EXPECT_GT(several, 100);
}

namespace {
/// Runs one dt.exchange as the NCCL backend plans it (planExchangeCopies),
/// with memcpy for the device copies and for each send matched with its
/// receive, and returns each rank's output.
std::vector<HostTensor> exchangeByPlans(const Mesh &mesh, DType dtype,
                                        const std::string &layout,
                                        const std::vector<HostTensor> &inputs,
                                        int32_t mask, int &inPlace) {
  JobState job;
  std::unique_ptr<Backend> backend = makeThreadsBackend(job);
  int64_t n = mesh.size();
  std::vector<std::unique_ptr<RankContext>> ranks;
  std::vector<const ExchangeRoutes *> routes;
  std::vector<ExchangeCopies> plans;
  for (int64_t r = 0; r < n; ++r) {
    ranks.push_back(std::make_unique<RankContext>(r, mesh, *backend, job,
                                                  absl::Seconds(10)));
    absl::StatusOr<const ExchangeRoutes *> rt =
        ranks[r]->exchangeRoutes(ranks[r]->group(mask), layout.c_str());
    EXPECT_TRUE(rt.ok()) << rt.status();
    routes.push_back(*rt);
    plans.push_back(planExchangeCopies(**rt, ranks[r]->group(mask).index,
                                       dtypeSize(dtype)));
  }
  std::vector<HostTensor> outputs;
  std::vector<std::vector<char>> sent(n), received(n);
  for (int64_t r = 0; r < n; ++r) {
    const ExchangeCopies &plan = plans[r];
    // The output starts as garbage: the plan must write or zero it all.
    outputs.emplace_back(dtype, routes[r]->outShape);
    std::memset(outputs[r].data(), 0x5A, outputs[r].byteSize());
    if (routes[r]->leavesPadding)
      std::memset(outputs[r].data(), 0, outputs[r].byteSize());
    sent[r].assign(plan.sendStaging, 0);
    received[r].assign(plan.receiveStaging, 0);
    for (const cuda::Copy2D &c : plan.own)
      run(c, inputs[r].data(), outputs[r].data());
    for (const ExchangeTransfer &t : plan.sends)
      for (const cuda::Copy2D &c : t.copies)
        run(c, inputs[r].data(), sent[r].data());
  }
  // Each receive meets the sender's send to this rank: same bytes.
  for (int64_t r = 0; r < n; ++r) {
    const Group &group = ranks[r]->group(mask);
    for (const ExchangeTransfer &t : plans[r].receives) {
      int64_t peer = group.members[t.member];
      const Group &peerGroup = ranks[peer]->group(mask);
      auto send = std::find_if(
          plans[peer].sends.begin(), plans[peer].sends.end(),
          [&](const ExchangeTransfer &s) { return s.member == group.index; });
      EXPECT_NE(send, plans[peer].sends.end()) << "rank " << r;
      if (send == plans[peer].sends.end())
        continue;
      EXPECT_EQ(send->bytes, t.bytes) << peerGroup.index << " -> " << r;
      const char *from =
          (send->inPlace ? static_cast<const char *>(inputs[peer].data())
                         : sent[peer].data()) +
          send->offset;
      char *into = (t.inPlace ? static_cast<char *>(outputs[r].data())
                              : received[r].data()) +
                   t.offset;
      std::memcpy(into, from, std::min(send->bytes, t.bytes));
      inPlace += send->inPlace + t.inPlace;
    }
    // No send without its receive.
    for (const ExchangeTransfer &s : plans[r].sends) {
      int64_t peer = group.members[s.member];
      EXPECT_TRUE(std::any_of(
          plans[peer].receives.begin(), plans[peer].receives.end(),
          [&](const ExchangeTransfer &t) { return t.member == group.index; }))
          << "rank " << r << " sends to " << peer << ", who receives nothing";
    }
  }
  for (int64_t r = 0; r < n; ++r)
    for (const ExchangeTransfer &t : plans[r].receives)
      for (const cuda::Copy2D &c : t.copies)
        run(c, received[r].data(), outputs[r].data());
  return outputs;
}
} // namespace

// The NCCL backend's dt.exchange, planned per rank and run with memcpy:
// every rank ends with its piece of the target layout (the layout code's,
// padding zeroed), from random layouts on random meshes.
TEST(PieceCopies, ExchangePlansMakeTheTargetLayout) {
  std::mt19937 rng(19);
  int exchanges = 0, inPlace = 0;
  for (int trial = 0; trial < 3000 && exchanges < 400; ++trial) {
    Mesh mesh;
    int axes = 1 + rng() % 3;
    for (int a = 0; a < axes; ++a) {
      mesh.axisNames.push_back("a" + std::to_string(a));
      mesh.shape.push_back(1 + rng() % 3);
    }
    int rank = 1 + rng() % 3;
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d)
      shape.push_back(1 + rng() % 9);
    std::vector<Placement> source, target;
    for (int a = 0; a < axes; ++a) {
      int kind = rng() % 7;
      if (kind == 0) {
        source.push_back(Placement::partial());
        target.push_back(Placement::partial());
        continue;
      }
      auto pick = [&] {
        return rng() % 3 == 0 ? Placement::replicate()
                              : Placement::shard(rng() % rank);
      };
      source.push_back(pick());
      target.push_back(pick());
    }
    if (!canExchange(mesh.shape, source, target))
      continue;
    ++exchanges;
    int32_t mask = 0;
    for (int64_t axis : exchangeAxes(mesh.shape, source, target))
      mask |= 1 << axis;
    std::string layout = absl::StrCat(absl::StrJoin(shape, "x"), " ",
                                      joinPlacements(source, ","), " ",
                                      joinPlacements(target, ","));
    // Elements of 2, 4 and 8 bytes, each byte of the tensor telling where
    // it came from.
    DType dtype = std::array{DType::BF16, DType::I32, DType::I64}[trial % 3];
    TensorSpec from{0, "", dtype, shape, source},
        to{0, "", dtype, shape, target};
    HostTensor global(dtype, shape);
    for (size_t i = 0; i < global.byteSize(); ++i)
      static_cast<unsigned char *>(global.data())[i] = 1 + i % 251;
    std::vector<HostTensor> inputs;
    for (int64_t r = 0; r < mesh.size(); ++r)
      inputs.push_back(extractShard(global, from, mesh, r));
    std::vector<HostTensor> outputs =
        exchangeByPlans(mesh, dtype, layout, inputs, mask, inPlace);
    for (int64_t r = 0; r < mesh.size(); ++r) {
      HostTensor expected = extractShard(global, to, mesh, r);
      ASSERT_EQ(outputs[r].shape(), expected.shape())
          << layout << " rank " << r;
      ASSERT_EQ(
          std::memcmp(outputs[r].data(), expected.data(), expected.byteSize()),
          0)
          << layout << " on " << mesh.str() << ", rank " << r << " ("
          << dtypeName(dtype) << ")";
    }
  }
  EXPECT_GE(exchanges, 400);
  EXPECT_GT(inPlace, 100);
}

namespace {
/// Element `i` of `data` (of `dtype`) as a double, and back.
double elementAt(DType dtype, const void *data, int64_t i) {
  return loadElement(dtype,
                     static_cast<const char *>(data) + i * dtypeSize(dtype));
}

void setElement(DType dtype, void *data, int64_t i, double value) {
  storeElement(dtype, static_cast<char *>(data) + i * dtypeSize(dtype), value);
}

/// Three inputs' element i (small integers, exact in every type) combined
/// as the runtime combines them.
double combined(DType dtype, ReductionKind kind, int64_t i) {
  double a = (i * 3) % 61, b = (i * 4) % 61 - 20, c = (i * 5) % 61;
  switch (kind) {
  case ReductionKind::Sum:
    return a + b + c;
  case ReductionKind::Max:
    return std::max({a, b, c});
  case ReductionKind::Min:
    return std::min({a, b, c});
  case ReductionKind::Avg:
    break;
  }
  double sum = a + b + c;
  switch (dtype) {
  case DType::F32:
    return static_cast<float>(sum) / 3.0f;
  case DType::F64:
    return sum / 3.0;
  case DType::I32:
  case DType::I64:
  case DType::I1:
    return static_cast<int64_t>(sum) / 3;
  case DType::F16:
    return halfToFloat(floatToHalf(static_cast<float>(sum) / 3.0f));
  case DType::BF16:
    return bf16ToFloat(floatToBF16(static_cast<float>(sum) / 3.0f));
  }
  return 0;
}
} // namespace

// Outputs this large are written a cache line at a time with streaming
// stores: from any alignment, to the last element, into an output that is
// one of the inputs, and (by tiles) when the outputs are aligned unlike
// each other.
TEST(ReduceArrays, LargeOutputsAtAnyAlignment) {
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64,
                      DType::F16, DType::BF16}) {
    size_t element = dtypeSize(dtype);
    int64_t count = (int64_t{4} << 20) / element + 7;
    int64_t words = (count + 4) * element / 8 + 1;
    struct Case {
      ReductionKind kind;
      int64_t shift;
      bool together;
    };
    for (auto [kind, shift, together] :
         {Case{ReductionKind::Sum, 0, true}, Case{ReductionKind::Sum, 1, true},
          Case{ReductionKind::Sum, 3, true}, Case{ReductionKind::Sum, 1, false},
          Case{ReductionKind::Avg, 2, true}, Case{ReductionKind::Max, 1, true},
          Case{ReductionKind::Min, 3, true}}) {
      SCOPED_TRACE(::testing::Message()
                   << dtypeName(dtype) << " " << reductionKindName(kind)
                   << " shift " << shift << (together ? "" : " apart"));
      // The inputs and the second output (the last input) start
      // `shift` elements into their storage, the first output
      // `shift` elements or one more.
      std::vector<std::vector<uint64_t>> storage(
          4, std::vector<uint64_t>(words, ~uint64_t{0}));
      auto at = [&](int j, int64_t by) -> char * {
        return reinterpret_cast<char *>(storage[j].data()) + by * element;
      };
      std::vector<const void *> inputs;
      for (int j = 0; j < 3; ++j) {
        for (int64_t i = 0; i < count; ++i)
          setElement(dtype, at(j, shift), i,
                     (i * (j + 3)) % 61 - (j == 1 ? 20 : 0));
        inputs.push_back(at(j, shift));
      }
      void *out = at(3, together ? shift : shift + 1);
      reduceArrays(dtype, {out, at(2, shift)}, inputs, count, kind);
      for (const void *result : {static_cast<const void *>(out), inputs[2]})
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(elementAt(dtype, result, i), combined(dtype, kind, i))
              << "element " << i;
      // Nothing past the last element is written.
      const char *end = static_cast<const char *>(out) + count * element;
      EXPECT_EQ(static_cast<unsigned char>(*end), 0xff);
    }
  }
}

// Without --blas-threads or $OPENBLAS_NUM_THREADS, each rank's matmuls get
// the process's CPUs divided among the ranks, at least one.
TEST(BlasThreads, SharesTheUsableCpusOutAmongTheRanks) {
  std::optional<std::string> saved;
  if (const char *env = std::getenv("OPENBLAS_NUM_THREADS"))
    saved = env;
  ::unsetenv("OPENBLAS_NUM_THREADS");
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int cpus = CPU_COUNT(&set);
  EXPECT_EQ(usableCpus(), cpus);
  EXPECT_EQ(blasThreadsFor(0, 1), cpus);
  EXPECT_EQ(blasThreadsFor(0, 0), cpus);
  EXPECT_EQ(blasThreadsFor(0, cpus), 1);
  EXPECT_EQ(blasThreadsFor(0, cpus + 1), 1);
  EXPECT_EQ(blasThreadsFor(0, 2), std::max(1, cpus / 2));
  EXPECT_EQ(blasThreadsFor(3, 1), 3);
  EXPECT_EQ(blasThreadsFor(3, 100), 3);
  ::setenv("OPENBLAS_NUM_THREADS", "5", 1);
  EXPECT_EQ(blasThreadsFor(0, 1), 5);
  EXPECT_EQ(blasThreadsFor(2, 1), 2);
  ::setenv("OPENBLAS_NUM_THREADS", "none", 1);
  EXPECT_EQ(blasThreadsFor(0, 1), cpus);
  if (saved)
    ::setenv("OPENBLAS_NUM_THREADS", saved->c_str(), 1);
  else
    ::unsetenv("OPENBLAS_NUM_THREADS");
  setBlasThreads(2);
  EXPECT_EQ(blasThreads(), 2);
  setBlasThreads(0);
  EXPECT_EQ(blasThreads(), 1);
}

// A rank's kernel chunks: each runs once, on at most the kernel threads;
// on other threads than the rank's when the work is large enough (a chunk
// waits until another thread has run one), on the rank's alone when not.
namespace {
struct ChunkLog {
  std::vector<std::atomic<int>> runs;
  std::vector<std::atomic<std::thread::id>> threads;
  /// Whether a chunk waits (up to 10 s) until one has run on a thread other
  /// than its own.
  bool waitForAnother = false;
  std::atomic<bool> sawAnother{false};
  explicit ChunkLog(int64_t chunks) : runs(chunks), threads(chunks) {}
};
void logChunks(void *args, int64_t first, int64_t end) {
  auto *log = static_cast<ChunkLog *>(args);
  for (int64_t c = first; c < end; ++c) {
    log->runs[c].fetch_add(1);
    log->threads[c].store(std::this_thread::get_id());
    if (!log->waitForAnother)
      continue;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!log->sawAnother.load() && std::chrono::steady_clock::now() < until)
      for (const std::atomic<std::thread::id> &other : log->threads) {
        std::thread::id id = other.load();
        if (id != std::thread::id() && id != std::this_thread::get_id())
          log->sawAnother.store(true);
      }
  }
}
} // namespace
extern "C" void dt_rt_parallel_for(KernelTask task, void *args, int64_t chunks,
                                   int64_t work);

TEST(KernelThreads, RunsEachChunkOnceOnTheRanksThreads) {
  JobState job;
  std::unique_ptr<Backend> backend = makeThreadsBackend(job);
  Mesh single;
  RankContext rank(0, single, *backend, job, absl::Seconds(10));
  RankBinding binding(&rank);
  setKernelThreads(3);
  EXPECT_EQ(kernelThreads(), 3);
  auto distinctThreads = [](const ChunkLog &log) {
    std::vector<std::thread::id> seen;
    for (const std::atomic<std::thread::id> &id : log.threads)
      if (std::find(seen.begin(), seen.end(), id.load()) == seen.end())
        seen.push_back(id.load());
    return seen.size();
  };
  for (int repeat = 0; repeat < 200; ++repeat) {
    // A large kernel's 8 chunks: each once, on up to 3 threads.
    ChunkLog log(8);
    dt_rt_parallel_for(logChunks, &log, 8, int64_t{1} << 24);
    for (int64_t c = 0; c < 8; ++c)
      ASSERT_EQ(log.runs[c].load(), 1) << "chunk " << c;
    EXPECT_LE(distinctThreads(log), 3u);
    // Work for one thread: all of it on the rank's.
    ChunkLog small(8);
    dt_rt_parallel_for(logChunks, &small, 8, 1000);
    for (int64_t c = 0; c < 8; ++c) {
      EXPECT_EQ(small.runs[c].load(), 1);
      EXPECT_EQ(small.threads[c].load(), std::this_thread::get_id());
    }
  }
  // A chunk that waits for another thread to run one: another does.
  ChunkLog waiting(4);
  waiting.waitForAnother = true;
  dt_rt_parallel_for(logChunks, &waiting, 4, int64_t{1} << 24);
  EXPECT_TRUE(waiting.sawAnother.load());
  EXPECT_GE(distinctThreads(waiting), 2u);
  // One kernel thread: the rank's alone.
  setKernelThreads(1);
  ChunkLog serial(8);
  dt_rt_parallel_for(logChunks, &serial, 8, int64_t{1} << 24);
  for (int64_t c = 0; c < 8; ++c)
    EXPECT_EQ(serial.threads[c].load(), std::this_thread::get_id());
  EXPECT_EQ(kernelThreadsFor(0, 1), usableCpus());
  EXPECT_EQ(kernelThreadsFor(0, usableCpus() + 1), 1);
  EXPECT_EQ(kernelThreadsFor(4, 100), 4);
}

// Ranks that share a machine's CPUs keep to shares of them, so that one
// rank's kernel helpers never land on another rank's CPUs: each rank's
// helpers keep to its share, never to the CPU its thread runs on.
TEST(KernelThreads, RanksKeepToTheirShareOfTheCpus) {
  std::vector<int> sixteen(16);
  std::iota(sixteen.begin(), sixteen.end(), 0);
  auto range = [](int from, int end) {
    std::vector<int> cpus(end - from);
    std::iota(cpus.begin(), cpus.end(), from);
    return cpus;
  };
  EXPECT_EQ(shareOfCpus(sixteen, 0, 2), range(0, 8));
  EXPECT_EQ(shareOfCpus(sixteen, 1, 2), range(8, 16));
  // Sizes differ by one at most; every CPU is someone's.
  EXPECT_EQ(shareOfCpus(sixteen, 0, 3), range(0, 5));
  EXPECT_EQ(shareOfCpus(sixteen, 1, 3), range(5, 10));
  EXPECT_EQ(shareOfCpus(sixteen, 2, 3), range(10, 16));
  EXPECT_EQ(shareOfCpus({0, 2, 4, 6}, 1, 2), (std::vector<int>{4, 6}));
  // One rank has them all; fewer than two a rank, or no such rank: none.
  EXPECT_TRUE(shareOfCpus(sixteen, 0, 1).empty());
  EXPECT_TRUE(shareOfCpus(sixteen, 0, 9).empty());
  EXPECT_TRUE(shareOfCpus({0, 1, 2, 3}, 0, 3).empty());
  EXPECT_TRUE(shareOfCpus(sixteen, 2, 2).empty());
  EXPECT_TRUE(shareOfCpus({}, 0, 2).empty());

  // Four ranks on 16 CPUs, 3 helpers each, wherever in its share the rank
  // runs: 16 distinct CPUs. (Before, each rank's helpers took the CPUs
  // after its own in the whole list: ranks on 0-3 put 12 helpers on 1-6.)
  for (int offset = 0; offset < 4; ++offset) {
    std::vector<int> taken;
    for (int rank = 0; rank < 4; ++rank) {
      std::vector<int> share = shareOfCpus(sixteen, rank, 4);
      ASSERT_EQ(share.size(), 4u);
      int here = share[(offset + rank) % 4];
      taken.push_back(here);
      for (int helper = 0; helper < 3; ++helper) {
        int cpu = helperCpu(share, here, helper);
        EXPECT_NE(std::find(share.begin(), share.end(), cpu), share.end());
        taken.push_back(cpu);
      }
    }
    std::sort(taken.begin(), taken.end());
    EXPECT_EQ(taken, sixteen) << "offset " << offset;
  }
  // A rank's thread outside its share: its helpers leave the share's first
  // CPU free; more helpers than CPUs take them in turn, never `here`.
  EXPECT_EQ(helperCpu({8, 9, 10}, 3, 0), 9);
  EXPECT_EQ(helperCpu({8, 9, 10}, 3, 1), 10);
  EXPECT_EQ(helperCpu({8, 9, 10}, 9, 0), 10);
  EXPECT_EQ(helperCpu({8, 9, 10}, 9, 1), 8);
  EXPECT_EQ(helperCpu({8, 9, 10}, 9, 2), 10);

  // A job of the threads backend: each rank's thread keeps to its share of
  // this machine's CPUs (on a machine of fewer than 4, to all of them).
  EntrySpec spec;
  spec.mesh = Mesh{{"x"}, {2}};
  std::vector<std::vector<void *>> buffers(2);
  std::vector<int> usable = usableCpuList();
  std::vector<std::vector<int>> seen(2);
  ThreadJobHooks hooks;
  hooks.enter = [&](RankContext &rank) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
      return absl::InternalError("sched_getaffinity failed");
    for (int cpu : usable)
      if (CPU_ISSET(cpu, &set))
        seen[rank.rank()].push_back(cpu);
    return absl::OkStatus();
  };
  RunOptions options;
  absl::StatusOr<RunStats> stats = runThreadsWith(
      [](void **) {}, spec, buffers, options, hooks);
  ASSERT_TRUE(stats.ok()) << stats.status();
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<int> share = shareOfCpus(usable, rank, 2);
    EXPECT_EQ(seen[rank], share.empty() ? usable : share) << "rank " << rank;
  }
}

// Generated code's host buffers: large blocks come back to the next request
// they fit, small ones and over-aligned ones go to malloc and back.

TEST(HostMemory, ReusesLargeBlocksThatFit) {
  constexpr size_t kMiB = size_t{1} << 20;
  // From an empty cache: blocks other tests (or an earlier repetition of
  // this one) left there would fit these requests too.
  dt_host_memory_trim();
  void *large = _mlir_memref_to_llvm_alloc(3 * kMiB + 5);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 64, 0u);
  std::memset(large, 0x5a, 3 * kMiB + 5);
  _mlir_memref_to_llvm_free(large);
  // Too small for the cached block (it is more than twice the request):
  // a fresh one.
  void *small = _mlir_memref_to_llvm_alloc(kMiB);
  EXPECT_NE(small, large);
  // Fits: the cached block again.
  void *again = _mlir_memref_to_llvm_alloc(3 * kMiB);
  EXPECT_EQ(again, large);
  // Not both at once: a second request of that size gets a fresh block.
  void *other = _mlir_memref_to_llvm_alloc(3 * kMiB);
  EXPECT_NE(other, again);
  for (void *block : {small, again, other})
    _mlir_memref_to_llvm_free(block);

  void *aligned = _mlir_memref_to_llvm_aligned_alloc(4096, 2 * kMiB);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 4096, 0u);
  std::memset(aligned, 1, 2 * kMiB);
  _mlir_memref_to_llvm_free(aligned);
  void *tiny = _mlir_memref_to_llvm_alloc(24);
  ASSERT_NE(tiny, nullptr);
  std::memset(tiny, 2, 24);
  _mlir_memref_to_llvm_free(tiny);
  _mlir_memref_to_llvm_free(nullptr);

  // small, again and other are cached (the aligned and the tiny block
  // are not); a trim returns them.
  EXPECT_GE(dt_host_memory_cached(), 7 * kMiB);
  dt_host_memory_trim();
  EXPECT_EQ(dt_host_memory_cached(), 0u);
}

// Smaller blocks go back to a free list of the thread that frees them, by
// power-of-two size, up to 16 MiB a thread; the thread's blocks are freed
// when it ends, and a block may be freed by a thread other than its maker.
TEST(HostMemory, KeepsSmallBlocksPerThread) {
  constexpr size_t kMiB = size_t{1} << 20;
  dt_host_memory_trim();
  ASSERT_EQ(dt_host_memory_cached(), 0u);
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 100);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  std::memset(a, 1, 100);
  _mlir_memref_to_llvm_free(a);
  EXPECT_EQ(dt_host_memory_cached(), 128u);
  // The same size class (65-128 bytes): the same block, once.
  void *b = _mlir_memref_to_llvm_alloc(128);
  EXPECT_EQ(b, a);
  void *c = _mlir_memref_to_llvm_alloc(65);
  EXPECT_NE(c, b);
  // Another class does not take it.
  _mlir_memref_to_llvm_free(b);
  void *d = _mlir_memref_to_llvm_alloc(129);
  EXPECT_NE(d, b);
  std::memset(d, 2, 129);
  for (void *block : {c, d})
    _mlir_memref_to_llvm_free(block);
  EXPECT_EQ(dt_host_memory_cached(), 128u + 128u + 256u);

  // Between 512 KiB and 1 MiB: malloc's, as asked, never kept.
  void *middle = _mlir_memref_to_llvm_alloc(700 * 1024);
  ASSERT_NE(middle, nullptr);
  std::memset(middle, 3, 700 * 1024);
  _mlir_memref_to_llvm_free(middle);
  EXPECT_EQ(dt_host_memory_cached(), 128u + 128u + 256u);

  // At most 16 MiB a thread: the rest goes back to malloc.
  std::vector<void *> blocks;
  for (int i = 0; i < 40; ++i)
    blocks.push_back(_mlir_memref_to_llvm_alloc(kMiB / 2));
  for (void *block : blocks)
    _mlir_memref_to_llvm_free(block);
  EXPECT_LE(dt_host_memory_cached(), 16 * kMiB);
  EXPECT_GE(dt_host_memory_cached(), 15 * kMiB);

  // Made here, freed (and kept) by a thread that then ends.
  void *handed = _mlir_memref_to_llvm_alloc(300);
  std::thread other([handed] {
    _mlir_memref_to_llvm_free(handed);
    void *again = _mlir_memref_to_llvm_alloc(500);
    EXPECT_EQ(again, handed);
    _mlir_memref_to_llvm_free(again);
  });
  other.join();
  dt_host_memory_trim();
  EXPECT_EQ(dt_host_memory_cached(), 0u);
}

// 16-bit reductions widen and narrow in vectorized blocks (F16C for f16
// where the CPU has it): bit for bit what the scalar conversions give, for
// any pair of values (subnormals, overflow to infinity; a NaN stays NaN).
TEST(ReduceArrays, HalfSumsMatchTheScalarConversions) {
  std::mt19937 rng(17);
  for (bool bf16 : {false, true}) {
    auto widen = bf16 ? bf16ToFloat : halfToFloat;
    auto narrow = bf16 ? floatToBF16 : floatToHalf;
    auto isNaN = [&](uint16_t h) {
      return bf16 ? (h & 0x7fff) > 0x7f80 : (h & 0x7fff) > 0x7c00;
    };
    int64_t count = 100003;
    std::vector<uint16_t> a(count), b(count), out(count);
    for (int64_t i = 0; i < count; ++i) {
      a[i] = static_cast<uint16_t>(rng());
      // Half the time a value near a's, so the sums cancel into
      // subnormals and round at every scale.
      b[i] = i % 2 ? static_cast<uint16_t>(rng()) : a[i] ^ 0x8000 ^ (rng() & 7);
    }
    reduceArrays(bf16 ? DType::BF16 : DType::F16, out.data(),
                 {a.data(), b.data()}, count, ReductionKind::Sum);
    for (int64_t i = 0; i < count; ++i) {
      uint16_t expected = narrow(widen(a[i]) + widen(b[i]));
      if (isNaN(expected))
        ASSERT_TRUE(isNaN(out[i])) << "element " << i;
      else
        ASSERT_EQ(out[i], expected) << (bf16 ? "bf16" : "f16") << " element "
                                    << i << ": " << a[i] << " + " << b[i];
    }
  }
}

// Ranks are threads: blocks go back and forth between them through the
// cache, and no block is handed to two holders at once.
TEST(HostMemory, ThreadsShareTheCacheSafely) {
  constexpr size_t kMiB = size_t{1} << 20;
  std::vector<std::thread> ranks;
  std::atomic<int> corrupted{0};
  for (int r = 0; r < 4; ++r)
    ranks.emplace_back([r, &corrupted] {
      for (int step = 0; step < 50; ++step) {
        size_t bytes = (1 + (r + step) % 3) * kMiB;
        auto *block =
            static_cast<unsigned char *>(_mlir_memref_to_llvm_alloc(bytes));
        std::memset(block, r * 50 + step, bytes);
        std::this_thread::yield();
        for (size_t i = 0; i < bytes; i += 4096)
          if (block[i] != static_cast<unsigned char>(r * 50 + step))
            ++corrupted;
        _mlir_memref_to_llvm_free(block);
      }
    });
  for (std::thread &rank : ranks)
    rank.join();
  EXPECT_EQ(corrupted.load(), 0);
}

namespace {
/// A memref descriptor as generated code passes one: `data` viewed with
/// `sizes` and `strides` (in elements).
struct TestMemRef {
  TestMemRef(void *data, std::vector<int64_t> sizes,
             std::vector<int64_t> strides)
      : rank(sizes.size()),
        ref(static_cast<DtMemRef *>(
            std::malloc(sizeof(DtMemRef) + 2 * rank * sizeof(int64_t)))) {
    ref->allocated = ref->aligned = data;
    ref->offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      ref->sizesAndStrides[d] = sizes[d];
      ref->sizesAndStrides[rank + d] = strides[d];
    }
  }
  TestMemRef(TestMemRef &&other) : rank(other.rank), ref(other.ref) {
    other.ref = nullptr;
  }
  TestMemRef(const TestMemRef &) = delete;
  ~TestMemRef() { std::free(ref); }
  int64_t rank;
  DtMemRef *ref;
};

/// One 2-D layout of an operand: element (r, q) of batch i is at
/// i * batchStride + r * s0 + q * s1.
struct Layout2D {
  const char *name;
  int64_t s0, s1, batchStride;
};

/// A rows x cols operand in layout `l` of `data`, with a leading dim of
/// `batches` (0: none).
TestMemRef operandOf(void *data, const Layout2D &l, int64_t rows, int64_t cols,
                     int64_t batches) {
  if (batches)
    return TestMemRef(data, {batches, rows, cols}, {l.batchStride, l.s0, l.s1});
  return TestMemRef(data, {rows, cols}, {l.s0, l.s1});
}

/// Row-major, column-major, padded rows, and rows far apart (a slice of a
/// wider array: the runtime packs it instead of widening the gaps).
std::vector<Layout2D> layoutsOf(int64_t rows, int64_t cols) {
  return {{"row-major", cols, 1, rows * cols},
          {"column-major", 1, rows, rows * cols},
          {"padded", cols + 3, 1, rows * (cols + 3)},
          {"sparse rows", 5 * cols, 1, 5 * rows * cols}};
}
} // namespace

// f16 and bf16 matmuls multiply in f32 and round once, as cuBLASLt does on
// the GPU. The operands are quarters of small integers, so every f32 sum is
// exact and the result must be the exact product rounded once, bit for bit,
// in every layout of A, B and C, batched or not, accumulated into C or
// overwriting it with a bias and relu.
TEST(HalfMatmul, RoundsTheExactProductOnceInEveryLayout) {
  std::mt19937 rng(23);
  const int64_t batches = 3, m = 5, k = 37, n = 7;
  for (bool bf16 : {false, true}) {
    auto narrow = bf16 ? floatToBF16 : floatToHalf;
    auto widen = bf16 ? bf16ToFloat : halfToFloat;
    auto quarter = [&] { return narrow(int(rng() % 33) / 4.0f - 4.0f); };
    for (bool batched : {false, true})
      for (const Layout2D &la : layoutsOf(m, k))
        for (const Layout2D &lb : layoutsOf(k, n))
          for (const Layout2D &lc : layoutsOf(m, n))
            for (int32_t into : {-1, 0, 2, 3}) {
              int64_t nb = batched ? batches : 1;
              std::vector<uint16_t> a(nb * la.batchStride),
                  b(nb * lb.batchStride), c(nb * lc.batchStride), bias(2 * n);
              for (auto *v : {&a, &b, &c, &bias})
                for (uint16_t &x : *v)
                  x = quarter();
              std::vector<uint16_t> before = c;
              int64_t batchDim = batched ? nb : 0;
              TestMemRef ma = operandOf(a.data(), la, m, k, batchDim),
                         mb = operandOf(b.data(), lb, k, n, batchDim),
                         mc = operandOf(c.data(), lc, m, n, batchDim),
                         mbias(bias.data(), {n}, {2});
              int64_t ra = ma.rank;
              // -1: C += A B; else C = epilogue(A B) with the epilogue's
              // bits: the bias (every other element of `bias`) and relu.
              // Without a bias, C stands in for it, as in generated code.
              if (into >= 0) {
                bool withBias = into & 1;
                (bf16 ? (batched ? dt_rt_batch_matmul_into_bf16
                                 : dt_rt_matmul_into_bf16)
                      : (batched ? dt_rt_batch_matmul_into_f16
                                 : dt_rt_matmul_into_f16))(
                    ra, ma.ref, ra, mb.ref, ra, mc.ref, withBias ? 1 : ra,
                    withBias ? mbias.ref : mc.ref, into);
              } else {
                (bf16 ? (batched ? dt_rt_batch_matmul_bf16 : dt_rt_matmul_bf16)
                      : (batched ? dt_rt_batch_matmul_f16 : dt_rt_matmul_f16))(
                    ra, ma.ref, ra, mb.ref, ra, mc.ref);
              }
              for (int64_t i = 0; i < nb; ++i)
                for (int64_t r = 0; r < m; ++r)
                  for (int64_t q = 0; q < n; ++q) {
                    int64_t at = i * lc.batchStride + r * lc.s0 + q * lc.s1;
                    double exact = into < 0     ? widen(before[at])
                                   : (into & 1) ? widen(bias[2 * q])
                                                : 0.0;
                    for (int64_t j = 0; j < k; ++j)
                      exact +=
                          double(widen(
                              a[i * la.batchStride + r * la.s0 + j * la.s1])) *
                          widen(b[i * lb.batchStride + j * lb.s0 + q * lb.s1]);
                    if (into >= 0 && (into & 2))
                      exact = std::max(exact, 0.0);
                    ASSERT_EQ(c[at], narrow(float(exact)))
                        << (bf16 ? "bf16" : "f16") << " epilogue " << into
                        << (batched ? " batched" : "") << " A " << la.name
                        << ", B " << lb.name << ", C " << lc.name << " at ("
                        << i << ", " << r << ", " << q << ")";
                  }
              // Nothing outside C's view is written.
              for (size_t x = 0; x < c.size(); ++x) {
                int64_t within = x % lc.batchStride, r = within / lc.s0;
                bool inView =
                    lc.s1 == 1 ? r < m && within % lc.s0 < n : within < m * n;
                if (!inView) {
                  ASSERT_EQ(c[x], before[x]) << lc.name << " element " << x;
                }
              }
            }
  }
}

// Rounding once is visible: 300 ones summed in bf16 steps stall at 256 (257
// rounds back to 256), while the f32 sum rounds to 300.
TEST(HalfMatmul, DoesNotRoundTheAccumulatorAtEveryStep) {
  const int64_t k = 300;
  std::vector<uint16_t> a(k, floatToBF16(1.0f)), b(k, floatToBF16(1.0f)),
      c(1, floatToBF16(0.0f));
  TestMemRef ma(a.data(), {1, k}, {k, 1}), mb(b.data(), {k, 1}, {1, 1}),
      mc(c.data(), {1, 1}, {1, 1});
  dt_rt_matmul_bf16(2, ma.ref, 2, mb.ref, 2, mc.ref);
  EXPECT_EQ(bf16ToFloat(c[0]), 300.0f);
}

// OpenBLAS's idle threads sleep soon after a matmul (the runtime shortens
// their watch when it loads, Blas.cpp) rather than spin, yielding, for
// about 0.1 s on the CPUs the rank's kernel threads need.
TEST(BlasThreads, IdleThreadsSleepSoonAfterAMatmul) {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT"))
    GTEST_SKIP() << "OPENBLAS_THREAD_TIMEOUT is set: the user's watch is kept";
  auto cpuSeconds = [] {
    rusage used;
    getrusage(RUSAGE_SELF, &used);
    auto seconds = [](const timeval &t) { return t.tv_sec + t.tv_usec * 1e-6; };
    return seconds(used.ru_utime) + seconds(used.ru_stime);
  };
  const int64_t n = 256;
  std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
  TestMemRef ma(a.data(), {n, n}, {n, 1}), mb(b.data(), {n, n}, {n, 1}),
      mc(c.data(), {n, n}, {n, 1});
  setBlasThreads(2);
  dt_rt_matmul_f32(2, ma.ref, 2, mb.ref, 2, mc.ref);
  double before = cpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  double spent = cpuSeconds() - before;
  setBlasThreads(1);
  EXPECT_EQ(c[0], float(n));
  EXPECT_EQ(c[n * n - 1], float(n));
  // (2^28 cycles of spinning is 0.1 s of CPU at 2.7 GHz.)
  EXPECT_LT(spent, 0.03) << "the process used " << spent * 1e3
                         << " ms of CPU in 100 ms after its matmul";
}

/// The runtime's matmuls of element type T.
template <typename T> struct MatmulCalls;
template <> struct MatmulCalls<float> {
  static constexpr auto plain = dt_rt_matmul_f32,
                        batch = dt_rt_batch_matmul_f32,
                        into = dt_rt_matmul_into_f32,
                        batchInto = dt_rt_batch_matmul_into_f32;
};
template <> struct MatmulCalls<double> {
  static constexpr auto plain = dt_rt_matmul_f64,
                        batch = dt_rt_batch_matmul_f64,
                        into = dt_rt_matmul_into_f64,
                        batchInto = dt_rt_batch_matmul_into_f64;
};

// The operands are quarters of small integers, so every sum is exact: the
// result of each m x n product must equal the exact product, in every
// layout of A, B and C, batched or not, accumulated into C or overwriting
// it (C holding NaNs, which must not survive beta = 0).
template <typename T>
void checkProducts(std::initializer_list<std::pair<int64_t, int64_t>> shapes) {
  std::mt19937 rng(29);
  auto quarter = [&] { return T(int(rng() % 33) / 4.0 - 4.0); };
  const int64_t batches = 2, k = 37;
  for (auto [m, n] : shapes)
    for (bool batched : {false, true}) {
      // Beside layoutsOf's, a vector with its elements 3 apart, the dim of
      // one element given stride 1 (as the compiler passes a vector).
      auto layouts = [](int64_t rows, int64_t cols) {
        std::vector<Layout2D> all = layoutsOf(rows, cols);
        if (rows == 1 || cols == 1)
          all.push_back({"vector, stride 3", rows == 1 ? 1 : 3,
                         rows == 1 ? 3 : 1, 3 * rows * cols});
        return all;
      };
      for (const Layout2D &la : layouts(m, k))
        for (const Layout2D &lb : layouts(k, n))
          for (const Layout2D &lc : layouts(m, n))
            for (bool into : {false, true}) {
              int64_t nb = batched ? batches : 1;
              std::vector<T> a(nb * la.batchStride), b(nb * lb.batchStride),
                  c(nb * lc.batchStride);
              for (auto *v : {&a, &b, &c})
                for (T &x : *v)
                  x = quarter();
              if (into)
                for (T &x : c)
                  x = std::numeric_limits<T>::quiet_NaN();
              std::vector<T> before = c;
              int64_t batchDim = batched ? nb : 0;
              TestMemRef ma = operandOf(a.data(), la, m, k, batchDim),
                         mb = operandOf(b.data(), lb, k, n, batchDim),
                         mc = operandOf(c.data(), lc, m, n, batchDim);
              int64_t r = ma.rank;
              using Calls = MatmulCalls<T>;
              if (into)
                (batched ? Calls::batchInto : Calls::into)(
                    r, ma.ref, r, mb.ref, r, mc.ref, r, mc.ref, 0);
              else
                (batched ? Calls::batch : Calls::plain)(r, ma.ref, r, mb.ref, r,
                                                        mc.ref);
              for (int64_t i = 0; i < nb; ++i)
                for (int64_t row = 0; row < m; ++row)
                  for (int64_t q = 0; q < n; ++q) {
                    int64_t at = i * lc.batchStride + row * lc.s0 + q * lc.s1;
                    T exact = into ? T(0) : before[at];
                    for (int64_t j = 0; j < k; ++j)
                      exact += a[i * la.batchStride + row * la.s0 + j * la.s1] *
                               b[i * lb.batchStride + j * lb.s0 + q * lb.s1];
                    ASSERT_EQ(c[at], exact)
                        << m << "x" << n << (into ? " into" : "")
                        << (batched ? " batched" : "") << " A " << la.name
                        << ", B " << lb.name << ", C " << lc.name << " at ("
                        << i << ", " << row << ", " << q << ")";
                    c[at] = before[at];
                  }
              // Nothing outside C's view is written (bits compared: NaNs).
              ASSERT_EQ(
                  std::memcmp(c.data(), before.data(), c.size() * sizeof(T)), 0)
                  << "C " << lc.name;
            }
    }
}

// A product of one row or one column is a gemv (runtime/lib/Blas.cpp).
TEST(Matmul, OneRowOrOneColumnIsComputedInEveryLayout) {
  checkProducts<float>({{5, 1}, {1, 7}, {1, 1}});
  checkProducts<double>({{5, 1}, {1, 7}, {1, 1}});
}

// A C stored column by column (an NCHW convolution's product, per image)
// is the transposed product, stored row by row; rows far apart, a copy.
TEST(Matmul, EveryLayoutOfAMatrixProductIsComputed) {
  checkProducts<float>({{5, 7}, {8, 3}});
  checkProducts<double>({{5, 7}});
}
