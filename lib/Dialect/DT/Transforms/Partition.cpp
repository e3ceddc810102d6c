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
// the valid elements first, and is sliced back to the global extent.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Sharding/ShardLayout.h"

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
  FunctionPartitioner(func::FuncOp func, MeshOp mesh)
      : func(func), mesh(mesh), shape(mesh.getShape()) {}

  LogicalResult run();

private:
  /// The local type of a global tensor type; `type` itself when it has no
  /// sharding. Fails (with a diagnostic at `at`) on an uneven sharding.
  FailureOr<Type> localType(Type type, Operation *at);
  LogicalResult offsetIndices(linalg::LinalgOp op);
  /// The one mesh axis that splits dim `dim` of `type` unevenly, if any.
  /// Fails when several axes split it unevenly.
  FailureOr<std::optional<int64_t>> unevenAxis(RankedTensorType type,
                                               int64_t dim, Operation *at);
  /// The number of valid elements of this rank's padded piece of `extent`
  /// split over mesh axis `axis`.
  Value validExtent(OpBuilder &b, Location loc, int64_t axis, int64_t extent);
  LogicalResult maskUnevenReductions(linalg::LinalgOp op);
  LogicalResult prepareCollective(Operation *op);
  /// After retyping: a gather or all_to_all that packs uneven pieces along
  /// `dim` gets its padded local result, sliced to the valid extent.
  void padPacked(Operation *op, int64_t dim);
  void lowerToPartial(ToPartialOp op);
  LogicalResult localizeAttributes(Operation *op);

  func::FuncOp func;
  MeshOp mesh;
  ArrayRef<int64_t> shape;
};
} // namespace

FailureOr<Type> FunctionPartitioner::localType(Type type, Operation *at) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  ShardingAttr sharding = getShardingEncoding(type);
  if (!tensor || !sharding)
    return type;
  for (int64_t dim = 0; dim < tensor.getRank(); ++dim)
    if (failed(unevenAxis(tensor, dim, at)))
      return failure();
  std::vector<int64_t> local = ::dt::maxLocalShape(
      tensor.getShape(), shape, sharding.getPlacements());
  return Type(RankedTensorType::get(local, tensor.getElementType()));
}

FailureOr<std::optional<int64_t>>
FunctionPartitioner::unevenAxis(RankedTensorType type, int64_t dim,
                                Operation *at) {
  ShardingAttr sharding = getShardingEncoding(type);
  if (!sharding)
    return std::optional<int64_t>();
  SmallVector<int64_t> axes = sharding.getAxesShardingDim(dim);
  int64_t parts = 1;
  for (int64_t axis : axes)
    parts *= shape[axis];
  if (axes.empty() || ::dt::dividesEvenly(type.getDimSize(dim), parts))
    return std::optional<int64_t>();
  if (axes.size() > 1)
    return at->emitOpError("has the tensor ")
           << type << ", whose dim " << dim
           << " is split unevenly by several mesh axes; dt-partition pads "
              "uneven dims split by one axis only";
  return std::optional<int64_t>(axes.front());
}

Value FunctionPartitioner::validExtent(OpBuilder &b, Location loc,
                                       int64_t axis, int64_t extent) {
  int64_t chunk = ::dt::chunkSize(extent, shape[axis]);
  Value coord = b.create<AxisIndexOp>(
      loc, FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
      cast<StringAttr>(mesh.getAxisNames()[axis]));
  auto constant = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  // clamp(extent - coord * chunk, 0, chunk)
  Value start = b.create<arith::MulIOp>(loc, coord, constant(chunk));
  Value rest = b.create<arith::SubIOp>(loc, constant(extent), start);
  Value positive = b.create<arith::MaxSIOp>(loc, rest, constant(0));
  return b.create<arith::MinSIOp>(loc, positive, constant(chunk));
}

