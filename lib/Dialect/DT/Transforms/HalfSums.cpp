//===- HalfSums.cpp - 16-bit float sums accumulated in f32 ----------------===//

#include "dt/Dialect/DT/Transforms/HalfSums.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::dt;

/// Whether `op` is a running maximum or minimum.
static bool isExtremum(Operation *op) {
  return isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp>(op);
}

std::optional<HalfSum> mlir::dt::matchHalfSum(linalg::LinalgOp op,
                                              OpOperand &init, bool extrema) {
  auto type = dyn_cast<FloatType>(getElementTypeOrSelf(init.get()));
  if (!type || type.getWidth() != 16)
    return std::nullopt;
  BlockArgument acc = op.getMatchingBlockArgument(&init);
  HalfSum sum;
  for (Operation *user : acc.getUsers()) {
    if ((isa<arith::AddFOp>(user) || (extrema && isExtremum(user))) &&
        !sum.combine)
      sum.combine = user;
    else if (auto select = dyn_cast<arith::SelectOp>(user);
             select && !sum.select)
      sum.select = select;
    else
      return std::nullopt;
  }
  if (!sum.combine || !sum.combine->hasOneUse())
    return std::nullopt;
  Operation *result = sum.combine;
  if (sum.select) {
    Value other = sum.select.getTrueValue() == acc ? sum.select.getFalseValue()
                                                   : sum.select.getTrueValue();
    if (other != sum.combine->getResult(0) || !sum.select->hasOneUse())
      return std::nullopt;
    result = sum.select;
  }
  OpOperand &yielded = *result->getUses().begin();
  if (!isa<linalg::YieldOp>(yielded.getOwner()) ||
      yielded.getOperandNumber() !=
          init.getOperandNumber() - op.getNumDpsInputs())
    return std::nullopt;
  return sum;
}

Value mlir::dt::emptyLike(OpBuilder &b, Location loc, Value value,
                          Type elementType) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  return tensor::EmptyOp::create(
      b, loc, sizes, elementType,
      cast<RankedTensorType>(value.getType()).getEncoding());
}

Value mlir::dt::convertElements(OpBuilder &b, Location loc, Value value,
                                Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  Value empty = emptyLike(b, loc, value, elementType);
  SmallVector<AffineMap> maps(
      2, b.getMultiDimIdentityMap(static_cast<unsigned>(type.getRank())));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  bool widen = cast<FloatType>(elementType).getWidth() >
               cast<FloatType>(type.getElementType()).getWidth();
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{value},
             ValueRange{empty}, maps, iterators,
             [&](OpBuilder &nested, Location l, ValueRange args) {
               Value converted = widen ? Value(arith::ExtFOp::create(
                                             nested, l, elementType, args[0]))
                                       : Value(arith::TruncFOp::create(
                                             nested, l, elementType, args[0]));
               linalg::YieldOp::create(nested, l, converted);
             })
      .getResult(0);
}

Value mlir::dt::widenInit(OpBuilder &b, Location loc, Value init) {
  Type wide = b.getF32Type();
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    // A constant (a zero, typically) folds to the wide constant.
    Value scalar =
        b.createOrFold<arith::ExtFOp>(loc, wide, fill.getDpsInputs()[0]);
    Value empty = emptyLike(b, loc, init, wide);
    return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
  }
  return convertElements(b, loc, init, wide);
}

FailureOr<linalg::GenericOp>
mlir::dt::widenHalfSums(RewriterBase &rewriter, linalg::LinalgOp op,
                        ArrayRef<std::pair<unsigned, HalfSum>> sums,
                        ValueRange wideInits) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Type f32 = rewriter.getF32Type();
  auto generic = dyn_cast<linalg::GenericOp>(*op);
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return failure();
    generic = *generalized;
  }
  SmallVector<Value> inits = generic.getDpsInits();
  SmallVector<Type> resultTypes(generic->getResultTypes());
  for (auto [k, i] : llvm::enumerate(llvm::make_first_range(sums))) {
    inits[i] = k < wideInits.size() ? wideInits[k]
                                    : widenInit(rewriter, loc, inits[i]);
    resultTypes[i] = inits[i].getType();
  }
  unsigned numInputs = generic.getNumDpsInputs();
  Block &body = generic.getRegion().front();
  auto wide = linalg::GenericOp::create(
      rewriter, loc, resultTypes, generic.getDpsInputs(), inits,
      generic.getIndexingMapsArray(), generic.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        mapping.map(body.getArguments(), args);
        // Each accumulating op, with the init argument it combines with,
        // and the selects that keep an argument: selects of f32 values
        // now. A term that is a product only a sum reads is multiplied in
        // f32 (exact for 16-bit factors), as the library's matmuls do.
        llvm::SmallPtrSet<Operation *, 2> accumulators, selects, products;
        for (auto [i, sum] : sums) {
          accumulators.insert(sum.combine);
          if (sum.select)
            selects.insert(sum.select);
          Value acc = body.getArgument(numInputs + i);
          Value term = sum.combine->getOperand(
              sum.combine->getOperand(0) == acc ? 1 : 0);
          if (auto product = term.getDefiningOp<arith::MulFOp>();
              product && isa<arith::AddFOp>(sum.combine) &&
              product->getBlock() == &body && product->hasOneUse())
            products.insert(product);
        }
        for (Operation &nested : body.without_terminator()) {
          if (selects.contains(&nested)) {
            auto select = cast<arith::SelectOp>(nested);
            mapping.map(select.getResult(),
                        arith::SelectOp::create(
                            b, l,
                            mapping.lookupOrDefault(select.getCondition()),
                            mapping.lookupOrDefault(select.getTrueValue()),
                            mapping.lookupOrDefault(select.getFalseValue())));
            continue;
          }
          if (products.contains(&nested)) {
            auto product = cast<arith::MulFOp>(nested);
            auto widen = [&](Value v) -> Value {
              return arith::ExtFOp::create(b, l, f32,
                                           mapping.lookupOrDefault(v));
            };
            Value lhs = widen(product.getLhs());
            Value rhs = widen(product.getRhs());
            mapping.map(product.getResult(),
                        arith::MulFOp::create(b, l, lhs, rhs,
                                              product.getFastmathAttr()));
            continue;
          }
          if (!accumulators.contains(&nested)) {
            b.clone(nested, mapping);
            continue;
          }
          // acc + x becomes acc32 + extf(x), in the body's operand order
          // (a maximum or minimum alike), with the op's attributes: the
          // init's argument is f32 now, the term is extended.
          OperationState state(l, nested.getName());
          for (Value operand : nested.getOperands()) {
            Value wide = mapping.lookupOrDefault(operand);
            state.addOperands(wide.getType() == f32
                                  ? wide
                                  : arith::ExtFOp::create(b, l, f32, wide));
          }
          state.addTypes(f32);
          state.addAttributes(nested.getAttrs());
          mapping.map(nested.getResult(0), b.create(state)->getResult(0));
        }
        SmallVector<Value> yielded;
        for (Value v : body.getTerminator()->getOperands())
          yielded.push_back(mapping.lookupOrDefault(v));
        linalg::YieldOp::create(b, l, yielded);
      });
  wide->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  SmallVector<Value> results(wide->getResults());
  for (unsigned i : llvm::make_first_range(sums))
    results[i] = convertElements(
        rewriter, loc, results[i],
        getElementTypeOrSelf(generic.getDpsInits()[i].getType()));
  rewriter.replaceOp(generic, results);
  return wide;
}
