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

bool isLinearReduction(ReductionKind kind) {
  return kind == ReductionKind::Sum || kind == ReductionKind::Avg;
}

bool partialKindsCommute(ReductionKind a, ReductionKind b) {
  return a == b || (isLinearReduction(a) && isLinearReduction(b));
}

std::optional<Placement> parsePlacement(std::string_view text) {
  if (text == "R")
    return Placement::replicate();
  if (text == "P")
    return Placement::partial();
  auto inside = [&](std::string_view head) -> std::optional<std::string_view> {
    if (text.size() < head.size() + 2 || text.substr(0, head.size()) != head ||
        text[head.size()] != '(' || text.back() != ')')
      return std::nullopt;
    return text.substr(head.size() + 1, text.size() - head.size() - 2);
  };
  if (std::optional<std::string_view> dim = inside("S")) {
    if (dim->empty() || dim->size() > 9)
      return std::nullopt;
    int64_t value = 0;
    for (char c : *dim) {
      if (c < '0' || c > '9')
        return std::nullopt;
      value = value * 10 + (c - '0');
    }
    return Placement::shard(value);
  }
  if (std::optional<std::string_view> kind = inside("P"))
    if (std::optional<ReductionKind> reduction = parseReductionKind(*kind))
      return Placement::partial(*reduction);
  return std::nullopt;
}

} // namespace dt
