//===- WidenPartialSums.cpp - dt-widen-partial-sums -----------------------===//
//
// A 16-bit sum over a split dim is a partial sum: each rank adds up its
// part, then a dt.all_reduce or dt.reduce_scatter adds the parts. Rounded to
// 16 bits before that, each part loses what the single-device sum,
// accumulated in f32 and rounded once (dt-widen-half-sums), keeps: 256 + 1
// is 256 in bf16, so the parts 257, 257, -256, -256 add up to 0, not 2. The
// parts stay in f32 until the ranks have added them:
//
//   %p = linalg.reduce ins(%x : tensor<16x32xbf16>) outs(%z : tensor<32xbf16>)
//   %m = linalg.generic ins(%p, ...) { %d = arith.divf %in, %n : bf16 }
//   %r = dt.all_reduce %m on @mesh ["dp"] sum : tensor<32xbf16> ->
//   tensor<32xbf16>
//
// (a mean) becomes the sum accumulated in f32, the division in f32 (its
// divisor extended), an all_reduce of f32, and one rounding of its result.
// A reshape or a slice on the way moves f32 elements.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/Transforms/HalfSums.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dt {
#define GEN_PASS_DEF_WIDENPARTIALSUMSPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {

/// An op the partial value passes through: an elementwise generic linear
/// in it, or a move of its elements (a reshape, a slice); and the operand
/// that carries the partial value.
struct Link {
  Operation *op;
  unsigned input;
};

/// The ops that move a value's elements without computing: linear in it.
bool isMove(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp>(op);
}

/// A partial sum and the way to its collective: the op that sums, which of
/// its inits, how it accumulates, and the links after it, in order.
struct PartialSum {
  linalg::LinalgOp op;
  unsigned init;
  HalfSum how;
  SmallVector<Link> links;
};

/// The ops a partial value may pass through: those linear in it.
bool isLinearOp(Operation *op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp>(op);
}

/// The values of `body` computed from its argument `input`, transitively
/// (the argument among them), by the body's own ops.
llvm::SmallPtrSet<Value, 8> valuesFrom(Block &body, unsigned input) {
  llvm::SmallPtrSet<Value, 8> derived = {body.getArgument(input)};
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return derived.contains(v); }))
      derived.insert(op.getResults().begin(), op.getResults().end());
  return derived;
}

/// Whether `op` is an elementwise generic whose one result is computed
/// from its input `input` by linear ops alone (isLinearOp), without
/// reading its init, and of that input's element type.
bool isLinearLink(linalg::GenericOp op, unsigned input) {
  if (op.getNumReductionLoops() != 0 || op->getNumResults() != 1)
    return false;
  Block &body = op.getRegion().front();
  if (!body.getArgument(op.getNumDpsInputs()).use_empty() ||
      getElementTypeOrSelf(op.getDpsInputs()[input].getType()) !=
          getElementTypeOrSelf(op->getResult(0).getType()))
    return false;
  llvm::SmallPtrSet<Value, 8> derived = valuesFrom(body, input);
  for (Value v : derived) {
    if (Operation *def = v.getDefiningOp(); def && !isLinearOp(def))
      return false;
    // Read only by the body's own ops, not from a region within one.
    for (Operation *user : v.getUsers())
      if (user->getBlock() != &body)
        return false;
  }
  return derived.contains(body.getTerminator()->getOperand(0));
}

