//===- InsertBoundsChecks.cpp - dt-insert-bounds-checks -------------------===//
//
// A tensor access at an index computed from data reads outside its tensor
// when the data is wrong: compiled code would read neighbouring memory, and
// a vocab-parallel lookup would read zeros on every rank. Each index that is
// not provably in range goes through a dt.bounds_check, on the global
// program, against the whole tensor's extent.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::dt {
#define GEN_PASS_DEF_INSERTBOUNDSCHECKSPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
std::optional<int64_t> constantIndex(Value value) {
  APInt constant;
  if (!matchPattern(value, m_ConstantInt(&constant)))
    return std::nullopt;
  return constant.getSExtValue();
}

/// Whether `index` lies in [0, extent) whatever the program's data: a
/// constant, a linalg.index of a loop no longer than `extent`, an scf.for
/// induction variable whose constant bounds lie within it, an unsigned
/// remainder by a constant no larger (`id mod vocabulary`), the result of a
/// check against no larger a bound, or a cast of one of these (either
/// extension keeps a value in [0, extent)).
bool provablyWithin(Value index, int64_t extent) {
  if (std::optional<int64_t> constant = constantIndex(index))
    return *constant >= 0 && *constant < extent;
  if (auto remainder = index.getDefiningOp<arith::RemUIOp>()) {
    std::optional<int64_t> divisor = constantIndex(remainder.getRhs());
    return divisor && *divisor > 0 && *divisor <= extent;
  }
  // An index already checked against this extent or a smaller one.
  if (auto checked = index.getDefiningOp<BoundsCheckOp>())
    return static_cast<int64_t>(checked.getBound()) <= extent;
  if (isa_and_nonnull<arith::IndexCastOp, arith::IndexCastUIOp>(
          index.getDefiningOp()))
    return provablyWithin(index.getDefiningOp()->getOperand(0), extent);
  if (auto loopIndex = index.getDefiningOp<linalg::IndexOp>()) {
    auto linalgOp = loopIndex->getParentOfType<linalg::LinalgOp>();
    if (!linalgOp)
      return false;
    SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
    int64_t range = ranges[loopIndex.getDim()];
    return !ShapedType::isDynamic(range) && range <= extent;
  }
  auto iv = dyn_cast<BlockArgument>(index);
  auto loop =
      iv ? dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp()) : scf::ForOp();
  if (!loop || iv != loop.getInductionVar())
    return false;
  std::optional<int64_t> lower = constantIndex(loop.getLowerBound());
  std::optional<int64_t> upper = constantIndex(loop.getUpperBound());
  return lower && upper && *lower >= 0 && *upper <= extent;
}

struct InsertBoundsChecksPass
    : public mlir::dt::impl::InsertBoundsChecksPassBase<
          InsertBoundsChecksPass> {
  mlir::dt::Statistic numChecks{this, "checks", "Indices checked"};
  mlir::dt::Statistic numProven{this, "proven", "Indices proven in range"};
  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (auto extract = dyn_cast<tensor::ExtractOp>(op))
        check(op, extract.getTensor().getType(), extract.getIndicesMutable(),
              "a tensor.extract from");
      else if (auto insert = dyn_cast<tensor::InsertOp>(op))
        check(op, insert.getDest().getType(), insert.getIndicesMutable(),
              "a tensor.insert into");
    });
  }

  void check(Operation *op, RankedTensorType type, MutableOperandRange indices,
             StringRef access) {
    // The message names the tensor as the program's author wrote it, without
    // its sharding.
    auto plain = RankedTensorType::get(type.getShape(), type.getElementType());
    for (auto [dim, operand] : llvm::enumerate(indices)) {
      Value index = operand.get();
      int64_t extent = type.getDimSize(dim);
      if (ShapedType::isDynamic(extent))
        continue;
      if (provablyWithin(index, extent)) {
        ++numProven;
        continue;
      }
      OpBuilder b(op);
      std::string what;
      llvm::raw_string_ostream os(what);
      os << "dim " << dim << " of " << access << ' ' << plain;
      operand.set(BoundsCheckOp::create(b, op->getLoc(), b.getIndexType(),
                                        index, extent, what));
      ++numChecks;
    }
  }
};
} // namespace
