//===- ShardingRuleModels.cpp - Sharding rules of upstream ops ------------===//
//
// External models of ShardingRuleOpInterface for dt's input language. Linalg
// structured ops derive their rules from indexing maps and iterator types;
// their partial rules come from abstract interpretation of the body (which
// operands the yielded values are linear in). Elementwise arith and math ops
// on tensors are interpreted the same way, as a one-op body.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::dt;
using ::dt::ReductionKind;
using FactorKind = ShardingRule::FactorKind;

static constexpr ReductionKind kPartialKinds[] = {
    ReductionKind::Sum, ReductionKind::Max, ReductionKind::Min};

/// 0, 1, ..., rank - 1: every dim its own factor.
static SmallVector<int64_t, 4> iotaDims(int64_t rank) {
  SmallVector<int64_t, 4> dims;
  for (int64_t dim = 0; dim < rank; ++dim)
    dims.push_back(dim);
  return dims;
}

static bool isConstantZero(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

/// Starts a rule with tensor flags for every operand and result.
static ShardingRule startRule(Operation *op) {
  ShardingRule rule;
  for (Type type : op->getOperandTypes())
    rule.operandIsTensor.push_back(isa<RankedTensorType>(type));
  for (Type type : op->getResultTypes())
    rule.resultIsTensor.push_back(isa<RankedTensorType>(type));
  rule.operandFactors.resize(op->getNumOperands());
  rule.resultFactors.resize(op->getNumResults());
  return rule;
}

/// Adds a partial rule unless an equal one is there.
static void addPartialRule(ShardingRule &rule, ReductionKind kind,
                           SmallVector<unsigned, 2> operands) {
  for (const ShardingRule::PartialRule &existing : rule.partialRules)
    if (existing.kind == kind && existing.operands == operands)
      return;
  rule.partialRules.push_back({kind, std::move(operands)});
}

/// True when a value of linearity `l` is a valid partial value of `kind`
/// on every rank: a zero sums to zero, and a replicated value is its own max.
static bool acceptableResult(Linearity l, ReductionKind kind) {
  if (l == Linearity::Linear || l == Linearity::Zero)
    return true;
  return l == Linearity::Constant && kind != ReductionKind::Sum;
}

/// The operand subsets worth trying as jointly partial: each tensor operand
/// alone, and all of them together (the empty set when there are none).
static SmallVector<SmallVector<unsigned, 2>>
candidateSubsets(ArrayRef<unsigned> tensorOperands) {
  SmallVector<SmallVector<unsigned, 2>> subsets;
  for (unsigned i : tensorOperands)
    subsets.push_back({i});
  if (tensorOperands.size() != 1)
    subsets.push_back(SmallVector<unsigned, 2>(tensorOperands));
  return subsets;
}

//===----------------------------------------------------------------------===//
// Linalg structured ops
//===----------------------------------------------------------------------===//

/// A tensor that a linalg op's body reads from above, and its reads.
struct CapturedTensor {
  Value tensor;
  SmallVector<tensor::ExtractOp, 2> reads;
};

/// The tensors `linalgOp`'s body reads from above (a gather's table), in
/// order of first use. Failure when the body uses one other than as the
/// source of a tensor.extract directly in the body.
static FailureOr<SmallVector<CapturedTensor>>
capturedTensors(linalg::LinalgOp linalgOp) {
  SmallVector<CapturedTensor> captured;
  Block *body = linalgOp.getBlock();
  Region *region = body->getParent();
  WalkResult walk = body->walk([&](Operation *inner) {
    for (OpOperand &use : inner->getOpOperands()) {
      Value value = use.get();
      if (!isa<RankedTensorType>(value.getType()) ||
          region->isAncestor(value.getParentRegion()))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(inner);
      if (!extract || &use != &extract.getTensorMutable() ||
          extract->getBlock() != body)
        return WalkResult::interrupt();
      auto *it = llvm::find_if(
          captured, [&](const CapturedTensor &c) { return c.tensor == value; });
      if (it == captured.end()) {
        captured.push_back({value, {}});
        it = std::prev(captured.end());
      }
      it->reads.push_back(extract);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return captured;
}

/// The loop whose index `value` is (through index casts), if it is one.
static std::optional<unsigned> loopIndexOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
      break;
    value = def->getOperand(0);
  }
  if (auto index = value.getDefiningOp<linalg::IndexOp>())
    return index.getDim();
  return std::nullopt;
}

/// The linearity of each value yielded by `linalgOp`'s body when the inputs
/// in `partialInputs` and every init are partial. Indices from
/// op->getNumOperands() on name `captured` tensors: what the body reads from
/// them is partial too.
static SmallVector<Linearity> interpretBody(linalg::LinalgOp linalgOp,
                                            ArrayRef<unsigned> partialInputs,
                                            ReductionKind kind,
                                            ArrayRef<Value> captured) {
  Block *body = linalgOp.getBlock();
  unsigned numOperands = linalgOp->getNumOperands();
  auto isPartialCapture = [&](Value tensor) {
    return llvm::any_of(partialInputs, [&](unsigned i) {
      return i >= numOperands && captured[i - numOperands] == tensor;
    });
  };
  llvm::SmallDenseMap<Value, Linearity, 16> state;
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    unsigned index = input->getOperandNumber();
    Linearity l = llvm::is_contained(partialInputs, index) ? Linearity::Linear
                  : isConstantZero(input->get()) ? Linearity::Zero
                                                 : Linearity::Constant;
    state[linalgOp.getMatchingBlockArgument(input)] = l;
  }
  for (OpOperand &init : linalgOp.getDpsInitsMutable())
    state[linalgOp.getMatchingBlockArgument(&init)] = Linearity::Linear;
  auto stateOf = [&](Value v) {
    auto it = state.find(v);
    return it != state.end() ? it->second : Linearity::Constant;
  };
  for (Operation &op : body->without_terminator()) {
    Linearity l;
    if (isConstantZero(op.getNumResults() == 1 ? op.getResult(0) : Value()))
      l = Linearity::Zero;
    else if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      // Partial indices read the wrong element, not a partial one.
      l = !llvm::all_of(extract.getIndices(),
                        [&](Value i) {
                          Linearity index = stateOf(i);
                          return index == Linearity::Constant ||
                                 index == Linearity::Zero;
                        })
              ? Linearity::Invalid
          : isPartialCapture(extract.getTensor()) ? Linearity::Linear
                                                  : Linearity::Constant;
    else if (isa<linalg::IndexOp, arith::ConstantOp>(op))
      l = Linearity::Constant;
    else
      l = transferLinearity(
          &op, llvm::map_to_vector(op.getOperands(), stateOf), kind);
    for (Value result : op.getResults())
      state[result] = l;
  }
  return llvm::map_to_vector(body->getTerminator()->getOperands(), stateOf);
}

/// How the partial results of a reduction loop combine: the yielded value
/// of each init must be `combine(init, x)`.
static std::optional<ReductionKind> combinerKind(linalg::LinalgOp linalgOp) {
  std::optional<ReductionKind> kind;
  Block *body = linalgOp.getBlock();
  for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
    BlockArgument acc = linalgOp.getMatchingBlockArgument(&init);
    unsigned resultIndex = init.getOperandNumber() - linalgOp.getNumDpsInputs();
    Operation *combiner =
        body->getTerminator()->getOperand(resultIndex).getDefiningOp();
    if (!combiner || combiner->getNumOperands() != 2 ||
        !llvm::is_contained(combiner->getOperands(), Value(acc)))
      return std::nullopt;
    std::optional<ReductionKind> thisKind;
    // On i1, or is max and and is min (the partial kinds of predicates).
    bool predicate = getElementTypeOrSelf(acc.getType()).isInteger(1);
    if (isa<arith::AddFOp, arith::AddIOp>(combiner))
      thisKind = ReductionKind::Sum;
    else if (predicate && isa<arith::OrIOp>(combiner))
      thisKind = ReductionKind::Max;
    else if (predicate && isa<arith::AndIOp>(combiner))
      thisKind = ReductionKind::Min;
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp,
                 arith::MaxUIOp>(combiner))
      thisKind = ReductionKind::Max;
    else if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp,
                 arith::MinUIOp>(combiner))
      thisKind = ReductionKind::Min;
    if (!thisKind || (kind && kind != thisKind))
      return std::nullopt;
    kind = thisKind;
  }
  return kind;
}

