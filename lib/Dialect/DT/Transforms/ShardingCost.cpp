//===- ShardingCost.cpp - Mesh facts and redistribution costs -------------===//

#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/IR/Locations.h"
#include "dt/Dialect/DT/Transforms/Buckets.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <limits>

using namespace mlir;
using namespace mlir::dt;
using ::dt::CollectiveKind;
using ::dt::Placement;

const MeshInfo *MeshCache::lookup(Operation *from, FlatSymbolRefAttr ref) {
  MeshOp meshOp = lookupMesh(from, ref, symbolTables);
  if (!meshOp)
    return nullptr;
  auto &slot = meshes[meshOp.getOperation()];
  if (slot)
    return slot.get();
  auto info = std::make_unique<MeshInfo>();
  info->op = meshOp;
  info->shape.assign(meshOp.getShape().begin(), meshOp.getShape().end());
  for (Attribute name : meshOp.getAxisNames())
    info->axisNames.push_back(cast<StringAttr>(name).str());
  info->topology = ::dt::Topology::defaults(info->shape);
  if (!topologyFile.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(topologyFile);
    if (!buffer) {
      from->emitError("cannot read topology file '")
          << topologyFile << "': " << buffer.getError().message();
      return nullptr;
    }
    std::string error;
    if (!::dt::Topology::parse((*buffer)->getBuffer().str(), info->axisNames,
                               info->shape, info->topology, error)) {
      from->emitError() << topologyFile << ": " << error;
      return nullptr;
    }
  }
  slot = std::move(info);
  return slot.get();
}

AxisGroup mlir::dt::axisGroup(const MeshInfo &mesh, ArrayAttr names) {
  AxisGroup group;
  for (Attribute name : names) {
    auto it = llvm::find(mesh.axisNames, cast<StringAttr>(name).getValue());
    group.axes.push_back(it - mesh.axisNames.begin());
    group.size *= mesh.shape[group.axes.back()];
  }
  return group;
}

std::optional<CollectiveKind> mlir::dt::collectiveKindOf(Operation *op) {
  if (isa<AllReduceOp>(op))
    return CollectiveKind::AllReduce;
  if (isa<AllGatherOp>(op))
    return CollectiveKind::AllGather;
  if (isa<ReduceScatterOp>(op))
    return CollectiveKind::ReduceScatter;
  if (isa<AllToAllOp>(op))
    return CollectiveKind::AllToAll;
  return std::nullopt;
}

std::optional<::dt::ExchangeCost>
mlir::dt::exchangeCostOf(ExchangeOp op, const MeshInfo &mesh) {
  return ::dt::exchangeCost(
      op.getShape(), elementBytes(op.getInput().getType().getElementType()),
      mesh.shape, mesh.topology, op.getSource().getPlacements(),
      op.getTarget().getPlacements(), /*maxGroup=*/4096);
}

int64_t mlir::dt::elementBytes(Type elementType) {
  return std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8);
}

double mlir::dt::tensorBytes(RankedTensorType type) {
  return static_cast<double>(type.getNumElements()) *
         static_cast<double>(elementBytes(type.getElementType()));
}

CollectiveDim mlir::dt::collectiveDimOf(Operation *op) {
  if (auto gather = dyn_cast<AllGatherOp>(op))
    return {static_cast<int64_t>(gather.getDim()), !gather.getExtent()};
  if (auto scatter = dyn_cast<ReduceScatterOp>(op))
    return {static_cast<int64_t>(scatter.getDim()), !scatter.getExtent()};
  return {};
}

double mlir::dt::localRingBytes(CollectiveKind kind, RankedTensorType in,
                                RankedTensorType out, int64_t groupSize) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return tensorBytes(out);
  case CollectiveKind::AllToAll:
    return tensorBytes(in) / static_cast<double>(groupSize);
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter:
    break;
  }
  return tensorBytes(in);
}

std::optional<CollectiveKind> mlir::dt::collectiveFor(Placement from,
                                                      Placement to) {
  if (from == to || from.isReplicate())
    return std::nullopt;
  if (from.isShard())
    return to.isShard() ? CollectiveKind::AllToAll : CollectiveKind::AllGather;
  return to.isShard() ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
}

double mlir::dt::groupBytes(const MeshInfo &mesh, unsigned axis,
                            RankedTensorType type,
                            ArrayRef<Placement> placements) {
  double bytes = tensorBytes(type);
  for (auto [other, p] : llvm::enumerate(placements))
    if (other != axis && p.isShard())
      bytes /= static_cast<double>(mesh.shape[other]);
  return bytes;
}

