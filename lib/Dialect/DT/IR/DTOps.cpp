//===- DTOps.cpp - dt operations ------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Sharding/Exchange.h"
#include "dt/Sharding/ShardLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/SmallVectorExtras.h"

using namespace mlir;
using namespace mlir::dt;

/// Prints/parses a reduction kind attribute as a bare keyword (`sum`).
static ParseResult parseReduction(OpAsmParser &parser,
                                  ReductionKindAttr &reduction) {
  ReductionKind kind;
  if (parseReductionKind(parser, kind))
    return failure();
  reduction = ReductionKindAttr::get(parser.getContext(), kind);
  return success();
}

static void printReduction(OpAsmPrinter &printer, Operation *,
                           ReductionKindAttr reduction) {
  printReductionKind(printer, reduction.getValue());
}

/// Parses `#dt.sharding<...> : type` (or `#alias : type`). MLIR's parser
/// reads a `: type` after a dialect attribute as that attribute's own type and
/// hands it to ShardingAttr::parse; `ShardingTypeCapture` collects it there.
static ParseResult parseShardingAndType(OpAsmParser &parser,
                                        ShardingAttr &sharding, Type &type) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  {
    ShardingTypeCapture capture;
    if (parser.parseAttribute(attr))
      return failure();
    type = capture.getType();
  }
  sharding = dyn_cast<ShardingAttr>(attr);
  if (!sharding)
    return parser.emitError(loc, "expected a #dt.sharding<...>, got ") << attr;
  // An alias such as `#sharding` leaves the `: type` to us.
  if (!type && (parser.parseColon() || parser.parseType(type)))
    return failure();
  return success();
}

static void printShardingAndType(OpAsmPrinter &printer, Operation *,
                                 ShardingAttr sharding, Type type) {
  printer.printAttribute(sharding);
  printer << " : " << type;
}

#define GET_OP_CLASSES
#include "dt/Dialect/DT/IR/DTOps.cpp.inc"

bool mlir::dt::syncConstantValueType(Operation *op) {
  auto constant = dyn_cast<arith::ConstantOp>(op);
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  auto type = constant ? dyn_cast<RankedTensorType>(constant.getType())
                       : RankedTensorType();
  if (!dense || !type || dense.getType().getShape() != type.getShape())
    return false;
  if (dense.getType() != type)
    constant.setValueAttr(dense.reshape(type));
  return true;
}

//===----------------------------------------------------------------------===//
// Mesh lookup
//===----------------------------------------------------------------------===//

MeshOp mlir::dt::lookupMesh(Operation *from, FlatSymbolRefAttr meshRef,
                            SymbolTableCollection &symbolTables) {
  Operation *symbol =
      symbolTables.lookupNearestSymbolFrom(from, meshRef.getAttr());
  auto mesh = dyn_cast_or_null<MeshOp>(symbol);
  if (!mesh) {
    InFlightDiagnostic diag = from->emitOpError() << meshRef;
    if (symbol)
      diag << " is a '" << symbol->getName() << "', not a dt.mesh";
    else
      diag << " does not name a dt.mesh";
  }
  return mesh;
}

LogicalResult
mlir::dt::verifyShardingMesh(ShardingAttr sharding, Operation *from,
                             SymbolTableCollection &symbolTables,
                             function_ref<InFlightDiagnostic()> emitError) {
  Operation *symbol =
      symbolTables.lookupNearestSymbolFrom(from, sharding.getMesh().getAttr());
  auto mesh = dyn_cast_or_null<MeshOp>(symbol);
  if (!mesh)
    return emitError() << "sharding " << sharding << " refers to "
                       << sharding.getMesh() << ", which is not a dt.mesh";
  size_t numPlacements = sharding.getPlacements().size();
  if (numPlacements != static_cast<size_t>(mesh.getRank()))
    return emitError() << "sharding " << sharding << " has " << numPlacements
                       << " placement" << (numPlacements == 1 ? "" : "s")
                       << ", but mesh " << sharding.getMesh() << " has "
                       << mesh.getRank() << " ax"
                       << (mesh.getRank() == 1 ? "is" : "es");
  return success();
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

ParseResult MeshOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes) ||
      parser.parseEqual() || parser.parseLess())
    return failure();
  SmallVector<Attribute> axisNames;
  SmallVector<int64_t> shape;
  auto parseAxis = [&]() -> ParseResult {
    std::string axisName;
    int64_t size = 0;
    if (parser.parseString(&axisName) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    axisNames.push_back(parser.getBuilder().getStringAttr(axisName));
    shape.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis) ||
      parser.parseGreater() ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute(getAxisNamesAttrName(result.name),
                      b.getArrayAttr(axisNames));
  result.addAttribute(getShapeAttrName(result.name),
                      b.getDenseI64ArrayAttr(shape));
  return success();
}

void MeshOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printSymbolName(getSymName());
  printer << " = <[";
  llvm::interleaveComma(llvm::zip(getAxisNames(), getShape()), printer,
                        [&](auto axis) {
                          printer << std::get<0>(axis) << " = "
                                  << std::get<1>(axis);
                        });
  printer << "]>";
  printer.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getAxisNamesAttrName(), getShapeAttrName()});
}

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> shape = getShape();
  if (shape.empty())
    return emitOpError("needs at least one axis");
  if (getAxisNames().size() != shape.size())
    return emitOpError("has ")
           << getAxisNames().size() << " axis names for " << shape.size()
           << " axis sizes";
  llvm::SmallSet<StringRef, 4> seen;
  int64_t numDevices = 1;
  for (auto [name, size] : llvm::zip(getAxisNames(), shape)) {
    StringRef axisName = cast<StringAttr>(name).getValue();
    if (axisName.empty())
      return emitOpError("has an axis with an empty name");
    if (!seen.insert(axisName).second)
      return emitOpError("has two axes named \"") << axisName << "\"";
    if (size <= 0)
      return emitOpError("axis \"")
             << axisName << "\" has size " << size << "; sizes must be > 0";
    if (llvm::MulOverflow(numDevices, size, numDevices) ||
        numDevices > std::numeric_limits<int32_t>::max())
      return emitOpError("has more than 2^31 - 1 devices");
  }
  return success();
}

int64_t MeshOp::getNumDevices() { return ::dt::meshSize(getShape()); }

std::optional<unsigned> MeshOp::getAxisIndex(StringRef name) {
  for (auto [index, axisName] : llvm::enumerate(getAxisNames()))
    if (cast<StringAttr>(axisName).getValue() == name)
      return index;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// ConstrainOp
//===----------------------------------------------------------------------===//

LogicalResult ConstrainOp::verify() {
  RankedTensorType type = getInput().getType();
  ShardingAttr current = getShardingEncoding(type);
  if (current && current != getShardingAttr())
    return emitOpError("input is already sharded as ")
           << current << "; use dt.redistribute to change a sharding";
  return verifyShardingForTensor(getShardingAttr(), type.getShape(),
                                 type.getElementType(),
                                 [&] { return emitOpError(); });
}

LogicalResult
ConstrainOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyShardingMesh(getShardingAttr(), *this, symbolTables,
                            [&] { return emitOpError(); });
}

OpFoldResult ConstrainOp::fold(FoldAdaptor) {
  // In the typed form the type already enforces the constraint.
  if (getShardingEncoding(getInput().getType()))
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// RedistributeOp
//===----------------------------------------------------------------------===//

ShardingAttr RedistributeOp::getSourceSharding() {
  return getShardingEncoding(getInput().getType());
}

ShardingAttr RedistributeOp::getTargetSharding() {
  return getShardingEncoding(getResult().getType());
}

LogicalResult RedistributeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  ShardingAttr source = getSourceSharding();
  ShardingAttr target = getTargetSharding();
  if (!source || !target)
    return emitOpError("works on global tensors: ")
           << (source ? "result" : "input") << " type "
           << (source ? resultType : inputType)
           << " has no #dt.sharding encoding";
  if (inputType.getShape() != resultType.getShape() ||
      inputType.getElementType() != resultType.getElementType())
    return emitOpError("changes only the sharding, but the input is ")
           << inputType << " and the result " << resultType;
  if (source.getMesh() != target.getMesh())
    return emitOpError("cannot move a tensor from mesh ")
           << source.getMesh() << " to mesh " << target.getMesh();
  return success();
}

OpFoldResult RedistributeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  auto producer = getInput().getDefiningOp<RedistributeOp>();
  if (!producer)
    return {};
  // A -> B -> A is the identity whatever else uses B.
  if (producer.getInput().getType() == getResult().getType())
    return producer.getInput();
  // A -> B -> C becomes A -> C when nothing else needs B: the planner's
  // route for A -> C is never costlier than the two steps.
  if (!producer->hasOneUse())
    return {};
  getInputMutable().assign(producer.getInput());
  return getResult();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
