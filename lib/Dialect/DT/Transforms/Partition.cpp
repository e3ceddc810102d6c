//===- Partition.cpp - dt-partition ---------------------------------------===//
//
// Global program -> the SPMD program of one rank. Every tensor type becomes
// the type of the local shard; ops whose attributes carry sizes get local
// sizes; the few ops whose meaning depends on where the shard lies get the
// rank's coordinates through dt.axis_index.
//
// Uneven shards (torch.chunk) are padded to the chunk size. Padding holds
// unspecified values, which elementwise work leaves where they are; the two
// places where padding could reach valid data are made safe here: a
// reduction over an unevenly split dim skips the padded iterations (a
// matmul's operands are zeroed there, so it stays a BLAS call), and an
// all_gather or all_to_all of uneven pieces is told the valid extent, packs
// the valid elements first, and is sliced back to the global extent. A dim
// split unevenly by several axes has rank-dependent pieces at each level;
// offsets and valid sizes are computed level by level from dt.axis_index,
// and collectives name the outer levels (`outer_axes`) for the runtime.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"
#include "dt/Sharding/ShardLayout.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::dt {
#define GEN_PASS_DEF_PARTITIONPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;

namespace {
/// Partitions one function over one mesh.
class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, MeshOp mesh, bool explain)
      : func(func), mesh(mesh), shape(mesh.getShape()), explain(explain) {}

  LogicalResult run();

private:
  /// The local type of a global tensor type; `type` itself when it has no
  /// sharding. Fails (with a diagnostic at `at`) on an uneven sharding.
  FailureOr<Type> localType(Type type, Operation *at);
  LogicalResult offsetIndices(linalg::LinalgOp op);
  /// The mesh axes that split dim `dim` of `type` unevenly (in split
  /// order), or none when the dim is whole or evenly split.
  SmallVector<int64_t> unevenAxes(RankedTensorType type, int64_t dim);
  /// Where this rank's piece of `extent` elements split over `axes` (mesh
  /// order, torch.chunk at each level) starts, and how many elements it
  /// holds (the rest of its padded piece is padding).
  std::pair<Value, Value> unevenPiece(OpBuilder &b, Location loc,
                                      ArrayRef<int64_t> axes, int64_t extent);
  LogicalResult maskUnevenReductions(linalg::LinalgOp op);
  void localizeExtract(tensor::ExtractOp extract);
  LogicalResult prepareCollective(Operation *op);
  /// After retyping: a gather or all_to_all that packs uneven pieces along
  /// `dim` gets its padded local result, sliced to the valid extent.
  void padPacked(Operation *op, int64_t dim);
  void lowerToPartial(ToPartialOp op);
  /// The size of the mesh axis named `name`.
  int64_t axisSize(Attribute name) {
    return shape[*mesh.getAxisIndex(cast<StringAttr>(name).getValue())];
  }
  /// How many ranks the group of collective `op` (its `axes`) holds.
  int64_t groupSize(Operation *op) {
    int64_t size = 1;
    for (Attribute axis : op->getAttrOfType<ArrayAttr>("axes"))
      size *= axisSize(axis);
    return size;
  }
  /// A collective within a group of one rank (its axes all of size 1) moves
  /// nothing: its input replaces it.
  void dropOneRankCollectives();
  LogicalResult localizeAttributes(Operation *op);

  func::FuncOp func;
  MeshOp mesh;
  ArrayRef<int64_t> shape;
  /// Whether ops summing over an unevenly split dim get a remark.
  bool explain;
};
} // namespace

FailureOr<Type> FunctionPartitioner::localType(Type type, Operation *) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  ShardingAttr sharding = getShardingEncoding(type);
  if (!tensor || !sharding)
    return type;
  std::vector<int64_t> local = ::dt::maxLocalShape(
      tensor.getShape(), shape, sharding.getPlacements());
  return Type(RankedTensorType::get(local, tensor.getElementType()));
}

