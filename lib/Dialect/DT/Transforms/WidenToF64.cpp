//===- WidenToF64.cpp - dt-widen-to-f64 -----------------------------------===//
//
// The program spelled in f64: every narrower float type becomes f64, in
// types and attributes alike, through one AttrTypeReplacer over the module.
// Constants are converted value by value (a dense attribute's raw data has
// the narrow width, so its type cannot simply be swapped); the conversions
// between floats, now from f64 to f64, are erased.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::dt {
#define GEN_PASS_DEF_WIDENTOF64PASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

bool mlir::dt::isNarrowerThanF64(Type type) {
  auto element = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return element && element.getWidth() < 64;
}

namespace {
bool anyNarrowFloat(TypeRange types) {
  return llvm::any_of(types, isNarrowerThanF64);
}

/// Why `op` has no f64 spelling, or an empty string.
std::string whyNotWidenable(Operation *op) {
  if (isa<arith::BitcastOp, tensor::BitcastOp>(op) &&
      (anyNarrowFloat(op->getOperandTypes()) ||
       anyNarrowFloat(op->getResultTypes())))
    return "reinterprets the bits of a float narrower than f64";
  if (auto func = dyn_cast<FunctionOpInterface>(op);
      func && func.isExternal() &&
      (anyNarrowFloat(func.getArgumentTypes()) ||
       anyNarrowFloat(func.getResultTypes())))
    return "is an external function over floats narrower than f64, "
           "whose f64 version the program does not define";
  for (NamedAttribute attr : op->getAttrs())
    if (auto blob = dyn_cast<DenseResourceElementsAttr>(attr.getValue());
        blob && isNarrowerThanF64(blob.getType()))
      return "holds floats narrower than f64 in a resource blob";
  return "";
}

struct WidenToF64Pass
    : public mlir::dt::impl::WidenToF64PassBase<WidenToF64Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult refused = module.walk([](Operation *op) {
      std::string why = whyNotWidenable(op);
      if (why.empty())
        return WalkResult::advance();
      op->emitOpError(why) << ": the program has no f64 spelling "
                              "(dt-widen-to-f64)";
      return WalkResult::interrupt();
    });
    if (refused.wasInterrupted())
      return signalPassFailure();

    Type f64 = Float64Type::get(&getContext());
    auto widen = [&](const APFloat &value) {
      APFloat wide = value;
      bool lost;
      wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      return wide;
    };
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](FloatType type) -> std::optional<Type> {
      if (isNarrowerThanF64(type))
        return f64;
      return std::nullopt;
    });
    replacer.addReplacement([&](FloatAttr attr) -> std::optional<Attribute> {
      if (!isNarrowerThanF64(attr.getType()))
        return std::nullopt;
      return FloatAttr::get(f64, widen(attr.getValue()));
    });
    replacer.addReplacement(
        [&](DenseFPElementsAttr attr) -> std::optional<Attribute> {
          if (!isNarrowerThanF64(attr.getType()))
            return std::nullopt;
          return attr.mapValues(f64, [&](const APFloat &value) {
            return widen(value).bitcastToAPInt();
          });
        });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);

    // extf and truncf now go from f64 to f64, which arith rejects.
    module.walk([](Operation *op) {
      if (!isa<arith::ExtFOp, arith::TruncFOp>(op) ||
          op->getOperand(0).getType() != op->getResult(0).getType())
        return;
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
    });
  }
};
} // namespace