/// The ranks a collective works on: the mesh and the axes of the group.
struct CollectiveGroup {
  MeshOp mesh;
  SmallVector<int64_t> axes; // In increasing mesh order.
  int64_t size = 1;          // Ranks per group.
};

/// What a collective does, in the terms both of its forms are checked in.
struct CollectiveRule {
  /// Global form: the input's placement on every group axis, and the result's.
  Placement from = Placement::replicate();
  Placement to = Placement::replicate();
  /// Global form: the group axes must be the last axes sharding this dim of
  /// the input (resp. the result), so pieces concatenate in group order.
  std::optional<int64_t> innermostInputDim, innermostResultDim;
  /// Local form: the result's shape given the input's and the group size.
  function_ref<SmallVector<int64_t>(ArrayRef<int64_t>, int64_t)> localShape;
  /// The tensor dims the op names; checked before anything uses them.
  SmallVector<int64_t, 2> dims;
};
} // namespace

static FailureOr<CollectiveGroup>
resolveGroup(Operation *op, FlatSymbolRefAttr meshRef, ArrayAttr axes,
             SymbolTableCollection &symbolTables) {
  CollectiveGroup group;
  group.mesh = lookupMesh(op, meshRef, symbolTables);
  if (!group.mesh)
    return failure();
  if (axes.empty())
    return op->emitOpError("needs at least one mesh axis");
  for (Attribute axis : axes) {
    StringRef name = cast<StringAttr>(axis).getValue();
    std::optional<unsigned> index = group.mesh.getAxisIndex(name);
    if (!index)
      return op->emitOpError("mesh ")
             << meshRef << " has no axis named \"" << name << "\"";
    if (!group.axes.empty() && *index <= group.axes.back())
      return op->emitOpError("lists mesh axes ")
             << axes << " out of mesh order or twice; expected increasing "
             << "mesh order";
    group.axes.push_back(*index);
    group.size *= group.mesh.getShape()[*index];
  }
  return group;
}

/// Checks that `groupAxes` are the last axes that shard `dim` in `sharding`.
/// An axis of size 1 splits nothing, so where it sits in the nesting changes
/// no rank's piece: such axes are left out on both sides.
static LogicalResult verifyInnermost(Operation *op, StringRef which,
                                     MeshOp mesh, ShardingAttr sharding,
                                     int64_t dim, ArrayRef<int64_t> groupAxes) {
  auto splits = [&](int64_t axis) { return mesh.getShape()[axis] != 1; };
  SmallVector<int64_t> all =
      llvm::filter_to_vector(sharding.getAxesShardingDim(dim), splits);
  SmallVector<int64_t> group = llvm::filter_to_vector(groupAxes, splits);
  if (ArrayRef<int64_t>(all).take_back(std::min(all.size(), group.size())) ==
      ArrayRef<int64_t>(group))
    return success();
  return op->emitOpError("group axes must be the last mesh axes sharding dim ")
         << dim << " of the " << which << ", but it is " << sharding;
}

static LogicalResult verifyGlobalForm(Operation *op, const CollectiveGroup &group,
                                      FlatSymbolRefAttr meshRef,
                                      RankedTensorType inputType,
                                      RankedTensorType resultType,
                                      const CollectiveRule &rule) {
  ShardingAttr in = getShardingEncoding(inputType), out = getShardingEncoding(resultType);
  if (in.getMesh() != meshRef || out.getMesh() != meshRef)
    return op->emitOpError("runs on mesh ")
           << meshRef << ", but its types are sharded over " << in.getMesh()
           << " and " << out.getMesh();
  if (inputType.getShape() != resultType.getShape())
    return op->emitOpError("on global tensors keeps the global shape, but ")
           << inputType << " becomes " << resultType;
  MeshOp mesh = group.mesh;
  int64_t meshRank = mesh.getRank();
  if (static_cast<int64_t>(in.getPlacements().size()) != meshRank ||
      static_cast<int64_t>(out.getPlacements().size()) != meshRank)
    return op->emitOpError("shardings need one placement per axis of mesh ")
           << meshRef;
  for (int64_t axis = 0; axis < meshRank; ++axis) {
    Placement before = in.getPlacements()[axis];
    Placement after = out.getPlacements()[axis];
    StringRef name = cast<StringAttr>(mesh.getAxisNames()[axis]).getValue();
    if (!llvm::is_contained(group.axes, axis)) {
      if (before != after)
        return op->emitOpError("mesh axis \"")
               << name << "\" is not in the group, so its placement must stay "
               << before.str() << ", but the result has " << after.str();
      continue;
    }
    if (before != rule.from || after != rule.to)
      return op->emitOpError("on mesh axis \"")
             << name << "\" turns " << rule.from.str() << " into "
             << rule.to.str() << ", but the input has " << before.str()
             << " and the result " << after.str();
  }
  if (rule.innermostInputDim &&
      failed(verifyInnermost(op, "input", mesh, in, *rule.innermostInputDim,
                             group.axes)))
    return failure();
  if (rule.innermostResultDim &&
      failed(verifyInnermost(op, "result", mesh, out, *rule.innermostResultDim,
                             group.axes)))
    return failure();
  return success();
}