/// Whether `op` is a contraction with rows and columns (a matmul, batched
/// or not, in any dim order): what the library computes, accumulating in
/// f32. A matrix-vector product or a dot is a sum like the others.
bool isMatmul(linalg::LinalgOp op) {
  if (!linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return succeeded(dims) && !dims->m.empty() && !dims->n.empty();
}

/// The partial sum `value` is, through linear links, if every value on the
/// way after the sum has one use (the next op's; the sum itself may have
/// others, which read its rounding) and the sum accumulates a 16-bit init
/// (matchHalfSum) and is not a matmul unless `matmuls`: the library's
/// matmul already accumulates in f32 and rounds once per rank, and reducing
/// its result in f32 doubles the bytes of every data-parallel gradient.
/// (Widened, a matmul multiplies in f32 from its factors extended: a
/// mixed-precision product the library computes, writing f32.)
std::optional<PartialSum> matchPartialSum(Value value, bool matmuls) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return std::nullopt;
  auto op = dyn_cast<linalg::LinalgOp>(result.getOwner());
  if (op && op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0) {
    if (!matmuls && isMatmul(op))
      return std::nullopt;
    unsigned init = result.getResultNumber();
    std::optional<HalfSum> how = matchHalfSum(op, *op.getDpsInitOperand(init));
    if (!how)
      return std::nullopt;
    return PartialSum{op, init, *how, {}};
  }
  if (!result.hasOneUse())
    return std::nullopt;
  if (Operation *move = result.getOwner(); isMove(move)) {
    std::optional<PartialSum> sum =
        matchPartialSum(move->getOperand(0), matmuls);
    if (sum)
      sum->links.push_back({move, 0});
    return sum;
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(result.getOwner());
  if (!generic || !generic.hasPureTensorSemantics())
    return std::nullopt;
  for (unsigned input = 0, e = generic.getNumDpsInputs(); input < e; ++input) {
    if (!isLinearLink(generic, input))
      continue;
    if (std::optional<PartialSum> sum =
            matchPartialSum(generic.getDpsInputs()[input], matmuls)) {
      sum->links.push_back({generic, input});
      return sum;
    }
  }
  return std::nullopt;
}

/// `link` computed in f32 from `wide`, the f32 value of its partial input:
/// a move moves the f32 elements; in a generic, every op that depends on
/// the partial value is made on f32 operands, the others it combines with
/// extended.
Value widenLink(RewriterBase &rewriter, Link link, Value wide) {
  Type f32 = rewriter.getF32Type();
  if (isMove(link.op)) {
    Operation *moved = rewriter.clone(*link.op);
    moved->setOperand(link.input, wide);
    Value result = moved->getResult(0);
    result.setType(cast<RankedTensorType>(result.getType()).clone(f32));
    return result;
  }
  auto op = cast<linalg::GenericOp>(link.op);
  Location loc = op.getLoc();
  SmallVector<Value> inputs = op.getDpsInputs();
  inputs[link.input] = wide;
  Value init = emptyLike(rewriter, loc, op->getResult(0), f32);
  Block &body = op.getRegion().front();
  auto widened = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
      op.getIndexingMapsArray(), op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        mapping.map(body.getArguments(), args);
        llvm::SmallPtrSet<Value, 8> derived = valuesFrom(body, link.input);
        for (Operation &nested : body.without_terminator()) {
          if (llvm::none_of(nested.getResults(),
                            [&](Value v) { return derived.contains(v); })) {
            b.clone(nested, mapping);
            continue;
          }
          SmallVector<Value> operands;
          for (Value v : nested.getOperands())
            operands.push_back(derived.contains(v)
                                   ? mapping.lookup(v)
                                   : b.createOrFold<arith::ExtFOp>(
                                         l, f32, mapping.lookupOrDefault(v)));
          OperationState state(l, nested.getName(), operands, {f32},
                               nested.getAttrs());
          mapping.map(nested.getResult(0), b.create(state)->getResult(0));
        }
        linalg::YieldOp::create(
            b, l, mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
      });
  widened->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  return widened.getResult(0);
}

