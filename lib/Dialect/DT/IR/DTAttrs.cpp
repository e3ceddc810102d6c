//===- DTAttrs.cpp - dt attributes ----------------------------------------===//

#include "dt/Dialect/DT/IR/DTAttrs.h"
#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Sharding/ShardLayout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dt;

#define GET_ATTRDEF_CLASSES
#include "dt/Dialect/DT/IR/DTAttrs.cpp.inc"

void DTDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dt/Dialect/DT/IR/DTAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

ParseResult mlir::dt::parseReductionKind(AsmParser &parser,
                                         ReductionKind &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<ReductionKind> parsed = ::dt::parseReductionKind(name.str());
  if (!parsed)
    return parser.emitError(loc, "unknown reduction kind '")
           << name << "'; expected sum, avg, max or min";
  kind = *parsed;
  return success();
}

void mlir::dt::printReductionKind(AsmPrinter &printer, ReductionKind kind) {
  printer << ::dt::reductionKindName(kind);
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

/// Parses `R`, `S(<dim>)`, `P` or `P(<kind>)`.
static ParseResult parsePlacement(AsmParser &parser, Placement &placement) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseOptionalKeyword(&keyword))
    return parser.emitError(loc,
                            "expected a placement: R, S(<dim>) or P(<kind>)");
  if (keyword == "R") {
    placement = Placement::replicate();
    return success();
  }
  if (keyword == "S") {
    int64_t dim = 0;
    SMLoc dimLoc;
    if (parser.parseLParen() || parser.getCurrentLocation(&dimLoc) ||
        parser.parseInteger(dim) || parser.parseRParen())
      return failure();
    if (dim < 0)
      return parser.emitError(dimLoc, "S(")
             << dim << ") names a negative tensor dim";
    placement = Placement::shard(dim);
    return success();
  }
  if (keyword == "P") {
    ReductionKind kind = ReductionKind::Sum;
    if (succeeded(parser.parseOptionalLParen()))
      if (parseReductionKind(parser, kind) || parser.parseRParen())
        return failure();
    placement = Placement::partial(kind);
    return success();
  }
  return parser.emitError(loc, "unknown placement '")
         << keyword << "'; expected R, S(<dim>) or P(<kind>)";
}

/// The innermost active capture of this thread: parsing is single-threaded
/// per parser, and captures nest like the parse calls that create them.
static thread_local ShardingTypeCapture *activeCapture = nullptr;

ShardingTypeCapture::ShardingTypeCapture() : previous(activeCapture) {
  activeCapture = this;
}

ShardingTypeCapture::~ShardingTypeCapture() { activeCapture = previous; }

bool ShardingTypeCapture::capture(Type type) {
  if (!activeCapture)
    return false;
  activeCapture->type = type;
  // Only the attribute directly in the op's syntax takes the type.
  activeCapture = activeCapture->previous;
  return true;
}

Attribute ShardingAttr::parse(AsmParser &parser, Type trailingType) {
  if (trailingType && !ShardingTypeCapture::capture(trailingType)) {
    parser.emitError(parser.getNameLoc(),
                     "a #dt.sharding has no type, but got ")
        << trailingType;
    return {};
  }
  FlatSymbolRefAttr mesh;
  SmallVector<Placement> placements;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        Placement placement = Placement::replicate();
        if (parsePlacement(parser, placement))
          return failure();
        placements.push_back(placement);
        return success();
      }))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(parser.getContext(), mesh,
                                         placements);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<" << getMesh() << ", [";
  llvm::interleaveComma(getPlacements(), printer,
                        [&](const Placement &p) { printer << p.str(); });
  printer << "]>";
}

