//===- Layout.cpp - Global tensors <-> the shards of each rank ------------===//
//
// The placement math is dt's one copy in include/dt/Sharding/ShardLayout.h;
// this file applies it to host buffers.
//
//===----------------------------------------------------------------------===//

#include "dt/Runtime/Job.h"
#include "dt/Sharding/ShardLayout.h"

#include "absl/strings/str_cat.h"

#include <cstring>

namespace dt::rt {

namespace {
std::vector<Placement> placementsOf(const TensorSpec &spec, const Mesh &mesh) {
  if (!spec.placements.empty())
    return spec.placements;
  return std::vector<Placement>(mesh.shape.size(), Placement::replicate());
}
} // namespace

std::vector<int64_t> localShape(const TensorSpec &spec, const Mesh &mesh) {
  if (mesh.shape.empty())
    return spec.shape;
  return maxLocalShape(spec.shape, mesh.shape, placementsOf(spec, mesh));
}

void shardBox(const TensorSpec &spec, const Mesh &mesh, int64_t rank,
              std::vector<int64_t> &offset, std::vector<int64_t> &shape) {
  if (mesh.shape.empty()) {
    offset.assign(spec.shape.size(), 0);
    shape = spec.shape;
    return;
  }
  ShardBox box = dt::shardBox(spec.shape, mesh.shape, placementsOf(spec, mesh),
                              meshCoords(mesh.shape, rank));
  offset = std::move(box.offset);
  shape = std::move(box.shape);
}

bool holdsZeros(const TensorSpec &spec, const Mesh &mesh, int64_t rank) {
  // An empty mesh is the single device of the reference program.
  if (spec.placements.empty() || mesh.shape.empty())
    return false;
  std::vector<int64_t> coords = meshCoords(mesh.shape, rank);
  for (size_t axis = 0; axis < spec.placements.size(); ++axis) {
    const Placement &p = spec.placements[axis];
    if (p.isPartial() && p.reduction() == ReductionKind::Sum && coords[axis] != 0)
      return true;
  }
  return false;
}

HostTensor extractShard(const HostTensor &global, const TensorSpec &spec,
                        const Mesh &mesh, int64_t rank) {
  HostTensor local(spec.dtype, localShape(spec, mesh));
  if (holdsZeros(spec, mesh, rank))
    return local;
  std::vector<int64_t> offset, shape;
  shardBox(spec, mesh, rank, offset, shape);
  copyBox(global.data(), global.shape(), offset, local.data(), local.shape(),
          std::vector<int64_t>(shape.size(), 0), shape, dtypeSize(spec.dtype));
  return local;
}

namespace {
template <typename T>
void combine(T *acc, const T *x, int64_t n, ReductionKind kind) {
  for (int64_t i = 0; i < n; ++i) {
    switch (kind) {
    case ReductionKind::Sum:
    case ReductionKind::Avg:
      acc[i] += x[i];
      break;
    case ReductionKind::Max:
      acc[i] = std::max(acc[i], x[i]);
      break;
    case ReductionKind::Min:
      acc[i] = std::min(acc[i], x[i]);
      break;
    }
  }
}
} // namespace

absl::StatusOr<HostTensor>
assembleGlobal(absl::Span<const HostTensor *const> locals,
               const TensorSpec &spec, const Mesh &mesh) {
  std::vector<Placement> placements = placementsOf(spec, mesh);
  // Partial axes of sum and avg add up; the averaging axes then divide by
  // their ranks. Max and min each stand alone (the verifier rejects other
  // mixes).
  std::optional<ReductionKind> kind;
  int64_t averagedRanks = 1;
  for (size_t axis = 0; axis < placements.size(); ++axis) {
    if (!placements[axis].isPartial())
      continue;
    ReductionKind k = placements[axis].reduction();
    if (kind && !partialKindsCommute(*kind, k))
      return absl::InvalidArgumentError(absl::StrCat(
          spec.label("result"), " is partial with reductions ",
          std::string(reductionKindName(*kind)), " and ",
          std::string(reductionKindName(k)), ", which do not commute"));
    if (k == ReductionKind::Avg)
      averagedRanks *= mesh.shape[axis];
    kind = k == ReductionKind::Avg ? ReductionKind::Sum : k;
  }
  // Partial pieces are reduced in double precision for floats, then
  // converted once: the gather adds no rounding of its own.
  bool wide = !isIntegerDType(spec.dtype);
  int64_t n = numElements(spec.shape);
  std::vector<double> accD(kind ? n : 0);
  std::vector<int64_t> accI(kind && !wide ? n : 0);
  HostTensor global(spec.dtype, spec.shape);
  std::vector<bool> first(kind ? n : 0, true);

  for (int64_t rank = 0; rank < mesh.size(); ++rank) {
    std::vector<int64_t> coords =
        mesh.shape.empty() ? std::vector<int64_t>{} : meshCoords(mesh.shape, rank);
    bool skip = false;
    for (size_t axis = 0; axis < placements.size(); ++axis)
      skip |= placements[axis].isReplicate() && coords[axis] != 0;
    if (skip)
      continue;
    std::vector<int64_t> offset, shape;
    shardBox(spec, mesh, rank, offset, shape);
    const HostTensor &local = *locals[rank];
    if (!kind) {
      copyBox(local.data(), local.shape(), std::vector<int64_t>(shape.size(), 0),
              global.data(), global.shape(), offset, shape,
              dtypeSize(spec.dtype));
      continue;
    }
    // Partial: fold this rank's box into the accumulator, element by element.
    HostTensor piece(spec.dtype, shape);
    copyBox(local.data(), local.shape(), std::vector<int64_t>(shape.size(), 0),
            piece.data(), shape, std::vector<int64_t>(shape.size(), 0), shape,
            dtypeSize(spec.dtype));
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t i = 0; i < piece.numElements(); ++i) {
      int64_t flat = 0, rest = i;
      for (size_t d = shape.size(); d-- > 0;) {
        index[d] = rest % shape[d];
        rest /= shape[d];
      }
      for (size_t d = 0; d < shape.size(); ++d)
        flat = flat * spec.shape[d] + offset[d] + index[d];
      if (wide) {
        double v = piece.at(i);
        if (first[flat])
          accD[flat] = v;
        else
          combine(&accD[flat], &v, 1, *kind);
      } else {
        int64_t v = static_cast<int64_t>(piece.at(i));
        if (first[flat])
          accI[flat] = v;
        else
          combine(&accI[flat], &v, 1, *kind);
      }
      first[flat] = false;
    }
  }
  if (!kind)
    return global;
  for (int64_t i = 0; i < n; ++i) {
    if (wide) {
      global.set(i, accD[i] / static_cast<double>(averagedRanks));
      continue;
    }
    // Integers stay exact: only an average goes through division.
    char *p = static_cast<char *>(global.data()) + i * dtypeSize(spec.dtype);
    int64_t v = accI[i] / averagedRanks;
    if (spec.dtype == DType::I64)
      *reinterpret_cast<int64_t *>(p) = v;
    else
      storeElement(spec.dtype, p, static_cast<double>(v));
  }
  return global;
}

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
} // namespace