double mlir::dt::axisTransitionSeconds(const MeshInfo &mesh, unsigned axis,
                                       RankedTensorType type,
                                       ArrayRef<Placement> placements,
                                       Placement from, Placement to) {
  if (from == to || from.isReplicate())
    return 0;
  int64_t n = mesh.shape[axis];
  double bytes = groupBytes(mesh, axis, type, placements);
  const ::dt::AxisLink &link = mesh.topology.link(axis);
  // Partial to partial of another kind, or shard to partial: through R.
  if (to.isPartial())
    return axisTransitionSeconds(mesh, axis, type, placements, from,
                                 Placement::replicate());
  CollectiveKind kind = *collectiveFor(from, to);
  if (kind == CollectiveKind::AllToAll)
    bytes /= static_cast<double>(n);
  return ::dt::ringSeconds(kind, n, bytes, link);
}

double mlir::dt::joinedAllReduceSeconds(const MeshInfo &mesh, unsigned axis,
                                        RankedTensorType type,
                                        ArrayRef<Placement> placements,
                                        bool madeForIt, bool returned) {
  int64_t n = mesh.shape[axis];
  double bytes = groupBytes(mesh, axis, type, placements);
  const ::dt::AxisLink &link = mesh.topology.link(axis);
  double alone = ::dt::ringSeconds(CollectiveKind::AllReduce, n, bytes, link);
  double wire = ::dt::ringBytesPerRank(CollectiveKind::AllReduce, n, bytes) /
                link.bytesPerSecond;
  // An input made in the buffer is not copied in (an odd-sized one may be,
  // laid after the others: counted as copied); a result is a view of the
  // buffer unless the function returns it.
  bool madeInBuffer = madeForIt && isWholeRuns(bytes);
  double copied = (madeInBuffer ? 0 : bytes) + (returned ? bytes : 0);
  return std::min(alone, wire + mesh.topology.device().copySeconds(copied));
}

double mlir::dt::redistributionSeconds(const MeshInfo &mesh,
                                       RankedTensorType type,
                                       ArrayRef<Placement> from,
                                       ArrayRef<Placement> to) {
  SmallVector<Placement> current(from);
  double seconds = 0;
  for (unsigned axis = 0, e = current.size(); axis < e; ++axis) {
    seconds += axisTransitionSeconds(mesh, axis, type, current, current[axis],
                                     to[axis]);
    current[axis] = to[axis];
  }
  return seconds;
}

bool mlir::dt::isMultiplyAccumulate(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumDpsInputs() == 2 &&
         linalgOp.getNumDpsInits() == 1 &&
         linalg::detail::isContractionBody(
             *linalgOp.getBlock(), [](Operation *multiply, Operation *add) {
               return (isa<arith::MulFOp>(multiply) &&
                       isa<arith::AddFOp>(add)) ||
                      (isa<arith::MulIOp>(multiply) && isa<arith::AddIOp>(add));
             });
}

bool mlir::dt::isMultiplyAccumulateConvolution(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalg::isaConvolutionOpInterface(linalgOp) &&
         isMultiplyAccumulate(op);
}

FailureOr<Operation *> mlir::dt::swapIntoConvolution(RewriterBase &rewriter,
                                                     Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !isMultiplyAccumulate(op) ||
      linalg::isaConvolutionOpInterface(generic))
    return failure();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[0].isProjectedPermutation() || maps[1].isProjectedPermutation() ||
      !maps[2].isProjectedPermutation())
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  ValueRange inputs = generic.getInputs();
  auto swapped = linalg::GenericOp::create(
      rewriter, op->getLoc(), op->getResultTypes(),
      ValueRange{inputs[1], inputs[0]}, generic.getOutputs(),
      ArrayRef<AffineMap>{maps[1], maps[0], maps[2]},
      generic.getIteratorTypesArray());
  swapped->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Block *body = generic.getBody();
  auto args = body->getArguments();
  Block *block = rewriter.createBlock(
      &swapped.getRegion(), {},
      {args[1].getType(), args[0].getType(), args[2].getType()},
      {args[1].getLoc(), args[0].getLoc(), args[2].getLoc()});
  IRMapping mapping;
  mapping.map(args[0], block->getArgument(1));
  mapping.map(args[1], block->getArgument(0));
  mapping.map(args[2], block->getArgument(2));
  for (Operation &inner : *body)
    rewriter.clone(inner, mapping);
  if (!linalg::isaConvolutionOpInterface(swapped)) {
    rewriter.eraseOp(swapped);
    return failure();
  }
  rewriter.replaceOp(op, swapped);
  return swapped.getOperation();
}

bool mlir::dt::isMultiplyAccumulateAdjoint(Operation *op) {
  if (!isMultiplyAccumulate(op))
    return false;
  SmallVector<AffineMap> maps =
      cast<linalg::LinalgOp>(op).getIndexingMapsArray();
  return maps[0].isProjectedPermutation() && maps[1].isProjectedPermutation() &&
         !maps[2].isProjectedPermutation();
}

