//===- Placement.cpp - DTensor placements as plain values -----------------===//

#include "dt/Sharding/Placement.h"

namespace dt {

std::string_view reductionKindName(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return "sum";
  case ReductionKind::Avg:
    return "avg";
  case ReductionKind::Max:
    return "max";
  case ReductionKind::Min:
    return "min";
  }
  return "sum";
}

std::optional<ReductionKind> parseReductionKind(std::string_view name) {
  for (ReductionKind kind : {ReductionKind::Sum, ReductionKind::Avg,
                             ReductionKind::Max, ReductionKind::Min})
    if (reductionKindName(kind) == name)
      return kind;
  return std::nullopt;
}

std::string Placement::str() const {
  switch (kind_) {
  case Kind::Replicate:
    return "R";
  case Kind::Shard:
    return "S(" + std::to_string(dim_) + ")";
  case Kind::Partial:
    return "P(" + std::string(reductionKindName(reduction_)) + ")";
  }
  return "R";
}

} // namespace dt