static FailureOr<ShardingRule> linalgRule(linalg::LinalgOp linalgOp) {
  if (!linalgOp.hasPureTensorSemantics())
    return failure();
  Operation *op = linalgOp.getOperation();
  ShardingRule rule = startRule(op);
  std::optional<ReductionKind> combiner = combinerKind(linalgOp);
  for (utils::IteratorType iterator : linalgOp.getIteratorTypesArray()) {
    ShardingRule::Factor factor;
    if (iterator == utils::IteratorType::reduction) {
      factor.kind = combiner ? FactorKind::Reduction : FactorKind::NeedsReplication;
      factor.reduction = combiner.value_or(ReductionKind::Sum);
    }
    rule.factors.push_back(factor);
  }
  auto factorsOf = [&](OpOperand &operand) {
    SmallVector<int64_t, 4> dims;
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        dims.push_back(dim.getPosition());
        continue;
      }
      // A window (d0 + d1) or a broadcast constant: the dim cannot be split,
      // nor any loop it mixes.
      dims.push_back(kNoFactor);
      expr.walk([&](AffineExpr inner) {
        if (auto dim = dyn_cast<AffineDimExpr>(inner))
          rule.factors[dim.getPosition()].kind = FactorKind::NeedsReplication;
      });
    }
    return dims;
  };
  FailureOr<SmallVector<CapturedTensor>> captured = capturedTensors(linalgOp);
  if (failed(captured))
    return failure();
  SmallVector<unsigned> tensorInputs;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!rule.isTensorOperand(operand.getOperandNumber()))
      continue;
    rule.operandFactors[operand.getOperandNumber()] = factorsOf(operand);
    if (linalgOp.isDpsInit(&operand)) {
      rule.accumulators.push_back(operand.getOperandNumber());
      unsigned result = operand.getOperandNumber() - linalgOp.getNumDpsInputs();
      rule.resultFactors[result] = rule.operandFactors[operand.getOperandNumber()];
    } else {
      tensorInputs.push_back(operand.getOperandNumber());
    }
  }
  // A captured tensor's dim that some loop's index reads (the same loop in
  // every read, over the whole extent) shards with that loop. A dim read at
  // computed indices (the row of an embedding table) is a gather: split, each
  // rank reads the rows it holds and zeros elsewhere, so the results are
  // partial sums, if the body is linear in what it reads.
  SmallVector<int64_t, 4> loopRanges = linalgOp.getStaticLoopRanges();
  for (const CapturedTensor &c : *captured) {
    unsigned index = op->getNumOperands() + rule.captured.size();
    rule.captured.push_back(c.tensor);
    rule.operandIsTensor.push_back(true);
    auto type = cast<RankedTensorType>(c.tensor.getType());
    SmallVector<Linearity> yielded =
        interpretBody(linalgOp, {index}, ReductionKind::Sum, rule.captured);
    bool linear = llvm::all_of(yielded, [](Linearity l) {
      return acceptableResult(l, ReductionKind::Sum);
    });
    SmallVector<int64_t, 4> dims;
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      std::optional<unsigned> loop;
      bool sameLoop = true;
      for (tensor::ExtractOp read : c.reads) {
        std::optional<unsigned> l = loopIndexOf(read.getIndices()[dim]);
        sameLoop &= l && (!loop || loop == l);
        loop = l;
      }
      if (sameLoop && loop && loopRanges[*loop] == type.getDimSize(dim) &&
          !ShapedType::isDynamic(type.getDimSize(dim))) {
        dims.push_back(*loop);
        continue;
      }
      dims.push_back(rule.factors.size());
      ShardingRule::Factor gather;
      gather.kind =
          linear ? FactorKind::Reduction : FactorKind::NeedsReplication;
      rule.factors.push_back(gather);
    }
    rule.operandFactors.push_back(std::move(dims));
    tensorInputs.push_back(index);
  }
  for (ReductionKind kind : kPartialKinds)
    for (const auto &subset : candidateSubsets(tensorInputs)) {
      SmallVector<Linearity> yielded =
          interpretBody(linalgOp, subset, kind, rule.captured);
      if (llvm::all_of(yielded,
                       [&](Linearity l) { return acceptableResult(l, kind); }))
        addPartialRule(rule, kind, subset);
    }
  rule.finalize();
  return rule;
}

