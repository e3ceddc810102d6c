//===- TestSimulation.cpp - Test passes for the differential test ---------===//
//
// dt-test-simulate-spmd and dt-test-add-driver: the
// pieces of test/Execution's differential test, which runs the SPMD program of
// every rank (combined in one plain function) and the single-device program
// through upstream's CPU pipeline and compares what they print.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Sharding/Exchange.h"
#include "dt/Sharding/ShardLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dt {
#define GEN_PASS_DEF_TESTSIMULATESPMDPASS
#define GEN_PASS_DEF_TESTADDDRIVERPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;

//===----------------------------------------------------------------------===//
// Plain tensor helpers
//===----------------------------------------------------------------------===//

static Value extractBox(OpBuilder &b, Location loc, Value v,
                        ArrayRef<int64_t> offset, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  SmallVector<int64_t> strides(shape.size(), 1);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v,
      ValueRange{}, ValueRange{}, ValueRange{}, offset, shape, strides);
}

static Value insertBox(OpBuilder &b, Location loc, Value piece, Value into,
                       ArrayRef<int64_t> offset) {
  auto type = cast<RankedTensorType>(piece.getType());
  SmallVector<int64_t> strides(type.getRank(), 1);
  return tensor::InsertSliceOp::create(b, loc, piece, into, ValueRange{},
                                       ValueRange{}, ValueRange{}, offset,
                                       type.getShape(), strides);
}

static Value concat(OpBuilder &b, Location loc, ArrayRef<Value> parts,
                    int64_t dim) {
  auto first = cast<RankedTensorType>(parts[0].getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (Value p : parts)
    shape[dim] += cast<RankedTensorType>(p.getType()).getDimSize(dim);
  Value out = tensor::EmptyOp::create(b, loc, shape, first.getElementType());
  SmallVector<int64_t> offset(shape.size(), 0);
  for (Value p : parts) {
    out = insertBox(b, loc, p, out, offset);
    offset[dim] += cast<RankedTensorType>(p.getType()).getDimSize(dim);
  }
  return out;
}

static Value combine(OpBuilder &b, Location loc, ::dt::ReductionKind kind,
                     Value x, Value y) {
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(x.getType()));
  switch (kind) {
  case ::dt::ReductionKind::Max:
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, x, y))
                   : Value(arith::MaxSIOp::create(b, loc, x, y));
  case ::dt::ReductionKind::Min:
    return isFloat ? Value(arith::MinimumFOp::create(b, loc, x, y))
                   : Value(arith::MinSIOp::create(b, loc, x, y));
  default:
    return isFloat ? Value(arith::AddFOp::create(b, loc, x, y))
                   : Value(arith::AddIOp::create(b, loc, x, y));
  }
}

static Value reduceAll(OpBuilder &b, Location loc, ::dt::ReductionKind kind,
                       ArrayRef<Value> values) {
  Value acc = values[0];
  for (Value v : values.drop_front())
    acc = combine(b, loc, kind, acc, v);
  if (kind == ::dt::ReductionKind::Avg) {
    auto type = cast<RankedTensorType>(acc.getType());
    Value n = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            type, b.getFloatAttr(type.getElementType(), values.size())));
    acc = arith::DivFOp::create(b, loc, acc, n);
  }
  return acc;
}

static Value chunk(OpBuilder &b, Location loc, Value v, int64_t dim,
                   int64_t parts, int64_t index) {
  auto type = cast<RankedTensorType>(v.getType());
  ::dt::ChunkRange range = ::dt::chunkOf(type.getDimSize(dim), parts, index);
  SmallVector<int64_t> offset(type.getRank(), 0), shape(type.getShape());
  offset[dim] = range.offset;
  shape[dim] = range.size;
  return extractBox(b, loc, v, offset, shape);
}

//===----------------------------------------------------------------------===//
// dt-test-simulate-spmd
//===----------------------------------------------------------------------===//

namespace {
/// Every rank of a mesh, instantiated side by side.
class Simulator {
public:
  Simulator(MeshOp mesh) : mesh(mesh), shape(mesh.getShape()) {
    for (int64_t r = 0; r < ::dt::meshSize(shape); ++r)
      coords.push_back(::dt::meshCoords(shape, r));
  }

