//===- Placement.h - DTensor placements as plain values ---------*- C++ -*-===//
//
// A placement says how one mesh axis holds a tensor: replicated (R), sharded
// along a tensor dim (S(d)), or as a partial value awaiting a reduction
// (P(sum|avg|max|min)). This header is plain C++17 with no LLVM/MLIR types:
// the compiler, the runtime and the tests all share it.
//
//===----------------------------------------------------------------------===//

#ifndef DT_SHARDING_PLACEMENT_H
#define DT_SHARDING_PLACEMENT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dt {

/// How the partial values on the ranks of one mesh axis combine into the
/// global value.
enum class ReductionKind : uint8_t { Sum, Avg, Max, Min };

/// The spelling used in IR and diagnostics: "sum", "avg", "max", "min".
std::string_view reductionKindName(ReductionKind kind);

/// Parses a spelling of `reductionKindName`; nullopt for anything else.
std::optional<ReductionKind> parseReductionKind(std::string_view name);

/// The placement of a tensor on one mesh axis.
class Placement {
public:
  enum class Kind : uint8_t { Replicate, Shard, Partial };

  static Placement replicate() { return Placement(Kind::Replicate, 0, {}); }
  static Placement shard(int64_t dim) { return Placement(Kind::Shard, dim, {}); }
  static Placement partial(ReductionKind reduction = ReductionKind::Sum) {
    return Placement(Kind::Partial, 0, reduction);
  }

  Kind kind() const { return kind_; }
  bool isReplicate() const { return kind_ == Kind::Replicate; }
  bool isShard() const { return kind_ == Kind::Shard; }
  bool isShard(int64_t dim) const { return isShard() && dim_ == dim; }
  bool isPartial() const { return kind_ == Kind::Partial; }

  /// The sharded tensor dim; meaningful only for `isShard()`.
  int64_t dim() const { return dim_; }
  /// The reduction of a partial value; meaningful only for `isPartial()`.
  ReductionKind reduction() const { return reduction_; }

  /// "R", "S(d)" or "P(kind)"; a partial always names its kind.
  std::string str() const;

  friend bool operator==(const Placement &a, const Placement &b) {
    return a.kind_ == b.kind_ && a.dim_ == b.dim_ &&
           a.reduction_ == b.reduction_;
  }
  friend bool operator!=(const Placement &a, const Placement &b) {
    return !(a == b);
  }

private:
  Placement(Kind kind, int64_t dim, ReductionKind reduction)
      : dim_(dim), kind_(kind), reduction_(reduction) {}

  // Fields that do not apply to the kind stay zero, so equality and hashing
  // can compare every field.
  int64_t dim_;
  Kind kind_;
  ReductionKind reduction_;
};

/// The inverse of `Placement::str()`: "R", "S(d)", "P(kind)" (also "P",
/// a sum); nothing on any other text.
std::optional<Placement> parsePlacement(std::string_view text);

/// The placements of `placements` (any range of them) as text, `separator`
/// between them: "S(0), R"; "S(0),R" is what the runtime reads.
template <typename Range>
std::string joinPlacements(const Range &placements,
                           std::string_view separator = ", ") {
  std::string text;
  for (const Placement &p : placements) {
    if (!text.empty())
      text += separator;
    text += p.str();
  }
  return text;
}

/// True for the reductions that add the ranks' parts (sum and avg, both
/// linear); max and min instead pick one of equal or unequal values.
bool isLinearReduction(ReductionKind kind);

/// True when partial values of kinds `a` and `b` on two mesh axes reduce to
/// the same global value in either order: sum and avg (both linear), or the
/// same kind. Max after sum is not sum after max, so a sharding whose partial
/// axes mix kinds that do not commute has no single meaning.
bool partialKindsCommute(ReductionKind a, ReductionKind b);

} // namespace dt

#endif // DT_SHARDING_PLACEMENT_H