namespace {
template <typename OpTy>
struct LinalgRuleModel
    : public ShardingRuleOpInterface::ExternalModel<LinalgRuleModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    return linalgRule(cast<linalg::LinalgOp>(op));
  }
};

/// Softmax normalizes along one dim: that dim needs the whole row.
struct SoftmaxRuleModel
    : public ShardingRuleOpInterface::ExternalModel<SoftmaxRuleModel,
                                                    linalg::SoftmaxOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    ShardingRule rule = startRule(op);
    int64_t rank = softmax.getInputOperandType().getRank();
    rule.factors.resize(rank);
    rule.factors[softmax.getDimension()].kind = FactorKind::NeedsReplication;
    SmallVector<int64_t, 4> dims = iotaDims(rank);
    rule.operandFactors[0] = dims;
    rule.operandFactors[1] = dims;
    rule.resultFactors[0] = dims;
    rule.accumulators.push_back(1);
    return rule;
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise arith and math ops on tensors
//===----------------------------------------------------------------------===//

namespace {
template <typename OpTy>
struct ElementwiseRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ElementwiseRuleModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType)
      return failure();
    ShardingRule rule = startRule(op);
    rule.factors.resize(resultType.getRank());
    SmallVector<int64_t, 4> dims = iotaDims(resultType.getRank());
    SmallVector<unsigned> tensorOperands;
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      if (rule.isTensorOperand(i)) {
        rule.operandFactors[i] = dims;
        tensorOperands.push_back(i);
      }
    for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
      rule.resultFactors[i] = dims;
    // Upstream verifiers of these ops demand one encoding for all tensors
    // (SameOperandsAndResultType), so partial values can only flow through
    // with every operand partial. Scaling a partial sum by a replicated
    // tensor needs a linalg op (linalg.mul, linalg.generic) instead.
    SmallVector<Linearity> in(op->getNumOperands(), Linearity::Constant);
    for (unsigned i : tensorOperands)
      in[i] = Linearity::Linear;
    for (ReductionKind kind : kPartialKinds)
      if (acceptableResult(transferLinearity(op, in, kind), kind))
        addPartialRule(rule, kind,
                       SmallVector<unsigned, 2>(tensorOperands.begin(),
                                                tensorOperands.end()));
    return rule;
  }
};

