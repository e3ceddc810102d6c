//===- PlanSearch.h - The plan search's default budget ----------*- C++ -*-===//
//
// What tools and libraries that set dt-propagate's plan search budget share,
// without the pass declarations.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_TRANSFORMS_PLANSEARCH_H
#define DT_DIALECT_DT_TRANSFORMS_PLANSEARCH_H

namespace mlir::dt {

/// How many whole plans dt-propagate's plan search may price unless told
/// (its `search` option, dt-shard's, dt-compile's --plan-search).
inline constexpr unsigned kDefaultPlanSearch = 256;

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_PLANSEARCH_H