/// The rank's offset along a loop dim that mesh axes `axes` split (in mesh
/// order) into pieces of `localExtent`: the linear index of its coordinates
/// on those axes, times the piece.
static Value shardOffset(OpBuilder &b, Location loc, MeshOp mesh,
                         ArrayRef<int64_t> axes, int64_t localExtent) {
  Value offset;
  for (int64_t axis : axes) {
    auto name = cast<StringAttr>(mesh.getAxisNames()[axis]);
    Value coord = b.create<AxisIndexOp>(
        loc, FlatSymbolRefAttr::get(mesh.getSymNameAttr()), name);
    if (!offset) {
      offset = coord;
      continue;
    }
    Value size = b.create<arith::ConstantIndexOp>(loc, mesh.getShape()[axis]);
    offset = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, offset, size), coord);
  }
  Value piece = b.create<arith::ConstantIndexOp>(loc, localExtent);
  return b.create<arith::MulIOp>(loc, offset, piece);
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
    int64_t localExtent = 0;
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
        localExtent = ::dt::maxLocalShape(tensor.getShape(), shape,
                                          sharding.getPlacements())[dim];
      }
    }
    if (axes.empty())
      continue;
    // The offset is the same for every iteration: compute it before the op.
    OpBuilder b(op);
    Value offset = shardOffset(b, index.getLoc(), mesh, axes, localExtent);
    b.setInsertionPointAfter(index);
    Value global = b.create<arith::AddIOp>(index.getLoc(), index, offset);
    index.getResult().replaceAllUsesExcept(global, global.getDefiningOp());
  }
  return success();
}

/// `value` (a tensor with the global type) with the elements at or beyond
/// `valid` along `dim` replaced by zeros.
static Value zeroPadding(OpBuilder &b, Location loc, Value value, int64_t dim,
                         Value valid) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  Value init = b.create<tensor::EmptyOp>(loc, type.getShape(),
                                         type.getElementType(),
                                         type.getEncoding());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{value}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value index = nb.create<linalg::IndexOp>(nloc, dim);
        Value inside = nb.create<arith::CmpIOp>(
            nloc, arith::CmpIPredicate::ult, index, valid);
        Value zero = nb.create<arith::ConstantOp>(
            nloc, nb.getZeroAttr(type.getElementType()));
        Value kept = nb.create<arith::SelectOp>(nloc, inside, args[0], zero);
        nb.create<linalg::YieldOp>(nloc, kept);
      });
  return generic.getResult(0);
}

LogicalResult FunctionPartitioner::maskUnevenReductions(linalg::LinalgOp op) {
  // The reduction loops that run over an unevenly split tensor dim.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  llvm::MapVector<int64_t, std::pair<int64_t, int64_t>> uneven; // loop -> (axis, extent)
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type)
      continue;
    AffineMap map = maps[input->getOperandNumber()];
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop || iterators[loop.getPosition()] != utils::IteratorType::reduction)
        continue;
      FailureOr<std::optional<int64_t>> axis = unevenAxis(type, dim, op);
      if (failed(axis))
        return failure();
      if (*axis)
        uneven[loop.getPosition()] = {**axis, type.getDimSize(dim)};
    }
  }
  if (uneven.empty())
    return success();

  OpBuilder b(op);
  Location loc = op.getLoc();
  llvm::MapVector<int64_t, Value> valid;
  for (auto [loop, axisExtent] : uneven)
    valid[loop] = validExtent(b, loc, axisExtent.first, axisExtent.second);

  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(*op)) {
    // out += a * b: zero both operands' padding (it may hold NaNs), and the
    // padded products add nothing.
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
    Value index = b.create<linalg::IndexOp>(loc, loop);
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, index,
                                       extent);
    inside = inside ? b.create<arith::AndIOp>(loc, inside, ok) : ok;
  }
  unsigned firstInit = generic.getNumDpsInputs();
  for (OpOperand &yielded : yield->getOpOperands()) {
    Value accumulator = body.getArgument(firstInit + yielded.getOperandNumber());
    yielded.set(b.create<arith::SelectOp>(loc, inside, yielded.get(),
                                          accumulator));
  }
  return success();
}

