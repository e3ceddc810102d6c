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
#include "dt/Dialect/DT/IR/ShardingRule.h"
#include "dt/Sharding/CostModel.h"
#include "dt/Sharding/Exchange.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

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

/// The mesh axes a collective's `axes` attribute names, as indices, and how
/// many ranks their group holds.
struct AxisGroup {
  SmallVector<int64_t> axes;
  int64_t size = 1;
};
AxisGroup axisGroup(const MeshInfo &mesh, ArrayAttr names);

/// The collective a dt.all_reduce, dt.all_gather, dt.reduce_scatter or
/// dt.all_to_all is; none for another op.
std::optional<::dt::CollectiveKind> collectiveKindOf(Operation *op);

/// The dim a dt.all_gather or dt.reduce_scatter gathers or scatters (0 for
/// other collectives), and whether its pieces are even (no `extent`).
struct CollectiveDim {
  int64_t dim = 0;
  bool even = true;
};
CollectiveDim collectiveDimOf(Operation *op);

/// The modelled cost of a dt.exchange in either form (none when its group
/// is too large to price part by part).
std::optional<::dt::ExchangeCost> exchangeCostOf(ExchangeOp op,
                                                 const MeshInfo &mesh);

/// Bytes of one element of `type`'s element type (i1 counts as one byte).
int64_t elementBytes(Type elementType);

/// Bytes of the global tensor of `type`.
double tensorBytes(RankedTensorType type);

/// The bytes the ring formula counts for a collective of `kind` on local
/// tensors `in` -> `out` over `groupSize` ranks: what the group gathers
/// (the result) or reduces (the input); an all_to_all moves one piece of
/// its input to each member.
double localRingBytes(::dt::CollectiveKind kind, RankedTensorType in,
                      RankedTensorType out, int64_t groupSize);

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

/// Estimated seconds an all_reduce of mesh axis `axis` of a tensor of
/// `type` (the other axes as in `placements`) adds when it runs in one call
/// with others of its group (dt-combine-collectives): its bytes on the wire
/// and the copies the combined buffer costs, as the bucket model counts
/// them (Buckets.h), but no latency of its own. The copy in, unless the
/// input is `madeForIt` (isMadeForItsCollective) and a whole number of
/// runs (dt-fill-buckets-in-place makes it in the buffer); the copy out
/// when the result is `returned` (into the caller's buffer). Never more
/// than the all_reduce on its own.
double joinedAllReduceSeconds(const MeshInfo &mesh, unsigned axis,
                              RankedTensorType type,
                              ArrayRef<::dt::Placement> placements,
                              bool madeForIt, bool returned);

/// Estimated seconds to move a tensor of `type` from `from` to `to`, one
/// mesh axis after another.
double redistributionSeconds(const MeshInfo &mesh, RankedTensorType type,
                             ArrayRef<::dt::Placement> from,
                             ArrayRef<::dt::Placement> to);

/// The arithmetic an op does on one device: its flops, how many of its rule's
/// factors are loops of its iteration space (factors 0 to loops-1; splitting
/// one of them splits the flops), and the width of the elements it
/// multiplies (the widest of its inputs).
struct OpWork {
  double flops = 0;
  unsigned loops = 0;
  unsigned elementBits = 32;
};

/// Whether `op` is a linalg op whose body multiplies its two inputs and
/// adds the product to its init (floats or integers, through casts).
bool isMultiplyAccumulate(Operation *op);

/// Whether `op` is a convolution that multiplies and accumulates (floats or
/// integers; not a pooling): as much work per point as a contraction, and a
/// matmul of its input's patches (dt-convolutions-to-matmuls).
bool isMultiplyAccumulateConvolution(Operation *op);

/// `op`, a multiply-accumulate linalg.generic whose first input is read at
/// loops and whose second at sums of them (`dw[kh, kw, c, f] += dy[n, h, w,
/// f] * x[n, h + kh, w + kw, c]`, a filter's gradient as the chain rule
/// writes it), rebuilt with its inputs the other way round when that makes
/// it a convolution (upstream's convolution interface takes the image
/// first): the same products, added in the same order. The new op, or
/// failure with nothing changed.
FailureOr<Operation *> swapIntoConvolution(RewriterBase &rewriter,
                                           Operation *op);

