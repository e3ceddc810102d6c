//===- BufferizableOpInterfaceImpl.cpp - Bufferizing dt collectives -------===//
//
// A local-form collective reads its input buffer and writes a fresh one: it
// bufferizes into an allocation and a call of the runtime, which gets both
// buffers as unranked memrefs plus the group (a bit mask of mesh axes) and
// the collective's attributes, and last the address of a constant naming
// the collective's site ("all_gather on [dp] dim 0 (model.mlir:12:8)"), by
// which `dt-run --profile` reports its time.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::dt;

namespace {
/// The runtime function's name stem, its trailing i32 arguments, and what
/// the site's name says after the op and its axes; an exchange passes its
/// layout as text after them.
struct CollectiveCall {
  StringRef stem;
  SmallVector<int64_t> attributes;
  std::string detail;
  std::optional<std::string> layout;
};

/// A bit mask of the named mesh axes.
int64_t axisMask(MeshOp mesh, std::optional<ArrayAttr> names) {
  int64_t mask = 0;
  for (Attribute name : names ? names->getValue() : ArrayRef<Attribute>())
    mask |= int64_t(1) << *mesh.getAxisIndex(cast<StringAttr>(name));
  return mask;
}

/// The uneven layout arguments: the global extent (-1: derive it from the
/// shapes) and the outer axes that split the dim first.
SmallVector<int64_t> unevenLayout(MeshOp mesh, std::optional<int64_t> extent,
                                  std::optional<ArrayAttr> outerAxes) {
  return {extent.value_or(-1), axisMask(mesh, outerAxes)};
}

std::string dimDetail(int64_t dim) { return "dim " + std::to_string(dim); }

CollectiveCall describe(AllReduceOp op, MeshOp) {
  return {"dt_rt_all_reduce_",
          {static_cast<int64_t>(op.getReduction().getValue())},
          std::string(::dt::reductionKindName(op.getReduction().getValue()))};
}
CollectiveCall describe(AllGatherOp op, MeshOp mesh) {
  CollectiveCall call{"dt_rt_all_gather_",
                      {static_cast<int64_t>(op.getDim())},
                      dimDetail(op.getDim())};
  call.attributes.append(unevenLayout(mesh, op.getExtent(), op.getOuterAxes()));
  return call;
}
CollectiveCall describe(ReduceScatterOp op, MeshOp mesh) {
  CollectiveCall call{
      "dt_rt_reduce_scatter_",
      {static_cast<int64_t>(op.getReduction().getValue()),
       static_cast<int64_t>(op.getDim())},
      std::string(::dt::reductionKindName(op.getReduction().getValue())) +
          ", " + dimDetail(op.getDim())};
  call.attributes.append(unevenLayout(mesh, op.getExtent(), op.getOuterAxes()));
  return call;
}
CollectiveCall describe(AllToAllOp op, MeshOp mesh) {
  CollectiveCall call{"dt_rt_all_to_all_",
                      {static_cast<int64_t>(op.getSplitDim()),
                       static_cast<int64_t>(op.getConcatDim())},
                      "split " + std::to_string(op.getSplitDim()) + " concat " +
                          std::to_string(op.getConcatDim())};
  call.attributes.append(
      unevenLayout(mesh, op.getSplitExtent(), op.getSplitOuterAxes()));
  call.attributes.append(unevenLayout(mesh, op.getExtent(), op.getOuterAxes()));
  return call;
}
CollectiveCall describe(ExchangeOp op, MeshOp) {
  std::string shape;
  for (auto [i, extent] : llvm::enumerate(op.getShape()))
    shape += (i ? "x" : "") + std::to_string(extent);
  // The placements as the runtime reads them: `S(0),R`.
  std::string from = ::dt::joinPlacements(op.getSource().getPlacements(), ","),
              to = ::dt::joinPlacements(op.getTarget().getPlacements(), ",");
  return {"dt_rt_exchange_",
          {},
          "[" + from + "] -> [" + to + "]",
          shape + " " + from + " " + to};
}
CollectiveCall describe(LocalSliceOp op, MeshOp mesh) {
  CollectiveCall call{"dt_rt_local_slice_",
                      {static_cast<int64_t>(op.getDim())},
                      dimDetail(op.getDim())};
  call.attributes.append(unevenLayout(mesh, op.getExtent(), op.getOuterAxes()));
  return call;
}

/// "all_gather on [dp] dim 0 (model.mlir:12:8)": the op, its axes, what
/// `call` details, and where it came from (of a combined collective, the
/// first member's place and how many it combines); " #2", " #3", ... after
/// it for the second and later collectives of `module` that would read the
/// same.
std::string siteName(ModuleOp module, Operation *op, ArrayAttr axes,
                     const CollectiveCall &call) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().stripDialect() << " on [";
  llvm::interleaveComma(axes, os, [&](Attribute axis) {
    os << cast<StringAttr>(axis).getValue();
  });
  os << "] " << call.detail;
  // A combined collective (dt-combine-collectives) is named after its first
  // member's place, with how many it combines.
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc);
      fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  std::string at = sourceLocation(loc);
  auto combined = op->getAttrOfType<IntegerAttr>(DTDialect::kCombinedAttrName);
  if (!at.empty() && combined)
    os << " (" << at << ", " << combined.getInt() << " combined)";
  else if (!at.empty())
    os << " (" << at << ")";
  else if (combined)
    os << " (" << combined.getInt() << " combined)";
  std::string name = text;
  for (int n = 2; hasMessage(module, name); ++n)
    name = text + " #" + std::to_string(n);
  return name;
}