  LogicalResult run(func::FuncOp global, func::FuncOp local);

private:
  /// The members of `rank`'s group over `axes`, row-major over them.
  SmallVector<int64_t> group(int64_t rank, ArrayRef<int64_t> axes) const;
  SmallVector<int64_t> axisIndices(ArrayAttr names);
  LogicalResult collective(OpBuilder &b, Operation *op);

  MeshOp mesh;
  ArrayRef<int64_t> shape;
  std::vector<std::vector<int64_t>> coords;
  std::vector<IRMapping> ranks;
};
} // namespace

SmallVector<int64_t> Simulator::group(int64_t rank,
                                      ArrayRef<int64_t> axes) const {
  SmallVector<int64_t> members;
  std::vector<int64_t> c = coords[rank];
  std::function<void(size_t)> visit = [&](size_t i) {
    if (i == axes.size()) {
      members.push_back(::dt::linearRank(shape, c));
      return;
    }
    for (int64_t v = 0; v < shape[axes[i]]; ++v) {
      c[axes[i]] = v;
      visit(i + 1);
    }
  };
  visit(0);
  return members;
}

SmallVector<int64_t> Simulator::axisIndices(ArrayAttr names) {
  SmallVector<int64_t> axes;
  for (Attribute name : names)
    axes.push_back(*mesh.getAxisIndex(cast<StringAttr>(name).getValue()));
  return axes;
}

LogicalResult Simulator::collective(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  auto valueOf = [&](int64_t rank) {
    return ranks[rank].lookup(op->getOperand(0));
  };
  auto members = [&](int64_t rank, ArrayAttr axes) {
    return group(rank, axisIndices(axes));
  };
  std::vector<Value> results(ranks.size());
  for (int64_t r = 0; r < static_cast<int64_t>(ranks.size()); ++r) {
    SmallVector<Value> values;
    auto gather = [&](ArrayAttr axes) {
      for (int64_t m : members(r, axes))
        values.push_back(valueOf(m));
    };
    auto position = [&](ArrayAttr axes) {
      SmallVector<int64_t> g = members(r, axes);
      return std::find(g.begin(), g.end(), r) - g.begin();
    };
    if (auto g = dyn_cast<AllGatherOp>(op)) {
      gather(g.getAxes());
      results[r] = concat(b, loc, values, g.getDim());
    } else if (auto a = dyn_cast<AllReduceOp>(op)) {
      gather(a.getAxes());
      results[r] = reduceAll(b, loc, a.getReduction().getValue(), values);
    } else if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
      gather(rs.getAxes());
      Value full = reduceAll(b, loc, rs.getReduction().getValue(), values);
      results[r] = chunk(b, loc, full, rs.getDim(), values.size(),
                         position(rs.getAxes()));
    } else if (auto a2a = dyn_cast<AllToAllOp>(op)) {
      SmallVector<int64_t> g = members(r, a2a.getAxes());
      int64_t me = position(a2a.getAxes());
      SmallVector<Value> received;
      for (int64_t m : g)
        received.push_back(chunk(b, loc, valueOf(m), a2a.getSplitDim(),
                                 g.size(), me));
      results[r] = concat(b, loc, received, a2a.getConcatDim());
    } else if (auto exchange = dyn_cast<ExchangeOp>(op)) {
      // Zeros, with each part received put in its place.
      auto type = cast<RankedTensorType>(exchange.getType());
      ArrayRef<Placement> from = exchange.getSource().getPlacements(),
                          to = exchange.getTarget().getPlacements();
      ArrayRef<int64_t> global = exchange.getShape();
      Value out = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
      for (const ::dt::ExchangePart &part :
           ::dt::exchangeReceives(global, shape, from, to, coords[r])) {
        Value piece =
            extractBox(b, loc, valueOf(part.peer), part.from, part.box.shape);
        out = insertBox(b, loc, piece, out, part.to);
      }
      results[r] = out;
    } else if (auto slice = dyn_cast<LocalSliceOp>(op)) {
      SmallVector<int64_t> g = members(r, slice.getAxes());
      results[r] = chunk(b, loc, valueOf(r), slice.getDim(), g.size(),
                         position(slice.getAxes()));
    } else {
      return op->emitOpError("cannot be simulated");
    }
  }
  for (int64_t r = 0; r < static_cast<int64_t>(ranks.size()); ++r)
    ranks[r].map(op->getResult(0), results[r]);
  return success();
}