SmallVector<int64_t> FunctionPartitioner::unevenAxes(RankedTensorType type,
                                                     int64_t dim) {
  ShardingAttr sharding = getShardingEncoding(type);
  if (!sharding)
    return {};
  SmallVector<int64_t> axes = sharding.getAxesShardingDim(dim);
  if (axes.empty() || ::dt::isEvenlySharded(type.getShape(), shape,
                                             sharding.getPlacements()))
    return {};
  // Even at every level of this dim's split?
  std::vector<Placement> only(shape.size(), Placement::replicate());
  for (int64_t axis : axes)
    only[axis] = Placement::shard(0);
  std::vector<int64_t> extent = {type.getDimSize(dim)};
  if (::dt::isEvenlySharded(extent, shape, only))
    return {};
  return axes;
}

std::pair<Value, Value>
FunctionPartitioner::unevenPiece(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> axes, int64_t extent) {
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Level by level: chunk = ceil(size / n), start = coord * chunk,
  // size = clamp(size - start, 0, chunk).
  Value offset = constant(0), size = constant(extent);
  for (int64_t axis : axes) {
    Value coord = AxisIndexOp::create(
        b, loc, FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
        cast<StringAttr>(mesh.getAxisNames()[axis]));
    Value chunk =
        arith::CeilDivSIOp::create(b, loc, size, constant(shape[axis]));
    Value start = arith::MulIOp::create(b, loc, coord, chunk);
    Value rest = arith::SubIOp::create(b, loc, size, start);
    Value positive = arith::MaxSIOp::create(b, loc, rest, constant(0));
    size = arith::MinSIOp::create(b, loc, positive, chunk);
    offset = arith::AddIOp::create(b, loc, offset, start);
  }
  return {offset, size};
}

/// The rank's offset along a loop dim that mesh axes `axes` split (in mesh
/// order) into pieces of `localExtent`: the linear index of its coordinates
/// on those axes, times the piece.
static Value shardOffset(OpBuilder &b, Location loc, MeshOp mesh,
                         ArrayRef<int64_t> axes, int64_t localExtent) {
  Value offset;
  for (int64_t axis : axes) {
    auto name = cast<StringAttr>(mesh.getAxisNames()[axis]);
    Value coord = AxisIndexOp::create(
        b, loc, FlatSymbolRefAttr::get(mesh.getSymNameAttr()), name);
    if (!offset) {
      offset = coord;
      continue;
    }
    Value size = arith::ConstantIndexOp::create(b, loc, mesh.getShape()[axis]);
    offset = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, offset, size), coord);
  }
  Value piece = arith::ConstantIndexOp::create(b, loc, localExtent);
  return arith::MulIOp::create(b, loc, offset, piece);
}

LogicalResult FunctionPartitioner::offsetIndices(linalg::LinalgOp op) {
  SmallVector<linalg::IndexOp> indices;
  op->walk([&](linalg::IndexOp index) { indices.push_back(index); });
  if (indices.empty())
    return success();
  // Which mesh axes split each loop: read from any tensor dim the loop
  // indexes directly, in its global sharding.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (linalg::IndexOp index : indices) {
    int64_t loop = index.getDim();
    SmallVector<int64_t> axes;
    int64_t localExtent = 0, globalExtent = 0;
    bool uneven = false;
    for (OpOperand &operand : op->getOpOperands()) {
      ShardingAttr sharding = getShardingEncoding(operand.get().getType());
      if (!sharding)
        continue;
      AffineMap map = maps[operand.getOperandNumber()];
      for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
        auto d = dyn_cast<AffineDimExpr>(expr);
        if (!d || d.getPosition() != loop)
          continue;
        axes = sharding.getAxesShardingDim(dim);
        auto tensor = cast<RankedTensorType>(operand.get().getType());
        globalExtent = tensor.getDimSize(dim);
        uneven = !unevenAxes(tensor, dim).empty();
        localExtent = ::dt::maxLocalShape(tensor.getShape(), shape,
                                          sharding.getPlacements())[dim];
      }
    }
    if (axes.empty())
      continue;
    // The offset is the same for every iteration: compute it before the op.
    // A dim split unevenly by several axes has rank-dependent chunks.
    OpBuilder b(op);
    Value offset =
        axes.size() > 1 && uneven
            ? unevenPiece(b, index.getLoc(), axes, globalExtent).first
            : shardOffset(b, index.getLoc(), mesh, axes, localExtent);
    b.setInsertionPointAfter(index);
    Value global = arith::AddIOp::create(b, index.getLoc(), index, offset);
    index.getResult().replaceAllUsesExcept(global, global.getDefiningOp());
  }
  return success();
}

