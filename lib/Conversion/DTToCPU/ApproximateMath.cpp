//===- ApproximateMath.cpp - dt-approximate-math --------------------------===//
//
// On the CPU, `math.exp` and its kin become calls to libm, one element at a
// time: LLVM cannot vectorize a loop around them, and an exp that underflows
// (a softmax over scores far below the row's maximum) takes libm's errno
// path as well. Here the ones whose polynomial approximation upstream
// provides and whose error was measured (docs/Runtime.md, "Transcendental
// functions") become arithmetic, which vectorizes with the loop around it;
// 16-bit ones are computed in f32 first.
//
// f32 `math.sin` and `math.cos` are ours: an exact reduction of the
// argument by pi/2 (Payne and Hanek's: the bits of 2/pi the argument's
// exponent needs, from a table, times its significand, in f64), then
// Taylor polynomials in f64 on [-pi/4, pi/4], rounded once to f32. No
// branch and no libm call, so LLVM vectorizes the loop around them; within
// 0.53 f32 ulps of the exact result at every argument (docs/Runtime.md).
//
// f64 `math.log1p` and `math.expm1` become calls of libm's: upstream's
// LLVM lowering, which would take them next, computes log(1 + x) and
// exp(x) - 1, which lose the digits of a small x.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <type_traits>