template <typename... OpTys>
void attachElementwise(MLIRContext *ctx) {
  (
      [&] {
        if constexpr (OpTys::template hasTrait<OpTrait::Elementwise>())
          OpTys::template attachInterface<ElementwiseRuleModel<OpTys>>(*ctx);
      }(),
      ...);
}

template <typename... OpTys>
void attachLinalg(MLIRContext *ctx) {
  (OpTys::template attachInterface<LinalgRuleModel<OpTys>>(*ctx), ...);
}
} // namespace

//===----------------------------------------------------------------------===//
// Tensor ops and constants
//===----------------------------------------------------------------------===//

/// A rule where every dim of the result (and of same-shaped tensor operands)
/// is its own parallel factor.
static ShardingRule identityRule(Operation *op, int64_t rank) {
  ShardingRule rule = startRule(op);
  rule.factors.resize(rank);
  SmallVector<int64_t, 4> dims = iotaDims(rank);
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    if (rule.isTensorOperand(i))
      rule.operandFactors[i] = dims;
  rule.resultFactors[0] = dims;
  return rule;
}

/// Data movement commutes with every reduction: all tensor operands may be
/// partial together.
static void addDataMovementPartials(ShardingRule &rule) {
  SmallVector<unsigned, 2> tensors;
  for (unsigned i = 0, e = rule.operandIsTensor.size(); i < e; ++i)
    if (rule.isTensorOperand(i))
      tensors.push_back(i);
  for (ReductionKind kind : kPartialKinds)
    addPartialRule(rule, kind, tensors);
}