/// A read of one element, at global indices, of a sharded tensor (a split
/// gather's table) reads the local piece at indices relative to it, and zero
/// where the element lies in another rank's piece: the partial sums of the
/// gather add up to the element.
void FunctionPartitioner::localizeExtract(tensor::ExtractOp extract) {
  RankedTensorType type = extract.getTensor().getType();
  ShardingAttr sharding = getShardingEncoding(type);
  if (!sharding)
    return;
  // Where this rank's piece lies is the same for every element: work it out
  // before the outermost linalg op around the read.
  Operation *outside = extract;
  while (auto parent = outside->getParentOfType<linalg::LinalgOp>())
    outside = parent;
  OpBuilder before(outside);
  OpBuilder b(extract);
  Location loc = extract.getLoc();
  SmallVector<Value> indices(extract.getIndices());
  SmallVector<int64_t> shardedDims;
  Value inside;
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    SmallVector<int64_t> axes = sharding.getAxesShardingDim(dim);
    if (axes.empty())
      continue;
    Value offset, valid;
    if (unevenAxes(type, dim).empty()) {
      int64_t localExtent = ::dt::maxLocalShape(type.getShape(), shape,
                                                sharding.getPlacements())[dim];
      offset = shardOffset(before, loc, mesh, axes, localExtent);
      valid = arith::ConstantIndexOp::create(before, loc, localExtent);
    } else {
      std::tie(offset, valid) =
          unevenPiece(before, loc, axes, type.getDimSize(dim));
    }
    indices[dim] = arith::SubIOp::create(b, loc, indices[dim], offset);
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     indices[dim], valid);
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
    shardedDims.push_back(dim);
  }
  if (!inside)
    return;
  Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t dim : shardedDims)
    indices[dim] =
        arith::SelectOp::create(b, loc, inside, indices[dim], zeroIndex);
  extract.getIndicesMutable().assign(indices);
  b.setInsertionPointAfter(extract);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  Value kept = arith::SelectOp::create(b, loc, inside, extract, zero);
  extract.getResult().replaceAllUsesExcept(kept, kept.getDefiningOp());
}

/// `value` (a tensor with the global type) with the elements at or beyond
/// `valid` along `dim` replaced by zeros.
static Value zeroPadding(OpBuilder &b, Location loc, Value value, int64_t dim,
                         Value valid) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{value}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value index = linalg::IndexOp::create(nb, nloc, dim);
        Value inside = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::ult, index, valid);
        Value zero = arith::ConstantOp::create(
            nb, nloc, nb.getZeroAttr(type.getElementType()));
        Value kept = arith::SelectOp::create(nb, nloc, inside, args[0], zero);
        linalg::YieldOp::create(nb, nloc, kept);
      });
  return generic.getResult(0);
}

/// Whether zeroing the padding of `op`'s operands along the `uneven` loops
/// makes the padded iterations add nothing: `op` multiplies its two inputs
/// and accumulates (a contraction, a convolution, an adjoint), and each
/// input reads each such loop as a dim of its own, so each padded product
/// has two zero factors (and none that is not zeroed: 0 * inf).
static bool zeroesAddNothing(linalg::LinalgOp op,
                             const llvm::MapVector<int64_t, Value> &uneven) {
  if (!isMultiplyAccumulate(op))
    return false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto &entry : uneven)
      if (!map.getResultPosition(
              getAffineDimExpr(entry.first, op->getContext())))
        return false;
  }
  return true;
}

