//===- Partition.cpp - dt-partition ---------------------------------------===//
//
// Global program -> the SPMD program of one rank. Every tensor type becomes
// the type of the local shard; ops whose attributes carry sizes get local
// sizes; the few ops whose meaning depends on where the shard lies get the
// rank's coordinates through dt.axis_index.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Sharding/ShardLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

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
  if (!::dt::isEvenlySharded(tensor.getShape(), shape,
                             sharding.getPlacements()))
    return at->emitOpError("has the unevenly sharded tensor ")
           << type << "; dt-partition does not partition uneven shards yet";
  std::vector<int64_t> local = ::dt::maxLocalShape(
      tensor.getShape(), shape, sharding.getPlacements());
  return Type(RankedTensorType::get(local, tensor.getElementType()));
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