/// The identity rule of an op whose one result has a static shape; failure
/// for any other shape.
static FailureOr<ShardingRule> staticIdentityRule(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return failure();
  return identityRule(op, type.getRank());
}

/// Values every rank holds alike (a constant, a tensor built from scalars)
/// are their own max and min.
static void addEqualValuePartials(ShardingRule &rule) {
  addPartialRule(rule, ReductionKind::Max, {});
  addPartialRule(rule, ReductionKind::Min, {});
}

namespace {
struct EmptyRuleModel
    : public ShardingRuleOpInterface::ExternalModel<EmptyRuleModel,
                                                    tensor::EmptyOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto empty = cast<tensor::EmptyOp>(op);
    ShardingRule rule = identityRule(op, empty.getType().getRank());
    // Its contents are undefined: any partial state is as good as another.
    addDataMovementPartials(rule);
    return rule;
  }
};

struct ConstantRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ConstantRuleModel,
                                                    arith::ConstantOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type)
      return failure();
    ShardingRule rule = identityRule(op, type.getRank());
    auto dense = dyn_cast<DenseElementsAttr>(cast<arith::ConstantOp>(op).getValue());
    if (!dense || !dense.isSplat())
      for (ShardingRule::Factor &factor : rule.factors)
        factor.kind = FactorKind::NeedsReplication;
    // Only zeros are their own sum.
    addEqualValuePartials(rule);
    if (isConstantZero(op->getResult(0)))
      addPartialRule(rule, ReductionKind::Sum, {});
    return rule;
  }
};

/// A tensor built from scalars, which are equal on every rank: whole on
/// every rank (or its own max and min), as a constant that is not a splat.
struct FromElementsRuleModel
    : public ShardingRuleOpInterface::ExternalModel<FromElementsRuleModel,
                                                    tensor::FromElementsOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto type = cast<tensor::FromElementsOp>(op).getType();
    ShardingRule rule = identityRule(op, type.getRank());
    for (ShardingRule::Factor &factor : rule.factors)
      factor.kind = FactorKind::NeedsReplication;
    addEqualValuePartials(rule);
    return rule;
  }
};

/// One scalar, equal on every rank, everywhere: any sharding (each rank
/// fills its piece), and its own max and min, as a splat constant.
struct SplatRuleModel
    : public ShardingRuleOpInterface::ExternalModel<SplatRuleModel,
                                                    tensor::SplatOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    FailureOr<ShardingRule> rule = staticIdentityRule(op);
    if (succeeded(rule))
      addEqualValuePartials(*rule);
    return rule;
  }
};