/// `buffer` itself when it is dense row-major, else a dense copy.
Value denseBuffer(OpBuilder &b, Location loc, Value buffer,
                  const BufferizationOptions &options) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getLayout().isIdentity())
    return buffer;
  auto dense = MemRefType::get(type.getShape(), type.getElementType());
  Value copy = *options.createAlloc(b, loc, dense, {});
  (void)options.createMemCpy(b, loc, buffer, copy);
  return copy;
}

template <typename OpTy>
struct CollectiveModel
    : public BufferizableOpInterface::ExternalModel<CollectiveModel<OpTy>,
                                                    OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &,
                const BufferizationState &, SmallVector<Value> &) const {
    auto type = cast<RankedTensorType>(value.getType());
    return cast<BufferLikeType>(
        MemRefType::get(type.getShape(), type.getElementType()));
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto collective = cast<OpTy>(op);
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(collective.getType());
    if (getShardingEncoding(resultType))
      return op->emitOpError("is still in global form: run dt-partition "
                             "before bufferization");
    Type element = resultType.getElementType();
    std::optional<StringRef> suffix = runtimeTypeSuffix(element);
    if (!suffix)
      return op->emitOpError("has element type ")
             << element << ", which the runtime's collectives do not support";
    auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
        op, collective.getMeshAttr());
    if (!mesh)
      return op->emitOpError("refers to no dt.mesh");
    int64_t axes = 0;
    for (Attribute name : collective.getAxes())
      axes |= int64_t(1) << *mesh.getAxisIndex(cast<StringAttr>(name));

    FailureOr<Value> input =
        getBuffer(rewriter, collective.getInput(), options, state);
    if (failed(input))
      return failure();
    Value in = denseBuffer(rewriter, loc, *input, options);
    FailureOr<Value> out = options.createAlloc(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), element), {});
    if (failed(out))
      return failure();

    CollectiveCall call = describe(collective, mesh);
    auto unranked = UnrankedMemRefType::get(element, 0);
    SmallVector<Value> args = {
        memref::CastOp::create(rewriter, loc, unranked, in),
        memref::CastOp::create(rewriter, loc, unranked, *out),
        arith::ConstantIntOp::create(rewriter, loc, axes, 32)};
    for (int64_t attribute : call.attributes)
      args.push_back(
          arith::ConstantIntOp::create(rewriter, loc, attribute, 32));
    auto module = op->template getParentOfType<ModuleOp>();
    if (call.layout)
      args.push_back(getOrInsertMessage(rewriter, module, *call.layout, loc));
    args.push_back(getOrInsertMessage(
        rewriter, module, siteName(module, op, collective.getAxes(), call),
        loc));
    // What the cost model expects one run to take (dt-price-collectives);
    // negative when it did not say.
    auto model =
        op->template getAttrOfType<FloatAttr>(DTDialect::kModelSecondsAttrName);
    args.push_back(arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF64FloatAttr(model ? model.getValueAsDouble() : -1.0)));
    SmallVector<Type> argTypes = llvm::to_vector(ValueRange(args).getTypes());
    func::FuncOp callee =
        getOrInsertRuntimeFunction(module, (call.stem + *suffix).str(),
                                   rewriter.getFunctionType(argTypes, {}));
    func::CallOp::create(rewriter, loc, callee, args);
    replaceOpWithBufferizedValues(rewriter, op, *out);
    return success();
  }
};
} // namespace

void mlir::dt::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, DTDialect *) {
    // Bufferizing a collective names its site with an LLVM global.
    ctx->getOrLoadDialect<LLVM::LLVMDialect>();
    AllReduceOp::attachInterface<CollectiveModel<AllReduceOp>>(*ctx);
    AllGatherOp::attachInterface<CollectiveModel<AllGatherOp>>(*ctx);
    ReduceScatterOp::attachInterface<CollectiveModel<ReduceScatterOp>>(*ctx);
    AllToAllOp::attachInterface<CollectiveModel<AllToAllOp>>(*ctx);
    ExchangeOp::attachInterface<CollectiveModel<ExchangeOp>>(*ctx);
    LocalSliceOp::attachInterface<CollectiveModel<LocalSliceOp>>(*ctx);
  });
}