/// Checks a collective in either form against `rule`; returns its group.
static FailureOr<CollectiveGroup>
verifyCollective(Operation *op, FlatSymbolRefAttr meshRef, ArrayAttr axes,
                 SymbolTableCollection &symbolTables,
                 const CollectiveRule &rule) {
  auto inputType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  for (int64_t dim : rule.dims)
    if (dim < 0 || dim >= inputType.getRank())
      return op->emitOpError("dim ")
             << dim << " is out of range for a tensor of rank "
             << inputType.getRank();
  FailureOr<CollectiveGroup> group =
      resolveGroup(op, meshRef, axes, symbolTables);
  if (failed(group))
    return failure();
  if (inputType.getElementType() != resultType.getElementType())
    return op->emitOpError("keeps the element type, but ")
           << inputType << " becomes " << resultType;
  bool inGlobal = getShardingEncoding(inputType) != nullptr;
  bool outGlobal = getShardingEncoding(resultType) != nullptr;
  if (inGlobal != outGlobal)
    return op->emitOpError("needs both types sharded (global form) or neither "
                           "(local form), but got ")
           << inputType << " and " << resultType;
  if (inGlobal) {
    if (failed(
            verifyGlobalForm(op, *group, meshRef, inputType, resultType, rule)))
      return failure();
    return group;
  }

  SmallVector<int64_t> expected =
      rule.localShape(inputType.getShape(), group->size);
  if (ArrayRef<int64_t>(expected) != resultType.getShape())
    return op->emitOpError("on local tensors over a group of ")
           << group->size << " ranks turns " << inputType << " into shape ["
           << ArrayRef<int64_t>(expected) << "], but the result is "
           << resultType;
  return group;
}

/// The largest piece of `extent` elements split over mesh `axes` in mesh
/// order (torch.chunk at each level).
static int64_t nestedChunk(MeshOp mesh, int64_t extent,
                           ArrayRef<int64_t> axes) {
  std::vector<Placement> placements(mesh.getRank(), Placement::replicate());
  for (int64_t axis : axes)
    placements[axis] = Placement::shard(0);
  std::vector<int64_t> shape = {extent};
  return ::dt::maxLocalShape(shape, mesh.getShape(), placements)[0];
}

