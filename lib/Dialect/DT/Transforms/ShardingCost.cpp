//===- ShardingCost.cpp - Mesh facts and redistribution costs -------------===//

#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "llvm/Support/MemoryBuffer.h"

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

int64_t mlir::dt::elementBytes(Type elementType) {
  return std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8);
}

double mlir::dt::tensorBytes(RankedTensorType type) {
  return static_cast<double>(type.getNumElements()) *
         static_cast<double>(elementBytes(type.getElementType()));
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