/// collapse_shape and expand_shape: a group of dims on the multi-dim side
/// maps to one dim on the other. The group's leading dim and the single dim
/// share a factor that keeps torch.chunk layouts only when the number of
/// pieces divides the leading dim (or the group's other dims are all 1);
/// the other dims of the group cannot be split.
template <typename OpTy>
struct ReshapeRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ReshapeRuleModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto reshape = cast<OpTy>(op);
    constexpr bool collapsing = std::is_same_v<OpTy, tensor::CollapseShapeOp>;
    RankedTensorType expanded =
        collapsing ? reshape.getSrcType() : reshape.getResultType();
    ShardingRule rule = startRule(op);
    SmallVector<int64_t, 4> expandedDims, collapsedDims;
    for (ReassociationIndices group : reshape.getReassociationIndices()) {
      int64_t shared = rule.factors.size();
      ShardingRule::Factor factor;
      // A group whose other dims are all 1 moves its leading dim unchanged:
      // any number of pieces keeps the layout.
      int64_t rest = 1;
      for (int64_t dim : llvm::drop_begin(group))
        rest *= expanded.getDimSize(dim);
      if (rest != 1)
        factor.mustDivide = expanded.getDimSize(group.front());
      rule.factors.push_back(factor);
      collapsedDims.push_back(shared);
      expandedDims.push_back(shared);
      for (size_t i = 1; i < group.size(); ++i) {
        expandedDims.push_back(rule.factors.size());
        rule.factors.push_back({FactorKind::NeedsReplication});
      }
    }
    rule.operandFactors[0] = collapsing ? expandedDims : collapsedDims;
    rule.resultFactors[0] = collapsing ? collapsedDims : expandedDims;
    addDataMovementPartials(rule);
    return rule;
  }
};

/// Ops that move whole dims except for some sliced ones, which need the full
/// extent on every rank.
static ShardingRule slicingRule(Operation *op, int64_t rank,
                                function_ref<bool(int64_t)> isSliced) {
  ShardingRule rule = identityRule(op, rank);
  for (int64_t dim = 0; dim < rank; ++dim)
    if (isSliced(dim))
      rule.factors[dim].kind = FactorKind::NeedsReplication;
  return rule;
}

/// A cast between equal static shapes moves nothing.
struct CastRuleModel
    : public ShardingRuleOpInterface::ExternalModel<CastRuleModel,
                                                    tensor::CastOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    FailureOr<ShardingRule> rule = staticIdentityRule(op);
    if (succeeded(rule))
      addDataMovementPartials(*rule);
    return rule;
  }
};

struct ExtractSliceRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ExtractSliceRuleModel,
                                                    tensor::ExtractSliceOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    RankedTensorType source = slice.getSourceType();
    ShardingRule rule = startRule(op);
    auto sliced = [&](int64_t dim) {
      return slice.getStaticOffsets()[dim] != 0 ||
             slice.getStaticSizes()[dim] != source.getDimSize(dim) ||
             slice.getStaticStrides()[dim] != 1;
    };
    if (slice.getResultType().getRank() != source.getRank()) {
      // Rank-reducing (a micro-batch `x[i]`, say): the dropped dims are
      // sliced to one element; the kept ones map to the result's in order.
      llvm::SmallBitVector dropped = slice.getDroppedDims();
      rule.factors.resize(source.getRank());
      rule.operandFactors[0] = iotaDims(source.getRank());
      rule.resultFactors[0].clear();
      for (int64_t dim = 0; dim < source.getRank(); ++dim) {
        if (sliced(dim) || dropped[dim])
          rule.factors[dim].kind = FactorKind::NeedsReplication;
        if (!dropped[dim])
          rule.resultFactors[0].push_back(dim);
      }
    } else {
      rule = slicingRule(op, source.getRank(), sliced);
    }
    addDataMovementPartials(rule);
    return rule;
  }
};