struct WidenPartialSumsPass
    : public mlir::dt::impl::WidenPartialSumsPassBase<WidenPartialSumsPass> {
  using Base::Base;

  /// A partial sum's way to one of its collectives.
  using Chain = std::pair<Operation *, PartialSum>;

  void runOnOperation() override {
    // Per sum, the collectives its parts reach: the sum is widened once.
    llvm::MapVector<Operation *, SmallVector<Chain, 1>> work;
    getOperation().walk([&](Operation *op) {
      ::dt::ReductionKind kind;
      if (auto allReduce = dyn_cast<AllReduceOp>(op))
        kind = allReduce.getReduction().getValue();
      else if (auto reduceScatter = dyn_cast<ReduceScatterOp>(op))
        kind = reduceScatter.getReduction().getValue();
      else
        return;
      auto type = cast<RankedTensorType>(op->getOperand(0).getType());
      if (type.getEncoding()) {
        op->emitOpError("is still in global form: run dt-partition before "
                        "dt-widen-partial-sums");
        return signalPassFailure();
      }
      auto element = dyn_cast<FloatType>(type.getElementType());
      if (!element || element.getWidth() != 16 ||
          (kind != ::dt::ReductionKind::Sum &&
           kind != ::dt::ReductionKind::Avg))
        return;
      if (std::optional<PartialSum> sum =
              matchPartialSum(op->getOperand(0), matmuls))
        work[sum->op].emplace_back(op, std::move(*sum));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[sum, chains] : work)
      if (succeeded(widen(rewriter, cast<linalg::LinalgOp>(sum), chains)))
        widenedCollectives += chains.size();
  }

  /// The remark of `explain` at `collective`, the partial sum of a matmul
  /// or not, as it is widened.
  static void explainWidening(Operation *collective, bool matmul) {
    auto type = cast<RankedTensorType>(collective->getOperand(0).getType());
    int64_t bytes = type.getNumElements() * 2;
    std::string element;
    llvm::raw_string_ostream(element) << type.getElementType();
    InFlightDiagnostic remark = emitRemark(collective->getLoc());
    remark << collective->getName().stripDialect() << " of the parts of this "
           << element << " " << (matmul ? "matmul" : "sum")
           << " in f32, rounded once after as the single device's "
           << (matmul ? "product" : "sum") << " is: " << 2 * bytes
           << " bytes a rank instead of " << bytes;
  }

  /// Sums `sum` in f32, and the links and the collective of each of
  /// `chains`, and rounds each collective's result once; the 16-bit ops
  /// they replace are erased. Other readers of the sum read it rounded.
  LogicalResult widen(RewriterBase &rewriter, linalg::LinalgOp sum,
                      ArrayRef<Chain> chains) {
    SmallVector<std::pair<unsigned, HalfSum>> inits;
    SmallVector<Operation *> maybeDead;
    for (const auto &[collective, way] : chains)
      if (llvm::none_of(inits,
                        [&](auto &init) { return init.first == way.init; })) {
        inits.push_back({way.init, way.how});
        maybeDead.push_back(sum.getDpsInits()[way.init].getDefiningOp());
      }
    bool matmul = isMatmul(sum);
    FailureOr<linalg::GenericOp> wide = widenHalfSums(rewriter, sum, inits);
    if (failed(wide))
      return failure();
    // The sum's old results are now their roundings, which the first link
    // (or the collective) of each chain reads.
    for (auto [init, how] : inits)
      for (Operation *user : wide->getResult(init).getUsers())
        maybeDead.push_back(user);
    for (const auto &[collective, way] : chains) {
      if (explain)
        explainWidening(collective, matmul);
      Value current = wide->getResult(way.init);
      for (Link link : way.links) {
        rewriter.setInsertionPoint(link.op);
        current = widenLink(rewriter, link, current);
      }
      rewriter.setInsertionPoint(collective);
      Operation *widened = rewriter.clone(*collective);
      widened->setOperand(0, current);
      auto resultType = cast<RankedTensorType>(collective->getResultTypes()[0]);
      widened->getResult(0).setType(resultType.clone(rewriter.getF32Type()));
      Value rounded =
          convertElements(rewriter, collective->getLoc(), widened->getResult(0),
                          resultType.getElementType());
      rewriter.replaceOp(collective, rounded);
      for (Link link : llvm::reverse(way.links))
        rewriter.eraseOp(link.op);
    }
    eraseDead(rewriter, maybeDead);
    return success();
  }

  /// Erases those of `ops` that nothing uses and that have no effect, and
  /// then what only they used (the 16-bit sum's rounding, its init's fill).
  static void eraseDead(RewriterBase &rewriter, SmallVector<Operation *> ops) {
    while (!ops.empty()) {
      Operation *op = ops.pop_back_val();
      if (!op || !isOpTriviallyDead(op))
        continue;
      for (Value operand : op->getOperands())
        ops.push_back(operand.getDefiningOp());
      rewriter.eraseOp(op);
    }
  }

  mlir::dt::Statistic widenedCollectives{
      this, "widened-collectives",
      "Partial 16-bit sums reduced across ranks in f32"};
};
} // namespace
