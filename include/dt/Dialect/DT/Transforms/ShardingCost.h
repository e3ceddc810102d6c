//===- ShardingCost.h - Mesh facts and redistribution costs -----*- C++ -*-===//
//
// What propagation and the cost report need to price a change of placement:
// the mesh's shape and links, and the alpha-beta cost of moving a tensor
// between two placements on one mesh axis.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_TRANSFORMS_SHARDINGCOST_H
#define DT_DIALECT_DT_TRANSFORMS_SHARDINGCOST_H

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Sharding/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>

namespace mlir::dt {

/// A mesh with its links, resolved once per pass.
struct MeshInfo {
  MeshOp op;
  SmallVector<int64_t> shape;
  SmallVector<std::string> axisNames;
  ::dt::Topology topology;
};

/// Resolves meshes by symbol, reading an optional topology description file
/// (see docs/Design.md) that overrides the default links.
class MeshCache {
public:
  explicit MeshCache(std::string topologyFile = "")
      : topologyFile(std::move(topologyFile)) {}

  /// The mesh `ref` names from `from`; emits an error and returns null when
  /// the mesh or the topology file is bad.
  const MeshInfo *lookup(Operation *from, FlatSymbolRefAttr ref);

private:
  std::string topologyFile;
  SymbolTableCollection symbolTables;
  DenseMap<Operation *, std::unique_ptr<MeshInfo>> meshes;
};

/// Bytes of one element of `type`'s element type (i1 counts as one byte).
int64_t elementBytes(Type elementType);

/// Bytes of the global tensor of `type`.
double tensorBytes(RankedTensorType type);

/// The collective that moves one mesh axis from `from` to `to` in one step,
/// if it needs one (R -> S and R -> P are local).
std::optional<::dt::CollectiveKind> collectiveFor(::dt::Placement from,
                                                  ::dt::Placement to);

/// Bytes of the tensor as the group of mesh axis `axis` sees it under
/// `placements`: the global size divided by the other axes that shard it.
double groupBytes(const MeshInfo &mesh, unsigned axis, RankedTensorType type,
                  ArrayRef<::dt::Placement> placements);

/// Estimated seconds to move mesh axis `axis` of a tensor of `type` from
/// `from` to `to`, the other axes as in `placements`. Changes with no direct
/// collective (S -> P, P(k) -> P(j)) go through R.
double axisTransitionSeconds(const MeshInfo &mesh, unsigned axis,
                             RankedTensorType type,
                             ArrayRef<::dt::Placement> placements,
                             ::dt::Placement from, ::dt::Placement to);

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_SHARDINGCOST_H