namespace mlir::dt {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The functions approximated: each within 2.4 f32 epsilons of the exact
/// result, relative, over its normal range (measured against f64 libm).
/// Not atan (35 epsilons), asin (4.6) or cbrt (9.9), nor acos (1.03, but
/// slower than libm's), left to libm.
static bool isApproximatedName(StringRef name) {
  name.consume_front("math.");
  return llvm::is_contained(
      {"exp", "log", "tanh", "erf", "log1p", "expm1", "log2", "erfc"}, name);
}

/// Those made ours below (their 16-bit forms computed in f32 first).
static bool isSineOrCosineName(StringRef name) {
  name.consume_front("math.");
  return name == "sin" || name == "cos";
}

static bool isApproximated(Operation *op) {
  if (!isa_and_nonnull<math::MathDialect>(op->getDialect()))
    return false;
  StringRef name = op->getName().getStringRef();
  return isApproximatedName(name) || isSineOrCosineName(name);
}

namespace {
/// The bits of 2/pi after the binary point, b_1 b_2 ... (b_i weighs 2^-i),
/// 256 of them: computed with integers from Machin's formula, the same as
/// fdlibm's `two_over_pi` (its 24-bit chunks A2F983 6E4E44 ...).
constexpr StringLiteral kTwoOverPiHex =
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561";
constexpr int kTwoOverPiBits = 4 * kTwoOverPiHex.size();
/// The table's rows: one per biased exponent e of an argument |x| = m
/// 2^(e - 150) (m its 24-bit significand) from kFirstExponent up; below,
/// |x| < 2^-16 is its own sine (cosine 1), and reads the first row.
constexpr int kFirstExponent = 111, kLastExponent = 254;
constexpr int kRows = kLastExponent - kFirstExponent + 1;

/// b_i, 0 outside the table's bits (i < 1 are the integer part's, 0).
int twoOverPiBit(int i) {
  if (i < 1 || i > kTwoOverPiBits)
    return 0;
  char digit = kTwoOverPiHex[(i - 1) / 4];
  int value = digit <= '9' ? digit - '0' : digit - 'a' + 10;
  return (value >> (3 - (i - 1) % 4)) & 1;
}

/// Row e: G = 2^(e - 150) 2/pi mod 4 as a sum of two f64 (the 53 bits from
/// its leading one, and the 53 after the next one), 106 bits or more of
/// it: x 2/pi = m G (mod 4), since m is a whole number, to within m 2^-104
/// (below 2^-80 of a quadrant). The terms of 2^(e - 150) 2/pi dropped are
/// b_i 2^(e - 150 - i) for i <= e - 152: multiples of 4.
SmallVector<double> twoOverPiRows() {
  SmallVector<double> rows;
  for (int e = kFirstExponent; e <= kLastExponent; ++e) {
    int scale = e - 150, i = std::max(1, scale - 1);
    for (int part = 0; part < 2; ++part) {
      while (i < kTwoOverPiBits && !twoOverPiBit(i))
        ++i;
      int64_t bits = 0;
      for (int j = 0; j < 53; ++j)
        bits = bits << 1 | twoOverPiBit(i + j);
      // Bits i .. i + 52 weigh 2^(scale - i) .. 2^(scale - i - 52).
      rows.push_back(std::ldexp(static_cast<double>(bits), scale - i - 52));
      i += 53;
    }
  }
  return rows;
}

/// f32 `math.sin` / `math.cos` -> the reduction and polynomials above.
template <typename OpT> struct SineOrCosine : OpRewritePattern<OpT> {
  SineOrCosine(MLIRContext *context, memref::GlobalOp table)
      : OpRewritePattern<OpT>(context), tableType(table.getType()),
        tableName(table.getSymName()) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().isF32())
      return failure();
    bool cosine = std::is_same_v<OpT, math::CosOp>;
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Type f64 = b.getF64Type(), i32 = b.getI32Type();
    auto i32c = [&](int64_t v) {
      return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
    };
    auto f64c = [&](double v) {
      return arith::ConstantOp::create(b, b.getF64FloatAttr(v));
    };
    Value x = op.getOperand();
    Value bits = arith::BitcastOp::create(b, i32, x);
    Value magnitude = arith::AndIOp::create(b, bits, i32c(0x7fffffff));
    Value exponent = arith::ShRUIOp::create(b, magnitude, i32c(23));
    Value significand = arith::OrIOp::create(
        b, arith::AndIOp::create(b, magnitude, i32c(0x7fffff)), i32c(0x800000));
    Value m = arith::SIToFPOp::create(b, f64, significand);
    // The row, clamped: a tiny, infinite or NaN argument reads one and is
    // given its result at the end.
    Value row = arith::MinSIOp::create(
        b,
        arith::MaxSIOp::create(
            b, arith::SubIOp::create(b, exponent, i32c(kFirstExponent)),
            i32c(0)),
        i32c(kRows - 1));
    Value first = arith::IndexCastOp::create(
        b, b.getIndexType(), arith::MulIOp::create(b, row, i32c(2)));
    Value rows = memref::GetGlobalOp::create(b, tableType, tableName);
    Value second =
        arith::AddIOp::create(b, first, arith::ConstantIndexOp::create(b, 1));
    Value high = memref::LoadOp::create(b, rows, ValueRange{first});
    Value low = memref::LoadOp::create(b, rows, ValueRange{second});
    // x 2/pi = p + error + m low (mod 4): p = m high rounded, its error
    // exact (a fused multiply-add), then p's whole turns go exactly (p <
    // 2^26: what is left is a multiple of p's ulp below 4). n is the
    // nearest quadrant; f what is left of it, in units of pi/2: p - n is
    // exact, and each sum after rounds by at most 2^-53 of itself.
    Value p = arith::MulFOp::create(b, m, high);
    Value error = math::FmaOp::create(b, m, high, arith::NegFOp::create(b, p));
    p = arith::SubFOp::create(
        b, p,
        arith::MulFOp::create(
            b, f64c(4.0),
            math::FloorOp::create(b, arith::MulFOp::create(b, p, f64c(0.25)))));
    Value n = math::RoundEvenOp::create(b, arith::AddFOp::create(b, p, error));
    Value f = arith::AddFOp::create(b, arith::SubFOp::create(b, p, n), error);
    f = arith::AddFOp::create(b, f, arith::MulFOp::create(b, m, low));
    Value r = arith::MulFOp::create(b, f, f64c(M_PI_2));
    // Taylor polynomials on |r| <= pi/4, by Horner's rule with fused
    // multiply-adds: the first terms left out weigh below 2^-28 (sine) and
    // 2^-32 (cosine) of the result.
    Value r2 = arith::MulFOp::create(b, r, r);
    // c0 + c1 r^2 + c2 r^4 + ...
    auto horner = [&](ArrayRef<double> coefficients) {
      Value sum = f64c(coefficients.back());
      for (double c : llvm::reverse(coefficients.drop_back()))
        sum = math::FmaOp::create(b, r2, sum, f64c(c));
      return sum;
    };
    auto factorial = [](int k) {
      double v = 1;
      for (int i = 2; i <= k; ++i)
        v *= i;
      return v;
    };
    // sin r = r + r^3 (-1/3! + r^2/5! - ...), cos r = 1 - r^2/2! + ...
    Value sine =
        math::FmaOp::create(b, arith::MulFOp::create(b, r, r2),
                            horner({-1 / factorial(3), 1 / factorial(5),
                                    -1 / factorial(7), 1 / factorial(9)}),
                            r);
    Value cosineOfR =
        horner({1.0, -1 / factorial(2), 1 / factorial(4), -1 / factorial(6),
                1 / factorial(8), -1 / factorial(10)});
    // Quadrant q (cos x = sin(x + pi/2)): odd ones take the cosine of r,
    // the upper two the negation; sin(-x) = -sin(x), cos(-x) = cos(x).
    Value q = arith::FPToSIOp::create(b, i32, n);
    if (cosine)
      q = arith::AddIOp::create(b, q, i32c(1));
    auto bitSet = [&](Value v, int64_t mask) {
      return arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                   arith::AndIOp::create(b, v, i32c(mask)),
                                   i32c(0));
    };
    Value value = arith::SelectOp::create(b, bitSet(q, 1), cosineOfR, sine);
    Value negate = bitSet(q, 2);
    if (!cosine)
      negate = arith::XOrIOp::create(
          b, negate,
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, bits, i32c(0)));
    value = arith::SelectOp::create(b, negate, arith::NegFOp::create(b, value),
                                    value);
    Value result = arith::TruncFOp::create(b, b.getF32Type(), value);
    // |x| < 2^-16: sin x rounds to x (signed zeros and subnormals kept),
    // cos x to 1. Infinities and NaN give NaN.
    Value tiny = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, magnitude,
                                       i32c(0x37800000));
    Value tinyResult =
        cosine ? Value(arith::ConstantOp::create(b, b.getF32FloatAttr(1.0)))
               : x;
    result = arith::SelectOp::create(b, tiny, tinyResult, result);
    Value special =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, exponent, i32c(255));
    result = arith::SelectOp::create(b, special, arith::SubFOp::create(b, x, x),
                                     result);
    rewriter.replaceOp(op, result);
    return success();
  }

  MemRefType tableType;
  std::string tableName;
};