LogicalResult FunctionPartitioner::maskUnevenReductions(linalg::LinalgOp op) {
  // The reduction loops that run over an unevenly split tensor dim.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  // loop -> (axes, extent)
  llvm::MapVector<int64_t, std::pair<SmallVector<int64_t>, int64_t>> uneven;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type)
      continue;
    AffineMap map = maps[input->getOperandNumber()];
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop || iterators[loop.getPosition()] != utils::IteratorType::reduction)
        continue;
      SmallVector<int64_t> axes = unevenAxes(type, dim);
      if (!axes.empty())
        uneven[loop.getPosition()] = {axes, type.getDimSize(dim)};
    }
  }
  if (uneven.empty())
    return success();

  OpBuilder b(op);
  Location loc = op.getLoc();
  llvm::MapVector<int64_t, Value> valid;
  for (auto &[loop, axesExtent] : uneven)
    valid[loop] =
        unevenPiece(b, loc, axesExtent.first, axesExtent.second).second;

  bool zeroes = zeroesAddNothing(op, valid);
  if (explain) {
    InFlightDiagnostic remark = op.emitRemark()
                                << op->getName() << " sums over ";
    llvm::interleaveComma(uneven, remark, [&](auto &entry) {
      auto &[loop, axesExtent] = entry;
      remark << "loop d" << loop << " (" << axesExtent.second
             << ", split unevenly over ";
      llvm::interleaveComma(axesExtent.first, remark, [&](int64_t axis) {
        remark << "\"" << cast<StringAttr>(mesh.getAxisNames()[axis]).getValue()
               << "\"";
      });
      remark << ")";
    });
    if (zeroes)
      remark << ": both inputs' padding zeroed first, so it keeps its body "
                "and can be a library call";
    else
      remark << ": its body skips the padded iterations"
             << (isMultiplyAccumulate(op)
                     ? " (an input does not run over that loop: zeroing "
                       "the other's padding could multiply 0 by inf), so it "
                       "stays loops"
                     : "");
  }
  if (zeroes) {
    // out += a * b: zero both operands' padding (it may hold NaNs), and the
    // padded products add nothing. The op keeps its body, so it can still
    // become a library call.
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = maps[input->getOperandNumber()];
      for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
        auto loop = dyn_cast<AffineDimExpr>(expr);
        if (loop && valid.count(loop.getPosition()))
          input->set(zeroPadding(b, loc, input->get(), dim,
                                 valid[loop.getPosition()]));
      }
    }
    return success();
  }

  // Any other reduction: skip the padded iterations in the body.
  auto generic = dyn_cast<linalg::GenericOp>(*op);
  if (!generic) {
    IRRewriter rewriter(b);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op->emitOpError("reduces over an unevenly split dim and cannot "
                             "be written as a linalg.generic to mask it");
    generic = *generalized;
  }
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  b.setInsertionPoint(yield);
  Value inside;
  for (auto [loop, extent] : valid) {
    Value index = linalg::IndexOp::create(b, loc, loop);
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, extent);
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
  }
  unsigned firstInit = generic.getNumDpsInputs();
  for (OpOperand &yielded : yield->getOpOperands()) {
    Value accumulator = body.getArgument(firstInit + yielded.getOperandNumber());
    yielded.set(
        arith::SelectOp::create(b, loc, inside, yielded.get(), accumulator));
  }
  return success();
}

/// The names of the axes of `mesh` in `axes` that are not in `group`.
static ArrayAttr outerAxesOf(MeshOp mesh, ArrayRef<int64_t> axes,
                             ArrayAttr group) {
  SmallVector<Attribute> outer;
  for (int64_t axis : axes) {
    Attribute name = mesh.getAxisNames()[axis];
    if (!llvm::is_contained(group, name))
      outer.push_back(name);
  }
  return ArrayAttr::get(mesh.getContext(), outer);
}

LogicalResult FunctionPartitioner::prepareCollective(Operation *op) {
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  auto group = op->getAttrOfType<ArrayAttr>("axes");
  Builder b(op->getContext());
  // Records the uneven layout of `dim` (split by `axes`) on the op.
  auto annotate = [&](ArrayRef<int64_t> axes, int64_t extent) {
    ArrayAttr outer = outerAxesOf(mesh, axes, group);
    op->setAttr("extent", b.getI64IntegerAttr(extent));
    if (!outer.empty())
      op->setAttr("outer_axes", outer);
  };
  if (auto gather = dyn_cast<AllGatherOp>(op)) {
    int64_t dim = gather.getDim();
    SmallVector<int64_t> axes = unevenAxes(input, dim);
    if (!axes.empty())
      annotate(axes, input.getDimSize(dim));
    return success();
  }
  if (isa<ReduceScatterOp, LocalSliceOp>(op)) {
    // The runtime cuts the pieces the layout gives (level by level), not a
    // flat torch.chunk of the input over the whole group.
    int64_t dim = op->getAttrOfType<IntegerAttr>("dim").getInt();
    SmallVector<int64_t> axes = unevenAxes(result, dim);
    if (!axes.empty())
      annotate(axes, result.getDimSize(dim));
    return success();
  }
  auto toAll = cast<AllToAllOp>(op);
  int64_t concat = toAll.getConcatDim(), split = toAll.getSplitDim();
  SmallVector<int64_t> concatAxes = unevenAxes(input, concat);
  if (!concatAxes.empty()) {
    toAll.setExtent(input.getDimSize(concat));
    ArrayAttr outer = outerAxesOf(mesh, concatAxes, group);
    if (!outer.empty())
      toAll.setOuterAxesAttr(outer);
  }
  SmallVector<int64_t> splitAxes = unevenAxes(result, split);
  if (!splitAxes.empty()) {
    toAll.setSplitExtent(result.getDimSize(split));
    ArrayAttr outer = outerAxesOf(mesh, splitAxes, group);
    if (!outer.empty())
      toAll.setSplitOuterAxesAttr(outer);
  }
  return success();
}