/// Whether `op` is a convolution's adjoint: a multiply-accumulate whose
/// inputs are read at loops and whose output is written at sums of them
/// (`dx[n, h + kh, w + kw, c] += dy[n, h, w, f] * w[kh, kw, c, f]`, an
/// input's gradient), as much work per point as a contraction.
bool isMultiplyAccumulateAdjoint(Operation *op);

/// What `op` computes, for contractions (matmul, batch_matmul, generics that
/// multiply and accumulate) and convolutions that multiply and accumulate
/// (not poolings), with static loops: two flops per point of the iteration
/// space. Other ops count as no work: elementwise ops, reductions
/// and data movement read and write each element once, at a memory
/// bandwidth ten times the links', so whether they run split or replicated
/// weighs little beside the collectives around them; counting them would
/// only break ties of equal wire time, against the rule that a tie goes to
/// the choice that moves nothing (a Megatron MLP keeps its one all_reduce
/// rather than a reduce_scatter, an add on a slice and an all_gather). That
/// holds for one op's choice; a whole plan (dt-cost-report, the plan
/// search) prices them with rankMemorySeconds, or a plan that gathers a
/// tensor once and runs every op after it replicated would look free.
OpWork estimateWork(Operation *op);

/// Modelled seconds each rank spends computing `op` (of `work`) when mesh
/// axes 0 to strategy.size()-1 make `strategy`'s choices and the later axes
/// replicate: the flops divided by the loops the strategy splits, the bytes
/// of each of the op's tensors divided by that tensor's shards, at the
/// roofline of the mesh's devices. Partial choices split nothing: each rank
/// runs the whole op on its partial values.
double rankComputeSeconds(const OpWork &work, Operation *op,
                          const ShardingRule &rule, const MeshInfo &mesh,
                          ArrayRef<AxisChoice> strategy);

/// How often one call of its function runs `op`: the product of the
/// constant trip counts of the scf.for loops around it (none if one is not
/// constant, or a while loop is around it).
std::optional<int64_t> runsPerCall(Operation *op);

/// Whether `op`, of `work` (estimateWork), is memory-bound work the plan
/// prices (rankMemorySeconds): an op on tensors that does no contraction and
/// is not a view, an empty tensor, a constant or a dt op.
bool movesMemory(Operation *op, const OpWork &work);

/// Modelled seconds each rank spends streaming a memory-bound op's tensors
/// (elementwise ops, reductions, transposes, fills: movesMemory) through
/// memory, each divided by its shards under `strategy` (an init the body
/// does not read is only written). The propagation rules leave this out
/// (estimateWork says why); whole plans count it: run replicated, such an
/// op costs each rank the whole tensor.
double rankMemorySeconds(Operation *op, const ShardingRule &rule,
                         const MeshInfo &mesh, ArrayRef<AxisChoice> strategy);

/// What dt-cost-report totals for the sharded functions of a typed
/// `module`, added up: the time of their collectives (calls
/// dt-combine-collectives would combine counted once, with `combine`; every
/// run of a loop counted) plus their contractions' compute and memory-bound
/// ops on each rank, in seconds; nullopt (with an error) when a mesh or the
/// topology is bad. `overDevice`, when given, says whether a function's
/// largest live set per rank is more than the device holds.
std::optional<double> modelledSeconds(ModuleOp module, MeshCache &meshes,
                                      bool combine, bool *overDevice = nullptr);

/// The first name in `loc` (a NameLoc: a step of an op dt took apart, or a
/// name the program gave), or "".
std::string locationName(Location loc);

/// `f.mlir:12:8` for the first file location in `loc` (the file's name
/// without its directory); empty if there is none.
std::string fileLineColumn(Location loc);

/// `bytes` for people: `1.5 KiB`, `24.0 MiB`.
std::string formatBytes(double bytes);

/// `seconds` for people: `18.1 us` below a millisecond, else `1.25 ms`.
std::string formatSeconds(double seconds);

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_SHARDINGCOST_H