LogicalResult Simulator::run(func::FuncOp global, func::FuncOp local) {
  ranks.assign(coords.size(), IRMapping());
  Block &body = global.getBody().front();
  // The global, unencoded signature.
  SmallVector<Type> inputs, outputs;
  for (Type t : global.getArgumentTypes())
    inputs.push_back(withSharding(cast<RankedTensorType>(t), nullptr));
  SmallVector<ShardingAttr> resultShardings;
  for (Type t : global.getResultTypes()) {
    resultShardings.push_back(getShardingEncoding(t));
    outputs.push_back(withSharding(cast<RankedTensorType>(t), nullptr));
  }
  SmallVector<ShardingAttr> argShardings;
  for (Type t : global.getArgumentTypes())
    argShardings.push_back(getShardingEncoding(t));

  Block *entry = new Block();
  for (Type t : inputs)
    entry->addArgument(t, global.getLoc());
  global.getBody().push_back(entry);
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Location loc = global.getLoc();
  // Each rank's shard of each input.
  for (auto [i, arg] : llvm::enumerate(entry->getArguments())) {
    auto type = cast<RankedTensorType>(arg.getType());
    for (size_t r = 0; r < coords.size(); ++r) {
      ::dt::ShardBox box = ::dt::shardBox(
          type.getShape(), shape, argShardings[i].getPlacements(), coords[r]);
      ranks[r].map(local.getArgument(i),
                   extractBox(b, loc, arg, box.offset, box.shape));
    }
  }
  // The local program, rank by rank, op by op; collectives across ranks.
  Operation *terminator = local.getBody().front().getTerminator();
  for (Operation &op : local.getBody().front().without_terminator()) {
    if (isRuntimeCollective(&op)) {
      if (failed(collective(b, &op)))
        return failure();
      continue;
    }
    for (size_t r = 0; r < coords.size(); ++r) {
      Operation *copy = b.clone(op, ranks[r]);
      // (The walk visits the copy itself too.)
      SmallVector<AxisIndexOp> indices;
      copy->walk([&](AxisIndexOp index) { indices.push_back(index); });
      for (AxisIndexOp index : indices) {
        OpBuilder at(index);
        int64_t axis = *mesh.getAxisIndex(index.getAxis());
        Value c =
            arith::ConstantIndexOp::create(at, index.getLoc(), coords[r][axis]);
        index.getResult().replaceAllUsesWith(c);
        if (index.getOperation() == copy)
          ranks[r].map(op.getResult(0), c);
        index.erase();
      }
    }
  }
  // The global results, from the shards of the ranks that hold each piece
  // once (coordinate 0 on replicated axes), reduced over partial axes.
  SmallVector<Value> results;
  for (auto [j, operand] : llvm::enumerate(terminator->getOperands())) {
    auto type = cast<RankedTensorType>(outputs[j]);
    ArrayRef<Placement> placements = resultShardings[j].getPlacements();
    SmallVector<int64_t> partialAxes;
    for (auto [axis, p] : llvm::enumerate(placements))
      if (p.isPartial())
        partialAxes.push_back(axis);
    Value out =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    for (size_t r = 0; r < coords.size(); ++r) {
      bool representative = true;
      for (auto [axis, p] : llvm::enumerate(placements))
        representative &= p.isShard() || coords[r][axis] == 0;
      if (!representative)
        continue;
      SmallVector<Value> pieces;
      for (int64_t m : group(r, partialAxes))
        pieces.push_back(ranks[m].lookup(operand));
      Value piece = partialAxes.empty()
                        ? pieces[0]
                        : reduceAll(b, loc, placements[partialAxes[0]].reduction(),
                                    pieces);
      ::dt::ShardBox box =
          ::dt::shardBox(type.getShape(), shape, placements, coords[r]);
      out = insertBox(b, loc, piece, out, box.offset);
    }
    results.push_back(out);
  }
  func::ReturnOp::create(b, loc, results);
  body.dropAllDefinedValueUses();
  body.erase();
  global.setType(FunctionType::get(global.getContext(), inputs, outputs));
  return success();
}

/// Whether one of `types` is unevenly sharded over `meshShape`, which is
/// then reported at `op`: the simulator slices and gathers full pieces, and
/// uneven shards (padded pieces) are dt-run's to check.
static bool reportUneven(Operation *op, TypeRange types,
                         ArrayRef<int64_t> meshShape) {
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    ShardingAttr sharding = getShardingEncoding(type);
    if (tensor && sharding &&
        !::dt::isEvenlySharded(tensor.getShape(), meshShape,
                               sharding.getPlacements())) {
      op->emitOpError("has the unevenly sharded ")
          << type
          << "; dt-test-simulate-spmd models even shards only "
             "(run the program with dt-run --verify)";
      return true;
    }
  }
  return false;
}

