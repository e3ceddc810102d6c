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
// A reshape or a slice on the way moves f32 elements. A sum an scf.for
// carries (a gradient accumulated over micro-batches, reduced after the
// loop) is carried in f32, each iteration's sum accumulated into it.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/Transforms/HalfSums.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dt {
#define GEN_PASS_DEF_WIDENPARTIALSUMSPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {

/// An op the partial value passes through: an elementwise linalg op (a
/// generic or a named one) or arith op of tensors linear in it, or a move
/// of its elements (a reshape, a slice); and the operand that carries the
/// partial value.
struct Link {
  Operation *op;
  unsigned input;
};

/// The ops that move a value's elements without computing: linear in it.
bool isMove(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp>(op);
}

/// A 16-bit sum of one result that accumulates into a zero fill: its op,
/// and how it accumulates.
struct Sum {
  linalg::LinalgOp op;
  HalfSum how;
};

/// One op of a loop body on the way from a carry to what the body yields:
/// a sum of one result accumulating into the carry (`how` set), or a link
/// with the carry as its input `operand`; `term`, for a link adding a sum
/// of this iteration to the carry, that sum.
struct Step {
  Operation *op;
  unsigned operand;
  std::optional<HalfSum> how;
  std::optional<Sum> term;
};

/// A partial sum and the way to its collective: the op that sums (a linalg
/// op, or the scf.for that carries the sum from iteration to iteration),
/// which of its inits or carries, how it accumulates (a linalg op) or the
/// steps by which the loop's body adds to it (a loop), and the links after
/// it, in order.
struct PartialSum {
  Operation *op;
  unsigned init;
  std::optional<HalfSum> how;
  SmallVector<Step> steps;
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

/// Whether `op` is an elementwise linalg op (a generic, or a named one:
/// linalg.add, transpose, broadcast, ...) whose one result is computed
/// from its input `input` by linear ops alone (isLinearOp), without
/// reading its init, and of that input's element type.
bool isLinearLink(linalg::LinalgOp op, unsigned input) {
  if (op.getNumReductionLoops() != 0 || op->getNumResults() != 1)
    return false;
  Block &body = *op.getBlock();
  // linalg.map's body has no argument for its init.
  unsigned inputs = op.getNumDpsInputs();
  if ((body.getNumArguments() > inputs &&
       !body.getArgument(inputs).use_empty()) ||
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

/// Whether `op` is a link linear in its operand `input` (not a move): a
/// linalg op on tensors (isLinearLink), or an arith op of whole tensors, as
/// dt-normalize-tensor-ops leaves an elementwise one (isLinearOp, the
/// numerator of a division).
bool isLinkOf(Operation *op, unsigned input) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureTensorSemantics() &&
           input < linalgOp.getNumDpsInputs() && isLinearLink(linalgOp, input);
  return isLinearOp(op) && isa<RankedTensorType>(op->getResult(0).getType()) &&
         (!isa<arith::DivFOp>(op) || input == 0);
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

/// The two operands `link` adds elementwise, and nothing else, if it is
/// such an add: an arith.addf of tensors, or a linalg op (a generic,
/// linalg.add) of identity maps whose body adds the elements of two of its
/// operands: its two inputs, or its input and its init (`acc += x`, written
/// into acc).
std::optional<std::array<unsigned, 2>> addedOperands(Operation *link) {
  if (isa<arith::AddFOp>(link)) {
    if (!isa<RankedTensorType>(link->getResult(0).getType()))
      return std::nullopt;
    return std::array<unsigned, 2>{0, 1};
  }
  auto op = dyn_cast<linalg::LinalgOp>(link);
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return std::nullopt;
  // A linalg op's block arguments are its operands' elements, in order.
  Block &body = *op.getBlock();
  auto add = dyn_cast<arith::AddFOp>(body.front());
  if (body.getNumArguments() != op->getNumOperands() || !add ||
      body.getTerminator() != add->getNextNode() ||
      body.getTerminator()->getOperand(0) != add.getResult())
    return std::nullopt;
  auto lhs = dyn_cast<BlockArgument>(add.getLhs());
  auto rhs = dyn_cast<BlockArgument>(add.getRhs());
  if (!lhs || !rhs || lhs.getOwner() != &body || rhs.getOwner() != &body ||
      lhs == rhs)
    return std::nullopt;
  return std::array<unsigned, 2>{lhs.getArgNumber(), rhs.getArgNumber()};
}

/// The sum `link` adds to its operand `input`, if `link` is a plain add
/// (addedOperands) of `input` and a 16-bit sum of the same type, made in
/// the same block, read by `link` alone, that accumulates into a zero fill
/// and is not a matmul unless `matmuls`: `acc + sum(x)`, which is `sum(x)`
/// accumulated into `acc`.
std::optional<Sum> matchAddedSum(Operation *link, unsigned input,
                                 bool matmuls) {
  std::optional<std::array<unsigned, 2>> added = addedOperands(link);
  if (!added || !llvm::is_contained(*added, input))
    return std::nullopt;
  Value acc = link->getOperand(input);
  Value term =
      link->getOperand((*added)[0] == input ? (*added)[1] : (*added)[0]);
  auto op = term.getDefiningOp<linalg::LinalgOp>();
  if (!op || op->getNumResults() != 1 || !term.hasOneUse() ||
      op->getBlock() != link->getBlock() || !op.hasPureTensorSemantics() ||
      op.getNumReductionLoops() == 0 || (!matmuls && isMatmul(op)) ||
      term.getType() != acc.getType())
    return std::nullopt;
  OpOperand &init = *op.getDpsInitOperand(0);
  auto fill = init.get().getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
    return std::nullopt;
  std::optional<HalfSum> how = matchHalfSum(op, init);
  if (!how)
    return std::nullopt;
  return Sum{op, *how};
}

/// The steps by which the body of `loop` adds to its carry `index`, a
/// 16-bit partial sum: from the carry's block argument to what the body
/// yields for it, each value read once, by a sum accumulating into it or a
/// linear link (a sum of this iteration added to it among them, also by an
/// add that writes into it: `acc += sum(x)` in place), at least
/// one adding a 16-bit sum (matchHalfSum) that is not a matmul unless
/// `matmuls`.
std::optional<SmallVector<Step>> matchCarry(scf::ForOp loop, unsigned index,
                                            bool matmuls) {
  Value value = loop.getRegionIterArg(index);
  SmallVector<Step> steps;
  bool adds = false;
  while (value.hasOneUse()) {
    OpOperand &use = *value.getUses().begin();
    Operation *user = use.getOwner();
    if (isa<scf::YieldOp>(user)) {
      if (user->getParentOp() != loop || use.getOperandNumber() != index ||
          !adds)
        return std::nullopt;
      return steps;
    }
    if (user->getBlock() != loop.getBody() || user->getNumResults() != 1)
      return std::nullopt;
    auto op = dyn_cast<linalg::LinalgOp>(user);
    unsigned input = use.getOperandNumber();
    // `acc + sum(x)`, by a link or written into acc; else a sum
    // accumulating into acc, or a link.
    bool intoCarry = op && op.isDpsInit(&use);
    std::optional<Sum> term = matchAddedSum(user, input, matmuls);
    if (term && (intoCarry || isLinkOf(user, input))) {
      steps.push_back({user, input, std::nullopt, term});
      adds = true;
    } else if (intoCarry) {
      std::optional<HalfSum> how = matchHalfSum(op, use);
      if (!op.hasPureTensorSemantics() || !how || (!matmuls && isMatmul(op)))
        return std::nullopt;
      steps.push_back({user, 0, how, std::nullopt});
      adds = true;
    } else if (isLinkOf(user, input)) {
      steps.push_back({user, input, std::nullopt, std::nullopt});
    } else {
      return std::nullopt;
    }
    value = user->getResult(0);
  }
  return std::nullopt;
}

/// The partial sum `value` is, through linear links, if every value on the
/// way after the sum has one use (the next op's; the sum itself may have
/// others, which read its rounding) and the sum accumulates a 16-bit init
/// (matchHalfSum) and is not a matmul unless `matmuls`: the library's
/// matmul already accumulates in f32 and rounds once per rank, and reducing
/// its result in f32 doubles the bytes of every data-parallel gradient.
/// (Widened, a matmul multiplies in f32 from its factors extended: a
/// mixed-precision product the library computes, writing f32.) The sum may
/// be one an scf.for carries (matchCarry).
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
    return PartialSum{op, init, how, {}, {}};
  }
  if (auto loop = dyn_cast<scf::ForOp>(result.getOwner())) {
    unsigned carry = result.getResultNumber();
    std::optional<SmallVector<Step>> steps = matchCarry(loop, carry, matmuls);
    if (!steps)
      return std::nullopt;
    return PartialSum{loop, carry, std::nullopt, std::move(*steps), {}};
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
  Operation *link = result.getOwner();
  for (unsigned input = 0, e = link->getNumOperands(); input < e; ++input) {
    if (!isLinkOf(link, input))
      continue;
    if (std::optional<PartialSum> sum =
            matchPartialSum(link->getOperand(input), matmuls)) {
      sum->links.push_back({link, input});
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
  if (!isa<linalg::LinalgOp>(link.op)) {
    // An arith op of tensors: of f32 tensors, the others extended.
    SmallVector<Value> operands;
    for (auto [i, operand] : llvm::enumerate(link.op->getOperands()))
      operands.push_back(
          i == link.input
              ? wide
              : convertElements(rewriter, link.op->getLoc(), operand, f32));
    OperationState state(link.op->getLoc(), link.op->getName(), operands,
                         {wide.getType()}, link.op->getAttrs());
    return rewriter.create(state)->getResult(0);
  }
  // A linalg op, named or not, becomes a generic of its body.
  auto op = cast<linalg::LinalgOp>(link.op);
  Location loc = op.getLoc();
  SmallVector<Value> inputs = op.getDpsInputs();
  inputs[link.input] = wide;
  Value init = emptyLike(rewriter, loc, op->getResult(0), f32);
  Block &body = *op.getBlock();
  auto widened = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
      op.getIndexingMapsArray(), op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        mapping.map(body.getArguments(),
                    args.take_front(body.getNumArguments()));
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
  if (isa<linalg::GenericOp>(*op))
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
          !::dt::isLinearReduction(kind))
        return;
      if (std::optional<PartialSum> sum =
              matchPartialSum(op->getOperand(0), matmuls))
        work[sum->op].emplace_back(op, std::move(*sum));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[sum, chains] : work)
      if (succeeded(widen(rewriter, sum, chains)))
        widenedCollectives += chains.size();
  }

  /// The remark of `explain` at `collective`, the partial sum of a matmul
  /// or not, carried by a loop or not, as it is widened.
  static void explainWidening(Operation *collective, bool matmul,
                              bool carried) {
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
    if (carried)
      remark << "; the loop carries it in f32, each rank's part rounded "
                "after the loop instead of at every iteration";
  }

  /// Whether the partial sum `way` of `sum` adds matmuls' products.
  static bool addsProducts(Operation *sum, const PartialSum &way) {
    if (auto op = dyn_cast<linalg::LinalgOp>(sum))
      return isMatmul(op);
    return llvm::any_of(way.steps, [](const Step &step) {
      if (step.term)
        return isMatmul(step.term->op);
      return step.how && isMatmul(cast<linalg::LinalgOp>(step.op));
    });
  }

  /// Sums `sum` in f32, and the links and the collective of each of
  /// `chains`, and rounds each collective's result once; the 16-bit ops
  /// they replace are erased. Other readers of the sum read it rounded.
  LogicalResult widen(RewriterBase &rewriter, Operation *sum,
                      ArrayRef<Chain> chains) {
    // The f32 value of each init or carry the chains read, and what may be
    // dead once they read it.
    llvm::SmallDenseMap<unsigned, Value> wide;
    SmallVector<Operation *> maybeDead;
    // Whether each chain reduces a matmul's product and whether a loop
    // carries the sum, for explain; asked now, since widening a named sum
    // erases it.
    SmallVector<bool> products;
    for (const auto &[collective, way] : chains)
      products.push_back(addsProducts(sum, way));
    bool carried = isa<scf::ForOp>(sum);
    if (auto loop = dyn_cast<scf::ForOp>(sum)) {
      for (const auto &[collective, way] : chains)
        if (!wide.count(way.init)) {
          FailureOr<Value> carry =
              widenCarry(rewriter, loop, way.init, way.steps, maybeDead);
          if (failed(carry))
            return failure();
          wide[way.init] = *carry;
        }
    } else {
      auto op = cast<linalg::LinalgOp>(sum);
      SmallVector<std::pair<unsigned, HalfSum>> inits;
      for (const auto &[collective, way] : chains)
        if (llvm::none_of(inits,
                          [&](auto &init) { return init.first == way.init; })) {
          inits.push_back({way.init, *way.how});
          maybeDead.push_back(op.getDpsInits()[way.init].getDefiningOp());
        }
      FailureOr<linalg::GenericOp> widened = widenHalfSums(rewriter, op, inits);
      if (failed(widened))
        return failure();
      // The sum's old results are now their roundings, which the first link
      // (or the collective) of each chain reads.
      for (auto [init, how] : inits) {
        wide[init] = widened->getResult(init);
        llvm::append_range(maybeDead, widened->getResult(init).getUsers());
      }
    }
    for (const auto &[chain, product] : llvm::zip_equal(chains, products)) {
      const auto &[collective, way] = chain;
      if (explain)
        explainWidening(collective, product, carried);
      Value current = wide[way.init];
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

  /// Makes `loop` carry its carry `index` in f32: it starts from its init
  /// widened, and `steps` add to it in f32 (a sum added to it accumulates
  /// into it). Returns the loop's f32 result; its readers read it rounded
  /// once after the loop. Fails, changing only named ops to their generic
  /// form, when a sum has no generic form.
  static FailureOr<Value> widenCarry(RewriterBase &rewriter, scf::ForOp loop,
                                     unsigned index, ArrayRef<Step> steps,
                                     SmallVector<Operation *> &maybeDead) {
    // Named sums in their generic form first, so that widening them cannot
    // fail half way.
    SmallVector<Step> wideSteps(steps);
    for (Step &step : wideSteps) {
      linalg::LinalgOp op = step.term  ? step.term->op
                            : step.how ? cast<linalg::LinalgOp>(step.op)
                                       : nullptr;
      if (!op || isa<linalg::GenericOp>(*op))
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return failure();
      if (step.term)
        step.term->op = *generalized;
      else
        step.op = *generalized;
    }
    Type f32 = rewriter.getF32Type();
    Location loc = loop.getLoc();
    BlockArgument carry = loop.getRegionIterArg(index);
    // In the body, the carry's f32 value is first its conversion, which the
    // carry itself replaces once it is f32.
    rewriter.setInsertionPointToStart(loop.getBody());
    Value entry = convertElements(rewriter, loc, carry, f32);
    Value current = entry;
    // A sum (of one result) accumulating into `current`, which it
    // replaces: its 16-bit result, now a rounding, may be dead once the old
    // steps are.
    auto accumulate = [&](linalg::LinalgOp op, HalfSum how) {
      maybeDead.push_back(op.getDpsInits()[0].getDefiningOp());
      linalg::GenericOp sum =
          *widenHalfSums(rewriter, op, {{0, how}}, {current});
      llvm::append_range(maybeDead, sum->getResult(0).getUsers());
      current = sum->getResult(0);
    };
    for (Step &step : wideSteps) {
      if (step.how) {
        accumulate(cast<linalg::LinalgOp>(step.op), *step.how);
      } else if (step.term) {
        // acc + sum(x) is sum(x) accumulated into acc.
        rewriter.moveOpBefore(step.term->op, step.op);
        accumulate(step.term->op, step.term->how);
      } else {
        rewriter.setInsertionPoint(step.op);
        current = widenLink(rewriter, {step.op, step.operand}, current);
      }
    }
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(index, current); });
    // The old links and adds, dead now, the last first.
    for (Step &step : wideSteps)
      if (!step.how)
        maybeDead.push_back(step.op);

    // The carry and the loop's result are f32 from here on.
    auto narrow = cast<RankedTensorType>(carry.getType());
    Value result = loop.getResult(index);
    SmallVector<OpOperand *> readers = llvm::to_vector(
        llvm::map_range(result.getUses(), [](OpOperand &use) { return &use; }));
    carry.setType(narrow.clone(f32));
    result.setType(carry.getType());
    rewriter.replaceAllUsesWith(entry, carry);
    auto conversion = entry.getDefiningOp<linalg::GenericOp>();
    maybeDead.push_back(conversion.getDpsInits()[0].getDefiningOp());
    rewriter.eraseOp(conversion);
    rewriter.setInsertionPoint(loop);
    Value init = loop.getInitArgs()[index];
    maybeDead.push_back(init.getDefiningOp());
    Value wideInit = widenInit(rewriter, loc, init);
    rewriter.modifyOpInPlace(
        loop, [&] { loop.getInitArgsMutable()[index].assign(wideInit); });
    rewriter.setInsertionPointAfter(loop);
    Value rounded =
        convertElements(rewriter, loc, result, narrow.getElementType());
    for (OpOperand *reader : readers)
      rewriter.modifyOpInPlace(reader->getOwner(),
                               [&] { reader->set(rounded); });
    maybeDead.push_back(rounded.getDefiningOp());
    return result;
  }

  /// Erases those of `ops` that nothing uses and that have no effect, and
  /// then what only they used (the 16-bit sum's rounding, its init's fill).
  /// `ops` may name one op more than once (a fill several sums start
  /// from); each is erased once.
  static void eraseDead(RewriterBase &rewriter, SmallVector<Operation *> ops) {
    llvm::SmallPtrSet<Operation *, 16> erased;
    while (!ops.empty()) {
      Operation *op = ops.pop_back_val();
      if (!op || erased.contains(op) || !isOpTriviallyDead(op))
        continue;
      for (Value operand : op->getOperands())
        ops.push_back(operand.getDefiningOp());
      erased.insert(op);
      rewriter.eraseOp(op);
    }
  }

  mlir::dt::Statistic widenedCollectives{
      this, "widened-collectives",
      "Partial 16-bit sums reduced across ranks in f32"};
};
} // namespace