LogicalResult
ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     FlatSymbolRefAttr mesh, ArrayRef<Placement> placements) {
  if (!mesh)
    return emitError() << "dt.sharding needs a mesh symbol";
  if (placements.empty())
    return emitError() << "dt.sharding needs one placement per mesh axis, "
                          "got none";
  for (const Placement &p : placements)
    if (p.isShard() && p.dim() < 0)
      return emitError() << p.str() << " names a negative tensor dim";
  for (auto [axis, p] : llvm::enumerate(placements))
    for (size_t other = 0; other < axis && p.isPartial(); ++other)
      if (placements[other].isPartial() &&
          !partialKindsCommute(placements[other].reduction(), p.reduction()))
        return emitError()
               << placements[other].str() << " on mesh axis " << other
               << " and " << p.str() << " on mesh axis " << axis
               << " do not commute: the global value would depend on which "
                  "is reduced first (partial axes may mix sum and avg, or "
                  "share one kind)";
  return success();
}

LogicalResult ShardingAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyShardingForTensor(*this, shape, elementType, emitError);
}

SmallVector<int64_t> ShardingAttr::getAxesShardingDim(int64_t dim) const {
  std::vector<int64_t> axes = ::dt::axesShardingDim(getPlacements(), dim);
  return SmallVector<int64_t>(axes.begin(), axes.end());
}

bool ShardingAttr::hasPartial() const {
  return llvm::any_of(getPlacements(),
                      [](const Placement &p) { return p.isPartial(); });
}

bool ShardingAttr::isReplicated() const {
  return llvm::all_of(getPlacements(),
                      [](const Placement &p) { return p.isReplicate(); });
}

ShardingAttr ShardingAttr::withPlacement(unsigned axis,
                                         Placement placement) const {
  SmallVector<Placement> placements(getPlacements());
  placements[axis] = placement;
  return ShardingAttr::get(getContext(), getMesh(), placements);
}

//===----------------------------------------------------------------------===//
// Shardings on tensor types
//===----------------------------------------------------------------------===//

ShardingAttr mlir::dt::getShardingEncoding(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  return tensorType ? dyn_cast_or_null<ShardingAttr>(tensorType.getEncoding())
                    : ShardingAttr();
}

RankedTensorType mlir::dt::withSharding(RankedTensorType type,
                                        ShardingAttr sharding) {
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               sharding);
}

/// The input language's (DESIGN.md section 3).
bool mlir::dt::isSupportedElementType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16() || type.isF64() ||
         type.isInteger(32) || type.isInteger(64) || type.isInteger(1);
}

LogicalResult
mlir::dt::verifyShardingForTensor(ShardingAttr sharding, ArrayRef<int64_t> shape,
                                  Type elementType,
                                  function_ref<InFlightDiagnostic()> emitError) {
  // The parser asks before it knows the element type is valid; it reports a
  // bad element type itself.
  if (!elementType)
    return success();
  for (auto [dim, extent] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(extent))
      return emitError() << "dt.sharding needs a static shape, but dim " << dim
                         << " is dynamic";
  if (!isSupportedElementType(elementType))
    return emitError() << "dt.sharding does not support element type "
                       << elementType
                       << "; expected f32, f16, bf16, f64, i32, i64 or i1";
  int64_t rank = shape.size();
  for (auto [axis, p] : llvm::enumerate(sharding.getPlacements())) {
    if (p.isShard() && p.dim() >= rank)
      return emitError() << p.str() << " on mesh axis " << axis
                         << " shards dim " << p.dim()
                         << ", but the tensor has rank " << rank;
    if (!p.isPartial() || isa<FloatType>(elementType))
      continue;
    // Integer partials are exact only for sum, max and min; an i1 is a
    // predicate, where only max (or) and min (and) make sense.
    bool meaningful = elementType.isInteger(1)
                          ? (p.reduction() == ReductionKind::Max ||
                             p.reduction() == ReductionKind::Min)
                          : p.reduction() != ReductionKind::Avg;
    if (!meaningful)
      return emitError() << p.str() << " on mesh axis " << axis
                         << " is not exact for element type " << elementType;
  }
  return success();
}