/// f64 `math.log1p` and `math.expm1` -> calls of libm's log1p and expm1
/// (declared by the pass, `llvm.readnone` as upstream's math-to-libm
/// declares them). Left to upstream's LLVM lowering, they would be
/// computed as log(1 + x) and exp(x) - 1, which lose the digits of a small
/// x: log1p(1e-10) came out wrong in its seventh digit.
struct CallLibm : RewritePattern {
  /// `math.<function>` -> a call of libm's `<function>`.
  CallLibm(MLIRContext *context, StringRef function)
      : RewritePattern(("math." + function).str(), /*benefit=*/1, context),
        function(function) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    Type type = op->getResult(0).getType();
    if (!type.isF64())
      return failure();
    rewriter.replaceOpWithNewOp<func::CallOp>(op, function, TypeRange{type},
                                              op->getOperands());
    return success();
  }

  std::string function;
};

/// Declares `double name(double)` in `module`, once.
void declareLibmFunction(ModuleOp module, StringRef name) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type f64 = b.getF64Type();
  auto function = func::FuncOp::create(b, module.getLoc(), name,
                                       b.getFunctionType({f64}, {f64}));
  function.setPrivate();
  function->setAttr(LLVM::LLVMDialect::getReadnoneAttrName(), b.getUnitAttr());
}

/// The table of twoOverPiRows(), made once in `module`.
memref::GlobalOp getOrCreateTable(ModuleOp module) {
  constexpr StringLiteral kName = "__dt_two_over_pi_parts";
  if (auto existing = module.lookupSymbol<memref::GlobalOp>(kName))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  SmallVector<double> parts = twoOverPiRows();
  auto type =
      MemRefType::get({static_cast<int64_t>(parts.size())}, b.getF64Type());
  auto values = DenseElementsAttr::get(
      RankedTensorType::get(type.getShape(), b.getF64Type()),
      ArrayRef<double>(parts));
  return memref::GlobalOp::create(b, module.getLoc(), kName,
                                  b.getStringAttr("private"), type, values,
                                  /*constant=*/true,
                                  /*alignment=*/b.getI64IntegerAttr(64));
}
} // namespace

namespace {
struct ApproximateMathPass
    : public mlir::dt::impl::ApproximateMathPassBase<ApproximateMathPass> {
  mlir::dt::Statistic numApproximated{
      this, "approximated", "Math ops replaced by a polynomial approximation"};
  mlir::dt::Statistic numLibmCalls{this, "libm-calls",
                                   "f64 log1p and expm1 made calls of libm's"};
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isApproximated(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    // A 16-bit one is computed in f32 (as LLVM would), and approximated there.
    populateMathF32ExpansionPatterns(patterns, [](StringRef name) {
      return isApproximatedName(name) || isSineOrCosineName(name);
    });
    populateMathPolynomialApproximationPatterns(patterns, isApproximatedName);
    // f64 log1p and expm1 go to libm's, not to upstream's LLVM lowering.
    auto countF64 = [&](StringRef name) {
      return llvm::count_if(ops, [&](Operation *op) {
        return op->getName().getStringRef() == name &&
               op->getResult(0).getType().isF64();
      });
    };
    int64_t calls = 0;
    for (StringRef function : {"log1p", "expm1"}) {
      int64_t count = countF64(("math." + function).str());
      if (count == 0)
        continue;
      calls += count;
      declareLibmFunction(getOperation(), function);
      patterns.add<CallLibm>(&getContext(), function);
    }
    if (llvm::any_of(ops, [](Operation *op) {
          return isSineOrCosineName(op->getName().getStringRef());
        })) {
      memref::GlobalOp table = getOrCreateTable(getOperation());
      patterns.add<SineOrCosine<math::SinOp>, SineOrCosine<math::CosOp>>(
          &getContext(), table);
    }
    // Only these ops and what their rewrites create: nothing else in the
    // program is folded or rewritten on the way.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.enableFolding(false);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
    int64_t left = 0;
    getOperation().walk([&](Operation *op) { left += isApproximated(op); });
    // What is left is f64 (and vector sines and cosines), which stays with
    // libm.
    numApproximated += ops.size() - left - calls;
    numLibmCalls += calls;
  }
};
} // namespace