OpWork mlir::dt::estimateWork(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || (!linalg::isaContractionOpInterface(linalgOp) &&
                    !isMultiplyAccumulateConvolution(linalgOp) &&
                    !isMultiplyAccumulateAdjoint(linalgOp)))
    return OpWork();
  OpWork work;
  // A multiply and an add per point of the iteration space.
  work.flops = 2;
  for (int64_t range : linalgOp.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return OpWork();
    work.flops *= static_cast<double>(range);
  }
  work.loops = linalgOp.getNumLoops();
  // The multiplied elements set the rate: bf16 inputs run on tensor cores
  // even into an f32 result.
  unsigned widest = 0;
  for (OpOperand *input : linalgOp.getDpsInputOperands())
    if (auto type = dyn_cast<RankedTensorType>(input->get().getType()))
      if (type.getElementType().isIntOrFloat())
        widest =
            std::max(widest, type.getElementType().getIntOrFloatBitWidth());
  if (widest)
    work.elementBits = widest;
  return work;
}

/// The bytes of `op`'s tensors on one rank when mesh axes 0 to
/// strategy.size()-1 make `strategy`'s choices: each tensor divided by its
/// shards. With `readInitsOnly`, a linalg op's inits count only when its body
/// reads them (an elementwise op's init is a tensor.empty it writes over).
static double rankTensorBytes(Operation *op, const ShardingRule &rule,
                              const MeshInfo &mesh,
                              ArrayRef<AxisChoice> strategy,
                              bool readInitsOnly) {
  double bytes = 0;
  auto addTensor = [&](Type type, bool isResult, unsigned index) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return;
    double local = tensorBytes(tensor);
    for (auto [axis, choice] : llvm::enumerate(strategy))
      if (placementUnder(rule, choice, isResult, index).isShard())
        local /= static_cast<double>(mesh.shape[axis]);
    bytes += local;
  };
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
    if (!rule.isTensorOperand(i))
      continue;
    OpOperand &operand = op->getOpOperand(i);
    if (readInitsOnly && linalgOp && linalgOp.isDpsInit(&operand) &&
        !linalgOp.payloadUsesValueFromOperand(&operand))
      continue;
    addTensor(operand.get().getType(), false, i);
  }
  for (unsigned j = 0, e = op->getNumResults(); j < e; ++j)
    if (rule.isTensorResult(j))
      addTensor(op->getResult(j).getType(), true, j);
  return bytes;
}

double mlir::dt::rankComputeSeconds(const OpWork &work, Operation *op,
                                    const ShardingRule &rule,
                                    const MeshInfo &mesh,
                                    ArrayRef<AxisChoice> strategy) {
  if (work.flops == 0)
    return 0;
  double flops = work.flops;
  for (auto [axis, choice] : llvm::enumerate(strategy))
    if (choice.kind == AxisChoice::Kind::ShardFactor &&
        choice.index < work.loops)
      flops /= static_cast<double>(mesh.shape[axis]);
  // The op's own tensors, each divided by its shards; a table a body reads
  // from above is read at a few rows, not whole.
  double bytes =
      rankTensorBytes(op, rule, mesh, strategy, /*readInitsOnly=*/false);
  return mesh.topology.device().seconds(flops, bytes, work.elementBits);
}

std::optional<int64_t> mlir::dt::runsPerCall(Operation *op) {
  if (op->getParentOfType<scf::WhileOp>())
    return std::nullopt;
  uint64_t runs = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips)
      return std::nullopt;
    runs = llvm::SaturatingMultiply(runs, trips->getLimitedValue());
  }
  return std::min<uint64_t>(runs, std::numeric_limits<int64_t>::max());
}

bool mlir::dt::movesMemory(Operation *op, const OpWork &work) {
  if (isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::CastOp, arith::ConstantOp, ConstrainOp, RedistributeOp>(op))
    return false;
  return work.flops == 0 &&
         llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>);
}

double mlir::dt::rankMemorySeconds(Operation *op, const ShardingRule &rule,
                                   const MeshInfo &mesh,
                                   ArrayRef<AxisChoice> strategy) {
  double bytes =
      rankTensorBytes(op, rule, mesh, strategy, /*readInitsOnly=*/true);
  return bytes / mesh.topology.device().memoryBytesPerSecond;
}

std::string mlir::dt::locationName(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    auto named = dyn_cast<NameLoc>(inner);
    if (named)
      name = named.getName().str();
    return named ? WalkResult::interrupt() : WalkResult::advance();
  });
  return name;
}

std::string mlir::dt::fileLineColumn(Location loc) {
  FileLineColLoc file = findFileLineCol(loc);
  if (!file)
    return "";
  return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
          Twine(file.getLine()) + ":" + Twine(file.getColumn()))
      .str();
}

std::string mlir::dt::formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.1f %s", bytes, units[unit]);
  return text;
}

std::string mlir::dt::formatSeconds(double seconds) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (seconds < 1e-3)
    os << llvm::format("%.1f us", seconds * 1e6);
  else
    os << llvm::format("%.2f ms", seconds * 1e3);
  return text;
}