LogicalResult FunctionPartitioner::prepareCollective(Operation *op) {
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  if (auto gather = dyn_cast<AllGatherOp>(op)) {
    FailureOr<std::optional<int64_t>> axis =
        unevenAxis(input, gather.getDim(), op);
    if (failed(axis))
      return failure();
    if (*axis)
      gather.setExtent(input.getDimSize(gather.getDim()));
    return success();
  }
  auto toAll = cast<AllToAllOp>(op);
  auto result = cast<RankedTensorType>(toAll.getType());
  FailureOr<std::optional<int64_t>> concatAxis =
      unevenAxis(input, toAll.getConcatDim(), op);
  FailureOr<std::optional<int64_t>> splitAxis =
      unevenAxis(result, toAll.getSplitDim(), op);
  if (failed(concatAxis) || failed(splitAxis))
    return failure();
  // An uneven split needs nothing more: the runtime cuts torch.chunk pieces.
  if (*concatAxis)
    toAll.setExtent(input.getDimSize(toAll.getConcatDim()));
  return success();
}

void FunctionPartitioner::padPacked(Operation *op, int64_t dim) {
  // The local result holds the group's padded pieces along `dim`; the valid
  // extent comes first and is what the rest of the program sees.
  Value result = op->getResult(0);
  auto local = cast<RankedTensorType>(result.getType());
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t groupSize = 1;
  for (Attribute axis : op->getAttrOfType<ArrayAttr>("axes"))
    groupSize *= shape[*mesh.getAxisIndex(cast<StringAttr>(axis))];
  SmallVector<int64_t> padded(local.getShape());
  padded[dim] = input.getDimSize(dim) * groupSize;
  result.setType(RankedTensorType::get(padded, local.getElementType()));
  OpBuilder b(op);
  b.setInsertionPointAfter(op);
  SmallVector<int64_t> offsets(local.getRank(), 0), strides(local.getRank(), 1);
  auto slice = b.create<tensor::ExtractSliceOp>(
      op->getLoc(), local, result, ValueRange{}, ValueRange{}, ValueRange{},
      offsets, local.getShape(), strides);
  result.replaceAllUsesExcept(slice.getResult(), slice);
}

void FunctionPartitioner::lowerToPartial(ToPartialOp op) {
  if (op.getReduction().getValue() != ::dt::ReductionKind::Sum) {
    // Every rank's copy is already a valid partial max or min.
    op.getResult().replaceAllUsesWith(op.getInput());
    op.erase();
    return;
  }
  // The first rank of each group keeps the value; the others hold zeros.
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value first;
  for (Attribute axis : op.getAxes()) {
    Value coord = b.create<AxisIndexOp>(loc, op.getMeshAttr(),
                                        cast<StringAttr>(axis));
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value isFirst =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, coord, zero);
    first = first ? b.create<arith::AndIOp>(loc, first, isFirst) : isFirst;
  }
  auto type = cast<RankedTensorType>(op.getType());
  Value zeros = b.create<arith::ConstantOp>(
      loc, type, b.getZeroAttr(type));
  Value kept =
      b.create<arith::SelectOp>(loc, first, op.getInput(), zeros);
  op.getResult().replaceAllUsesWith(kept);
  op.erase();
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
    SmallVector<int64_t> sizes(slice.getStaticSizes());
    ArrayRef<int64_t> result = localShapeOf(slice.getResult());
    if (result.size() == sizes.size())
      sizes.assign(result.begin(), result.end());
    slice.setStaticSizes(sizes);
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    insert.setStaticSizes(localShapeOf(insert.getSource()));
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    auto type = dyn_cast<RankedTensorType>(constant.getType());
    if (!dense || !type || dense.getType() == type)
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
  // Ops that need global facts (shardings, global shapes) go first.
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<RedistributeOp>(op)) {
      op->emitOpError("must be lowered to collectives before partitioning "
                      "(run dt-lower-redistribute)");
      return WalkResult::interrupt();
    }
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
    else if (isa<AllGatherOp, AllToAllOp>(op))
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
  return success();
}

LogicalResult mlir::dt::partitionFunction(func::FuncOp func, MeshOp mesh) {
  return FunctionPartitioner(func, mesh).run();
}

namespace {
struct PartitionPass : public mlir::dt::impl::PartitionPassBase<PartitionPass> {
  void runOnOperation() override {
    SymbolTableCollection symbolTables;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !isMeshedFunction(func))
        continue;
      MeshOp mesh = getFunctionMesh(func, symbolTables);
      if (!mesh)
        return signalPassFailure();
      if (failed(partitionFunction(func, mesh)))
        return signalPassFailure();
      ++numFunctions;
    }
  }
};
} // namespace
