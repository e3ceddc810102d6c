//===- DTDialect.cpp - The dt dialect -------------------------------------===//

#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dt;

#include "dt/Dialect/DT/IR/DTDialect.cpp.inc"

namespace {
/// Prints shardings as `#sharding`, `#sharding1`, ... so that long programs
/// stay readable.
struct DTOpAsmDialectInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<ShardingAttr>(attr)) {
      os << "sharding";
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void DTDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dt/Dialect/DT/IR/DTOps.cpp.inc"
      >();
  addInterfaces<DTOpAsmDialectInterface>();
}

//===----------------------------------------------------------------------===//
// Argument, result and operation attributes
//===----------------------------------------------------------------------===//

/// Checks a `dt.sharding` annotation on a value of `type`.
static LogicalResult verifyShardingAnnotation(Operation *op, Attribute value,
                                              Type type, StringRef where) {
  auto emitError = [&] { return op->emitOpError() << where << ": "; };
  auto sharding = dyn_cast<ShardingAttr>(value);
  if (!sharding)
    return emitError() << "'" << DTDialect::kShardingAttrName
                       << "' must be a #dt.sharding<...>, got " << value;
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return emitError() << "'" << DTDialect::kShardingAttrName
                       << "' annotates ranked tensors, not " << type;
  if (Attribute encoding = tensorType.getEncoding(); encoding &&
                                                     encoding != sharding)
    return emitError() << "annotation " << sharding
                       << " disagrees with the type's encoding " << encoding;
  return verifyShardingForTensor(sharding, tensorType.getShape(),
                                 tensorType.getElementType(), emitError);
}

/// The type of argument `index` of region `regionIndex` of `op`, also for a
/// function declaration whose body is empty.
static Type getRegionArgumentType(Operation *op, unsigned regionIndex,
                                  unsigned index) {
  if (auto func = dyn_cast<FunctionOpInterface>(op))
    return func.getArgumentTypes()[index];
  Region &region = op->getRegion(regionIndex);
  return region.empty() ? Type() : region.getArgument(index).getType();
}

/// `dt.name` names an argument or a result for tools (dt-run --input, the
/// program description): a non-empty string.
static LogicalResult verifyNameAnnotation(Operation *op, Attribute value,
                                          StringRef where) {
  auto name = dyn_cast<StringAttr>(value);
  if (!name || name.getValue().empty())
    return op->emitOpError() << where << ": '" << DTDialect::kNameAttrName
                             << "' must be a non-empty string";
  return success();
}

LogicalResult DTDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attribute) {
  std::string where = "argument #" + std::to_string(argIndex);
  StringRef name = attribute.getName().getValue();
  if (name == kShardingAttrName)
    return verifyShardingAnnotation(
        op, attribute.getValue(),
        getRegionArgumentType(op, regionIndex, argIndex), where);
  if (name == kNameAttrName)
    return verifyNameAnnotation(op, attribute.getValue(), where);
  return op->emitOpError() << where << ": unknown dt attribute '" << name
                           << "'; expected '" << kShardingAttrName << "' or '"
                           << kNameAttrName << "'";
}

LogicalResult DTDialect::verifyRegionResultAttribute(Operation *op,
                                                     unsigned,
                                                     unsigned resultIndex,
                                                     NamedAttribute attribute) {
  std::string where = "result #" + std::to_string(resultIndex);
  StringRef name = attribute.getName().getValue();
  if (name == kNameAttrName)
    return verifyNameAnnotation(op, attribute.getValue(), where);
  if (name != kShardingAttrName)
    return op->emitOpError() << where << ": unknown dt attribute '" << name
                             << "'; expected '" << kShardingAttrName << "' or '"
                             << kNameAttrName << "'";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitOpError() << where << ": '" << kShardingAttrName
                             << "' annotates results of functions only";
  return verifyShardingAnnotation(op, attribute.getValue(),
                                  func.getResultTypes()[resultIndex], where);
}