/// The uneven layout a local collective carries for `dim`: `extent` (the
/// global extent) and `outerAxes` (axes splitting the dim outside the
/// group). A packing collective's input holds pieces of the full split; a
/// splitting one's input holds the outer piece and its result the full
/// split.
static LogicalResult verifyUnevenLayout(Operation *op, CollectiveGroup group,
                                        std::optional<int64_t> extent,
                                        std::optional<ArrayAttr> outerAxes,
                                        int64_t dim, bool packs) {
  if (!extent) {
    if (outerAxes)
      return op->emitOpError("has outer_axes without an extent");
    return success();
  }
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  if (getShardingEncoding(input))
    return op->emitOpError("has an extent only in local form; the global "
                           "form's types give it");
  SmallVector<int64_t> outer;
  for (Attribute axis : outerAxes ? outerAxes->getValue() : ArrayRef<Attribute>()) {
    std::optional<unsigned> index =
        group.mesh.getAxisIndex(cast<StringAttr>(axis).getValue());
    if (!index || llvm::is_contained(group.axes, *index))
      return op->emitOpError("outer axis ")
             << axis << " is not a mesh axis outside the group";
    outer.push_back(*index);
  }
  SmallVector<int64_t> all = outer;
  all.append(group.axes);
  llvm::sort(all);
  int64_t piece = nestedChunk(group.mesh, *extent, all);
  int64_t region = nestedChunk(group.mesh, *extent, outer);
  if (*extent < 0)
    return op->emitOpError("has a negative extent");
  if (packs && outer.empty() && piece != input.getDimSize(dim)) {
    int64_t have = input.getDimSize(dim);
    return op->emitOpError("has extent ")
           << *extent << ", but pieces of " << have << " over " << group.size
           << " ranks hold between " << (have - 1) * group.size + 1
           << " and " << result.getDimSize(dim) << " elements";
  }
  int64_t expectedIn = packs ? piece : region;
  int64_t expectedOut = packs ? piece * group.size : piece;
  if (input.getDimSize(dim) != expectedIn ||
      result.getDimSize(dim) != expectedOut)
    return op->emitOpError("splits extent ")
           << *extent << " into pieces of " << piece << " (outer pieces of "
           << region << "), so dim " << dim << " should go from "
           << expectedIn << " to " << expectedOut << ", but it goes from "
           << input.getDimSize(dim) << " to " << result.getDimSize(dim);
  return success();
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &tables) {
  int64_t dim = getDim();
  auto localShape = [&](ArrayRef<int64_t> in, int64_t groupSize) {
    SmallVector<int64_t> out(in);
    out[dim] *= groupSize;
    return out;
  };
  CollectiveRule rule{Placement::shard(dim), Placement::replicate(), dim,
                      std::nullopt, localShape, {dim}};
  FailureOr<CollectiveGroup> group =
      verifyCollective(*this, getMeshAttr(), getAxes(), tables, rule);
  if (failed(group))
    return failure();
  return verifyUnevenLayout(*this, *group, getExtent(), getOuterAxes(), dim,
                            /*packs=*/true);
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto localShape = [](ArrayRef<int64_t> in, int64_t) {
    return SmallVector<int64_t>(in);
  };
  CollectiveRule rule{Placement::partial(getReduction().getValue()),
                      Placement::replicate(), std::nullopt, std::nullopt,
                      localShape, {}};
  return success(succeeded(
      verifyCollective(*this, getMeshAttr(), getAxes(), tables, rule)));
}

/// The local shape after keeping one piece of `dim` split over the group.
static SmallVector<int64_t> scatteredShape(ArrayRef<int64_t> in, int64_t dim,
                                           int64_t groupSize) {
  SmallVector<int64_t> out(in);
  out[dim] = ::dt::chunkSize(in[dim], groupSize);
  return out;
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &tables) {
  int64_t dim = getDim();
  auto localShape = [&](ArrayRef<int64_t> in, int64_t groupSize) {
    return scatteredShape(in, dim, groupSize);
  };
  CollectiveRule rule{Placement::partial(getReduction().getValue()),
                      Placement::shard(dim), std::nullopt, dim, localShape,
                      {dim}};
  FailureOr<CollectiveGroup> group =
      verifyCollective(*this, getMeshAttr(), getAxes(), tables, rule);
  if (failed(group))
    return failure();
  return verifyUnevenLayout(*this, *group, getExtent(), getOuterAxes(), dim,
                            /*packs=*/false);
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &tables) {
  int64_t splitDim = getSplitDim(), concatDim = getConcatDim();
  if (splitDim == concatDim)
    return emitOpError("splits and concatenates the same dim ")
           << splitDim << "; that moves nothing";
  auto localShape = [&](ArrayRef<int64_t> in, int64_t groupSize) {
    SmallVector<int64_t> out = scatteredShape(in, splitDim, groupSize);
    out[concatDim] *= groupSize;
    return out;
  };
  CollectiveRule rule{Placement::shard(concatDim), Placement::shard(splitDim),
                      concatDim, splitDim, localShape, {splitDim, concatDim}};
  FailureOr<CollectiveGroup> group =
      verifyCollective(*this, getMeshAttr(), getAxes(), tables, rule);
  if (failed(group) ||
      failed(verifyUnevenLayout(*this, *group, getExtent(), getOuterAxes(),
                                concatDim, /*packs=*/true)))
    return failure();
  return verifyUnevenLayout(*this, *group, getSplitExtent(),
                            getSplitOuterAxes(), splitDim, /*packs=*/false);
}