void FunctionPartitioner::padPacked(Operation *op, int64_t dim) {
  // The local result holds the group's padded pieces along `dim`; the valid
  // extent comes first and is what the rest of the program sees.
  Value result = op->getResult(0);
  auto local = cast<RankedTensorType>(result.getType());
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  SmallVector<int64_t> padded(local.getShape());
  padded[dim] = input.getDimSize(dim) * groupSize(op);
  result.setType(RankedTensorType::get(padded, local.getElementType()));
  OpBuilder b(op);
  b.setInsertionPointAfter(op);
  SmallVector<int64_t> offsets(local.getRank(), 0), strides(local.getRank(), 1);
  auto slice = tensor::ExtractSliceOp::create(
      b, op->getLoc(), local, result, ValueRange{}, ValueRange{}, ValueRange{},
      offsets, local.getShape(), strides);
  result.replaceAllUsesExcept(slice.getResult(), slice);
}

void FunctionPartitioner::lowerToPartial(ToPartialOp op) {
  // The first rank of each group keeps the value; the others hold zeros
  // (an axis of one rank has only its first).
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value first;
  for (Attribute axis : op.getAxes()) {
    if (op.getReduction().getValue() != ::dt::ReductionKind::Sum ||
        axisSize(axis) == 1)
      continue;
    Value coord =
        AxisIndexOp::create(b, loc, op.getMeshAttr(), cast<StringAttr>(axis));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, coord, zero);
    first = first ? arith::AndIOp::create(b, loc, first, isFirst) : isFirst;
  }
  if (!first) {
    // Every rank's copy is already a valid partial max or min, and the
    // group's only rank holds the sum.
    op.getResult().replaceAllUsesWith(op.getInput());
    op.erase();
    return;
  }
  auto type = cast<RankedTensorType>(op.getType());
  Value zeros = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  Value kept = arith::SelectOp::create(b, loc, first, op.getInput(), zeros);
  op.getResult().replaceAllUsesWith(kept);
  op.erase();
}

/// A slice's `sizes` with its kept (not dropped) dims set to `kept`, in
/// order; the dropped dims stay 1.
static SmallVector<int64_t> keptSizes(ArrayRef<int64_t> sizes,
                                      const llvm::SmallBitVector &dropped,
                                      ArrayRef<int64_t> kept) {
  SmallVector<int64_t> result(sizes);
  for (size_t dim = 0, next = 0; dim < result.size(); ++dim)
    if (!dropped[dim])
      result[dim] = kept[next++];
  return result;
}

LogicalResult FunctionPartitioner::localizeAttributes(Operation *op) {
  auto localShapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    expand.setStaticOutputShape(localShapeOf(expand.getResult()));
    return success();
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    // Sharded dims are whole (not sliced): their size is the local extent.
    // A rank-reducing slice's kept dims are the result's, in order.
    slice.setStaticSizes(keptSizes(slice.getStaticSizes(),
                                   slice.getDroppedDims(),
                                   localShapeOf(slice.getResult())));
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    // Likewise: a rank-expanding insert's kept dims are the source's.
    insert.setStaticSizes(keptSizes(insert.getStaticSizes(),
                                    insert.getDroppedDims(),
                                    localShapeOf(insert.getSource())));
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    auto type = dyn_cast<RankedTensorType>(constant.getType());
    if (!dense || !type || dense.getType() == type)
      return success();
    // Propagation gave the value its sharding too; a whole one (replicated)
    // only drops it.
    if (syncConstantValueType(op))
      return success();
    if (!dense.isSplat())
      return op->emitOpError("is a sharded non-splat constant");
    constant.setValueAttr(DenseElementsAttr::get(
        type, dense.getSplatValue<Attribute>()));
    return success();
  }
  return success();
}