struct InsertSliceRuleModel
    : public ShardingRuleOpInterface::ExternalModel<InsertSliceRuleModel,
                                                    tensor::InsertSliceOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    RankedTensorType dest = insert.getDestType();
    // A rank-expanding insert (a micro-batch's result into `y[i]`) drops
    // dims of the slice: they are sliced to one element; the source's dims
    // are the kept ones, in order.
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    auto sliced = [&](int64_t dim) {
      return dropped[dim] || insert.getStaticOffsets()[dim] != 0 ||
             insert.getStaticSizes()[dim] != dest.getDimSize(dim) ||
             insert.getStaticStrides()[dim] != 1;
    };
    ShardingRule rule = slicingRule(op, dest.getRank(), sliced);
    rule.operandFactors[0].clear();
    for (int64_t dim = 0; dim < dest.getRank(); ++dim)
      if (!dropped[dim])
        rule.operandFactors[0].push_back(dim);
    addDataMovementPartials(rule);
    return rule;
  }
};

struct ConcatRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ConcatRuleModel,
                                                    tensor::ConcatOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto concat = cast<tensor::ConcatOp>(op);
    int64_t axis = concat.getDim();
    ShardingRule rule = slicingRule(op, concat.getResultType().getRank(),
                                    [&](int64_t dim) { return dim == axis; });
    addDataMovementPartials(rule);
    return rule;
  }
};

/// Reading or writing one element at run-time indices (a gather's lookup,
/// usually inside a linalg body) needs the whole tensor on every rank.
template <typename OpTy>
struct ElementAccessRuleModel : public ShardingRuleOpInterface::ExternalModel<
                                    ElementAccessRuleModel<OpTy>, OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto access = cast<OpTy>(op);
    RankedTensorType type;
    if constexpr (std::is_same_v<OpTy, tensor::ExtractOp>)
      type = access.getTensor().getType();
    else
      type = access.getDest().getType();
    ShardingRule rule =
        slicingRule(op, type.getRank(), [](int64_t) { return true; });
    if (!rule.isTensorResult(0))
      rule.resultFactors[0].clear();
    return rule;
  }
};

struct PadRuleModel
    : public ShardingRuleOpInterface::ExternalModel<PadRuleModel, tensor::PadOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto pad = cast<tensor::PadOp>(op);
    ShardingRule rule =
        slicingRule(op, pad.getResultType().getRank(), [&](int64_t dim) {
          return pad.getStaticLow()[dim] != 0 || pad.getStaticHigh()[dim] != 0;
        });
    // Padding with zeros keeps partial sums; other values do not.
    if (isConstantZero(pad.getConstantPaddingValue()))
      addPartialRule(rule, ReductionKind::Sum, {0});
    return rule;
  }
};
} // namespace

void mlir::dt::registerShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachLinalg<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxRuleModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachElementwise<
#define GET_OP_LIST
#include "mlir/Dialect/Arith/IR/ArithOps.cpp.inc"
        >(ctx);
    arith::ConstantOp::attachInterface<ConstantRuleModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachElementwise<
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
        >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::EmptyOp::attachInterface<EmptyRuleModel>(*ctx);
    tensor::FromElementsOp::attachInterface<FromElementsRuleModel>(*ctx);
    tensor::SplatOp::attachInterface<SplatRuleModel>(*ctx);
    tensor::CollapseShapeOp::attachInterface<
        ReshapeRuleModel<tensor::CollapseShapeOp>>(*ctx);
    tensor::ExpandShapeOp::attachInterface<
        ReshapeRuleModel<tensor::ExpandShapeOp>>(*ctx);
    tensor::CastOp::attachInterface<CastRuleModel>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceRuleModel>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceRuleModel>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatRuleModel>(*ctx);
    tensor::PadOp::attachInterface<PadRuleModel>(*ctx);
    tensor::ExtractOp::attachInterface<
        ElementAccessRuleModel<tensor::ExtractOp>>(*ctx);
    tensor::InsertOp::attachInterface<ElementAccessRuleModel<tensor::InsertOp>>(
        *ctx);
  });
}