LogicalResult ExchangeOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getType());
  ShardingAttr source = getSource(), target = getTarget();
  FailureOr<CollectiveGroup> group =
      resolveGroup(*this, getMeshAttr(), getAxes(), tables);
  if (failed(group))
    return failure();
  auto emit = [&]() { return emitOpError(); };
  for (ShardingAttr sharding : {source, target}) {
    if (sharding.getMesh() != getMeshAttr())
      return emitOpError("runs on mesh ")
             << getMeshAttr() << ", but " << sharding << " is over "
             << sharding.getMesh();
    if (failed(verifyShardingMesh(sharding, *this, tables, emit)) ||
        failed(verifyShardingForTensor(sharding, getShape(),
                                       inputType.getElementType(), emit)))
      return failure();
  }
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("keeps the element type, but ")
           << inputType << " becomes " << resultType;
  ArrayRef<int64_t> meshShape = group->mesh.getShape();
  ArrayRef<Placement> from = source.getPlacements(),
                      to = target.getPlacements();
  for (auto [axis, before, after] : llvm::enumerate(from, to))
    if ((before.isPartial() || after.isPartial()) && before != after)
      return emitOpError("moves pieces but reduces nothing, so mesh axis \"")
             << cast<StringAttr>(group->mesh.getAxisNames()[axis]).getValue()
             << "\" must keep its partial placement, but " << before.str()
             << " becomes " << after.str();
  std::vector<int64_t> axes = ::dt::exchangeAxes(meshShape, from, to);
  if (ArrayRef<int64_t>(axes) != ArrayRef<int64_t>(group->axes)) {
    InFlightDiagnostic diag = emitOpError("trades parts over mesh axes [");
    llvm::interleaveComma(axes, diag, [&](int64_t axis) {
      diag << group->mesh.getAxisNames()[axis];
    });
    return diag << "], but lists " << getAxes();
  }
  bool inGlobal = getShardingEncoding(inputType) != nullptr;
  if (inGlobal != (getShardingEncoding(resultType) != nullptr))
    return emitOpError("needs both types sharded (global form) or neither "
                       "(local form), but got ")
           << inputType << " and " << resultType;
  auto expect = [&](StringRef which, RankedTensorType type,
                    ShardingAttr sharding) -> LogicalResult {
    SmallVector<int64_t> shape(getShape());
    if (!inGlobal)
      shape = llvm::to_vector(
          ::dt::maxLocalShape(getShape(), meshShape, sharding.getPlacements()));
    if (inGlobal && getShardingEncoding(type) != sharding)
      return emitOpError("expects the ")
             << which << " sharded as " << sharding << ", but it is " << type;
    if (type.getShape() == ArrayRef<int64_t>(shape))
      return success();
    InFlightDiagnostic diag = emitOpError("expects the ")
                              << which << " of shape ["
                              << ArrayRef<int64_t>(shape) << "]";
    if (!inGlobal)
      diag << " (the largest piece of [" << getShape() << "] as " << sharding
           << ")";
    return diag << ", but it is " << type;
  };
  if (failed(expect("input", inputType, source)))
    return failure();
  return expect("result", resultType, target);
}

LogicalResult LocalSliceOp::verifySymbolUses(SymbolTableCollection &tables) {
  int64_t dim = getDim();
  auto localShape = [&](ArrayRef<int64_t> in, int64_t groupSize) {
    return scatteredShape(in, dim, groupSize);
  };
  CollectiveRule rule{Placement::replicate(), Placement::shard(dim),
                      std::nullopt, dim, localShape, {dim}};
  FailureOr<CollectiveGroup> group =
      verifyCollective(*this, getMeshAttr(), getAxes(), tables, rule);
  if (failed(group))
    return failure();
  return verifyUnevenLayout(*this, *group, getExtent(), getOuterAxes(), dim,
                            /*packs=*/false);
}

LogicalResult ToPartialOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto localShape = [](ArrayRef<int64_t> in, int64_t) {
    return SmallVector<int64_t>(in);
  };
  CollectiveRule rule{Placement::replicate(),
                      Placement::partial(getReduction().getValue()),
                      std::nullopt, std::nullopt, localShape, {}};
  return success(succeeded(
      verifyCollective(*this, getMeshAttr(), getAxes(), tables, rule)));
}

//===----------------------------------------------------------------------===//
// AxisIndexOp
//===----------------------------------------------------------------------===//

LogicalResult AxisIndexOp::verifySymbolUses(SymbolTableCollection &tables) {
  MeshOp mesh = lookupMesh(*this, getMeshAttr(), tables);
  if (!mesh)
    return failure();
  if (!mesh.getAxisIndex(getAxis()))
    return emitOpError("mesh ")
           << getMeshAttr() << " has no axis named \"" << getAxis() << "\"";
  return success();
}

//===----------------------------------------------------------------------===//
// BoundsCheckOp
//===----------------------------------------------------------------------===//

LogicalResult BoundsCheckOp::verify() {
  if (getBound() <= 0)
    return emitOpError("bound must be positive, got ") << getBound();
  return success();
}