LogicalResult FunctionPartitioner::run() {
  // A plain tensor here would be taken as whole on every rank, whatever it
  // held (dt-check rejects it in the pipeline; this pass may run alone).
  if (failed(verifyEncodingsPreserved(func)))
    return failure();
  // Ops that need global facts (shardings, global shapes) go first.
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<RedistributeOp>(op)) {
      op->emitOpError("must be lowered to collectives before partitioning "
                      "(run dt-lower-redistribute)");
      return WalkResult::interrupt();
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      localizeExtract(extract);
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (failed(offsetIndices(linalgOp)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Uneven shards: mask reductions over padding, size the gathers (still on
  // global types, which say what is uneven).
  SmallVector<linalg::LinalgOp> linalgOps;
  SmallVector<Operation *> collectives;
  func.walk([&](Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      linalgOps.push_back(linalgOp);
    else if (isa<AllGatherOp, AllToAllOp, ReduceScatterOp, LocalSliceOp>(op))
      collectives.push_back(op);
  });
  for (linalg::LinalgOp op : linalgOps)
    if (failed(maskUnevenReductions(op)))
      return failure();
  for (Operation *op : collectives)
    if (failed(prepareCollective(op)))
      return failure();

  // Every value takes its local type.
  auto retype = [&](Value v, Operation *at) -> LogicalResult {
    FailureOr<Type> local = localType(v.getType(), at);
    if (failed(local))
      return failure();
    v.setType(*local);
    return success();
  };
  walk = func.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(retype(arg, op)))
            return WalkResult::interrupt();
    for (Value result : op->getResults())
      if (failed(retype(result, op)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  SmallVector<Type> results;
  for (Type type : func.getResultTypes()) {
    FailureOr<Type> local = localType(type, func);
    if (failed(local))
      return failure();
    results.push_back(*local);
  }
  func.setType(FunctionType::get(func.getContext(),
                                 func.getBody().getArgumentTypes(), results));

  SmallVector<ToPartialOp> partials;
  walk = func.walk([&](Operation *op) {
    if (auto partial = dyn_cast<ToPartialOp>(op)) {
      partials.push_back(partial);
      return WalkResult::advance();
    }
    return failed(localizeAttributes(op)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (ToPartialOp op : partials)
    lowerToPartial(op);
  for (Operation *op : collectives) {
    if (auto gather = dyn_cast<AllGatherOp>(op); gather && gather.getExtent())
      padPacked(gather, gather.getDim());
    if (auto toAll = dyn_cast<AllToAllOp>(op); toAll && toAll.getExtent())
      padPacked(toAll, toAll.getConcatDim());
  }
  dropOneRankCollectives();
  return success();
}

void FunctionPartitioner::dropOneRankCollectives() {
  SmallVector<Operation *> trivial;
  func.walk([&](Operation *op) {
    if (!isRuntimeCollective(op) ||
        op->getOperand(0).getType() != op->getResult(0).getType())
      return;
    if (groupSize(op) == 1)
      trivial.push_back(op);
  });
  for (Operation *op : trivial) {
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
  }
}

LogicalResult mlir::dt::partitionFunction(func::FuncOp func, MeshOp mesh,
                                          bool explain) {
  return FunctionPartitioner(func, mesh, explain).run();
}

namespace {
struct PartitionPass : public mlir::dt::impl::PartitionPassBase<PartitionPass> {
  using Base::Base;
  mlir::dt::Statistic numFunctions{this, "functions-partitioned",
                                   "Number of functions partitioned"};
  void runOnOperation() override {
    SymbolTableCollection symbolTables;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !isMeshedFunction(func))
        continue;
      MeshOp mesh = getFunctionMesh(func, symbolTables);
      if (!mesh)
        return signalPassFailure();
      if (failed(partitionFunction(func, mesh, explain)))
        return signalPassFailure();
      ++numFunctions;
    }
  }
};
} // namespace