/// Fails, having said why, unless `func` is a program the simulator can
/// run: one block, and tensors with shardings for arguments and results
/// (each rank's inputs are slices of the arguments, so none partial or
/// uneven, and the results are assembled from the ranks' pieces).
static LogicalResult checkSimulable(func::FuncOp func, MeshOp mesh) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("has ")
           << func.getBody().getBlocks().size()
           << " blocks; dt-test-simulate-spmd runs functions of one block";
  auto check = [&](TypeRange types, StringRef what) -> LogicalResult {
    for (auto [i, type] : llvm::enumerate(types))
      if (!isa<RankedTensorType>(type) || !getShardingEncoding(type))
        return func.emitOpError()
               << what << " #" << i << " is " << type
               << "; dt-test-simulate-spmd runs functions whose arguments "
                  "and results are all tensors with a #dt.sharding encoding";
    return success();
  };
  if (failed(check(func.getArgumentTypes(), "argument")) ||
      failed(check(func.getResultTypes(), "result")))
    return failure();
  if (llvm::any_of(func.getArgumentTypes(), [](Type type) {
        return getShardingEncoding(type).hasPartial();
      }))
    return func.emitOpError("simulation takes no partial arguments");
  return failure(reportUneven(func, func.getArgumentTypes(), mesh.getShape()));
}

namespace {
struct TestSimulateSPMDPass
    : public mlir::dt::impl::TestSimulateSPMDPassBase<TestSimulateSPMDPass> {
  void runOnOperation() override {
    SymbolTableCollection symbolTables;
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && isMeshedFunction(func))
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      MeshOp mesh = getFunctionMesh(func, symbolTables);
      if (!mesh)
        return signalPassFailure();
      if (failed(checkSimulable(func, mesh)))
        return signalPassFailure();
      WalkResult uneven = func.walk([&](Operation *op) {
        return reportUneven(op, op->getResultTypes(), mesh.getShape())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (uneven.wasInterrupted())
        return signalPassFailure();
      OpBuilder b(func);
      auto local = cast<func::FuncOp>(b.clone(*func));
      local.setName((func.getName() + "_rank_program").str());
      if (failed(partitionFunction(local, mesh)) ||
          failed(Simulator(mesh).run(func, local)))
        return signalPassFailure();
      local.erase();
    }
  }
};

//===----------------------------------------------------------------------===//
// dt-test-add-driver
//===----------------------------------------------------------------------===//

struct TestAddDriverPass
    : public mlir::dt::impl::TestAddDriverPassBase<TestAddDriverPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto callee = module.lookupSymbol<func::FuncOp>(function);
    if (!callee) {
      module.emitError("no function @") << function;
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = callee.getLoc();
    auto unranked = UnrankedMemRefType::get(b.getF32Type(), 0);
    auto print = func::FuncOp::create(b, loc, "printMemrefF32",
                                      FunctionType::get(ctx, {unranked}, {}));
    print.setPrivate();
    auto driver = func::FuncOp::create(b, loc, "dt_test_driver",
                                       FunctionType::get(ctx, {}, {}));
    b.setInsertionPointToStart(driver.addEntryBlock());
    SmallVector<Value> args;
    for (Type t : callee.getArgumentTypes()) {
      auto type = dyn_cast<RankedTensorType>(t);
      if (!type || !type.getElementType().isF32() || getShardingEncoding(t)) {
        callee.emitError("the driver feeds plain static f32 tensors only");
        return signalPassFailure();
      }
      SmallVector<float> values;
      for (int64_t k = 0; k < type.getNumElements(); ++k)
        values.push_back(static_cast<float>((7 * k) % 11 - 5));
      args.push_back(arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, ArrayRef<float>(values))));
    }
    auto call = func::CallOp::create(b, loc, callee, args);
    for (Value result : call.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.getElementType().isF32())
        continue;
      Value buffer = bufferization::ToBufferOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()),
          result);
      Value cast = memref::CastOp::create(b, loc, unranked, buffer);
      func::CallOp::create(b, loc, print, ValueRange{cast});
    }
    func::ReturnOp::create(b, loc);
  }
};
} // namespace