LogicalResult DTDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == kShardingAttrName)
    return op->emitOpError()
           << "'" << name
           << "' belongs on function arguments and results; inside a body, "
              "use dt.constrain";
  // Each of the others is valid on some ops with some values; `what` says
  // which.
  auto require = [&](bool valid, StringRef what) -> LogicalResult {
    if (valid)
      return success();
    return op->emitOpError() << "'" << name << "' " << what;
  };
  if (name == kCombinedAttrName) {
    auto count = dyn_cast<IntegerAttr>(attribute.getValue());
    return require(isa<AllGatherOp, AllReduceOp, ReduceScatterOp>(op) &&
                       count && count.getInt() >= 2,
                   "is the number of collectives a dt.all_gather, "
                   "dt.all_reduce or dt.reduce_scatter was combined from: an "
                   "integer of at least 2");
  }
  if (name == kModelSecondsAttrName) {
    auto seconds = dyn_cast<FloatAttr>(attribute.getValue());
    return require(isRuntimeCollective(op) && seconds &&
                       seconds.getType().isF64() &&
                       seconds.getValueAsDouble() >= 0,
                   "is the cost model's seconds for one run of a collective "
                   "(dt.all_gather, dt.all_reduce, dt.reduce_scatter, "
                   "dt.all_to_all, dt.exchange, dt.local_slice): a "
                   "non-negative f64");
  }
  if (name == kNoAliasAttrName) {
    auto positions = dyn_cast<DenseI64ArrayAttr>(attribute.getValue());
    return require(
        isa<FunctionOpInterface>(op) && positions &&
            llvm::all_of(positions.asArrayRef(),
                         [](int64_t position) { return position >= 0; }),
        "lists the LLVM argument positions of a function's "
        "noalias pointers: an array<i64> of non-negative "
        "integers, on a function");
  }
  if (name == kChunksFnAttrName)
    return require(isa<FunctionOpInterface>(op) &&
                       isa<FlatSymbolRefAttr>(attribute.getValue()),
                   "names the function that runs a range of a kernel's "
                   "chunks: a symbol, on a function");
  if (name == kChunksAttrName) {
    auto sizes = dyn_cast<DenseI64ArrayAttr>(attribute.getValue());
    return require(isa<FunctionOpInterface>(op) && sizes && sizes.size() == 2 &&
                       sizes[0] >= 2 && sizes[1] >= sizes[0],
                   "is a kernel's chunks and its work: an array<i64> of two, "
                   "at least 2 chunks and as many iterations, on a function");
  }
  return op->emitOpError() << "unknown dt attribute '" << name << "'";
}

//===----------------------------------------------------------------------===//
// Module-level checks of shardings in functions
//===----------------------------------------------------------------------===//

namespace {
/// Checks, for every sharding a function mentions (in its signature, in
/// `dt.sharding` annotations and in the types of every value in its body),
/// that the mesh exists and has one axis per placement. These facts need the
/// module, so they cannot live in the type verifier; attaching this check to
/// `func.func` as a symbol user makes the module verifier run it.
struct FuncShardingVerifier
    : public SymbolUserOpInterface::ExternalModel<FuncShardingVerifier,
                                                  func::FuncOp> {
  LogicalResult verifySymbolUses(Operation *op,
                                 SymbolTableCollection &symbolTables) const {
    auto func = cast<func::FuncOp>(op);
    llvm::DenseSet<Attribute> verified;
    // Symbols resolve from the function: a nested op may itself look like a
    // symbol table (unregistered ops do).
    auto check = [&](Attribute attr,
                     function_ref<InFlightDiagnostic()> emitError) {
      auto sharding = dyn_cast_or_null<ShardingAttr>(attr);
      if (!sharding || verified.contains(sharding))
        return success();
      if (failed(verifyShardingMesh(sharding, func, symbolTables, emitError)))
        return failure();
      verified.insert(sharding);
      return success();
    };
    auto encodingOf = [](Type type) -> Attribute { return getShardingEncoding(type); };

    FunctionType type = func.getFunctionType();
    for (auto [i, argType] : llvm::enumerate(type.getInputs())) {
      auto emitError = [&] {
        return func.emitOpError() << "argument #" << i << ": ";
      };
      if (failed(check(encodingOf(argType), emitError)) ||
          failed(check(func.getArgAttr(i, DTDialect::kShardingAttrName), emitError)))
        return failure();
    }
    for (auto [i, resultType] : llvm::enumerate(type.getResults())) {
      auto emitError = [&] {
        return func.emitOpError() << "result #" << i << ": ";
      };
      if (failed(check(encodingOf(resultType), emitError)) ||
          failed(check(func.getResultAttr(i, DTDialect::kShardingAttrName),
                       emitError)))
        return failure();
    }

    WalkResult walk = func.walk([&](Operation *nested) {
      for (auto [i, result] : llvm::enumerate(nested->getResults())) {
        auto emitError = [&, i = i] {
          return nested->emitOpError() << "result #" << i << ": ";
        };
        if (failed(check(encodingOf(result.getType()), emitError)))
          return WalkResult::interrupt();
      }
      for (Region &region : nested->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments()) {
            if (nested == func.getOperation() && block.isEntryBlock())
              continue; // The signature was checked above.
            auto emitError = [&] {
              return nested->emitOpError()
                     << "block argument #" << arg.getArgNumber() << ": ";
            };
            if (failed(check(encodingOf(arg.getType()), emitError)))
              return WalkResult::interrupt();
          }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }
};
} // namespace

void mlir::dt::registerDTDialect(DialectRegistry &registry) {
  registry.insert<DTDialect, func::FuncDialect>();
  registerShardingRuleModels(registry);
  registry.addExtension(+[](MLIRContext *ctx, func::FuncDialect *) {
    func::FuncOp::attachInterface<FuncShardingVerifier>(*ctx);
  });
}