void fillSeeded(HostTensor &local, const TensorSpec &spec, const Mesh &mesh,
                int64_t rank, uint64_t seed) {
  if (holdsZeros(spec, mesh, rank))
    return;
  std::vector<int64_t> offset, shape;
  shardBox(spec, mesh, rank, offset, shape);
  const std::vector<int64_t> &localShape = local.shape();
  size_t r = shape.size();
  std::vector<int64_t> index(r, 0);
  uint64_t stream = splitmix64(seed * 1000003u + spec.index);
  for (int64_t i = 0; i < numElements(shape); ++i) {
    int64_t rest = i, globalFlat = 0, localFlat = 0;
    for (size_t d = r; d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    for (size_t d = 0; d < r; ++d) {
      globalFlat = globalFlat * spec.shape[d] + offset[d] + index[d];
      localFlat = localFlat * localShape[d] + index[d];
    }
    uint64_t bits = splitmix64(stream ^ static_cast<uint64_t>(globalFlat));
    double unit = static_cast<double>(bits >> 11) * 0x1.0p-53; // [0, 1)
    if (spec.dtype == DType::I1)
      local.set(localFlat, static_cast<double>(bits % 2));
    else if (isIntegerDType(spec.dtype))
      local.set(localFlat, static_cast<double>(bits % 17) - 8);
    else
      local.set(localFlat, 2 * unit - 1);
  }
}

} // namespace dt::rt
