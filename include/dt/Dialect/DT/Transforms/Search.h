//===- Search.h - dt-propagate's search of whole plans ----------*- C++ -*-===//
//
// Propagation is greedy: each op chooses with what is decided around it, so
// a move that many ops would share, or that pays off two ops later, can go
// unseen. The plan search prices whole plans instead, with values pinned to
// shardings, and tells propagation where a value is better placed.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_TRANSFORMS_SEARCH_H
#define DT_DIALECT_DT_TRANSFORMS_SEARCH_H

#include "dt/Dialect/DT/IR/DTAttrs.h"
#include "dt/Dialect/DT/Transforms/PlanSearch.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::dt {

class MeshCache;

/// Propagates every function of `module` as dt-propagate does after its
/// search (no explanations, no statistics).
LogicalResult propagateModule(ModuleOp module, MeshCache &meshes,
                              bool combine);

/// The one mesh a function's annotations use; null when it has none.
FailureOr<FlatSymbolRefAttr> functionMesh(func::FuncOp func);

/// The sharding a function's entry argument `arg` comes with: its type's
/// encoding, else its dt.sharding attribute (null: none).
ShardingAttr argumentSharding(BlockArgument arg);

/// A value of the program as the user wrote it, pinned to a sharding.
struct Pin {
  Value value;
  ShardingAttr sharding;
  /// The plan's modelled seconds before and after this pin (explanations).
  double before = 0, after = 0;
  /// Searching by windows: how many pins were kept with this one (before
  /// and after are theirs together), what this one saved in its window,
  /// and, when that window ran in a copy of its loop, how many of the
  /// loop's values it carried (else nullopt).
  unsigned together = 1;
  double inWindow = 0;
  std::optional<unsigned> loopCarried;
};

/// Replaces the uses of each pin's value with a dt.constrain of it to the
/// pin's sharding.
void insertPins(ArrayRef<Pin> pins);

/// How far from its value a window of the plan search reaches, in use-def
/// steps.
inline constexpr unsigned kWindowSteps = 3;

/// The plan search. Each round prices the plan with each value an op makes
/// pinned to each sharding (a dt.constrain), and each argument to each
/// sharding but its own when that round still fits in the budget, and keeps
/// the cheapest pin if it saves more than a tie (0.1 us, or 1% of a plan
/// under 10 us) and a device holds its plan (when it holds the plan without
/// pins); the next round goes on from there. (Pinning a value to the
/// sharding the rules gave it counts too: fixed from the start, it changes
/// what the ops around it decide first.) Plans are priced as dt-cost-report
/// prices them: collectives, combined calls once, contractions' compute and
/// memory-bound ops. Pins are hard constraints, so propagation stays what
/// decides; the search only says where a value is better placed. It runs
/// when a first round fits in the budget of plans priced, and stops where
/// the budget ends, so the same input gives the same plan.
///
/// A program too large for a first round of whole plans is searched by
/// windows (`windows`): each value's window is the ops of its block (a
/// function's entry block, an scf.for's body or an scf.if's branch) within
/// kWindowSteps use-def steps of it (small loops, scf.while too, and
/// branches whole), a function of its own whose arguments come, and whose
/// results leave, as the plan has them (in a loop's body, inside a copy of
/// the loop that carries what they read and make the next of). A pin is
/// priced on its window alone, against the value pinned as the plan has
/// it, so a round costs what one whole plan costs times the window's share
/// of the program; pins whose windows do not overlap are then kept
/// together if the whole plan with them is cheaper (fewer of them, the
/// ones that saved most, until it is). A round reprices only the windows
/// whose edges the last pins changed, and windows that are the same
/// program (the layers of a model) are propagated once.
class PlanSearch {
public:
  PlanSearch(ModuleOp module, StringRef topology, bool combine, unsigned budget,
             bool pinArguments, bool windows)
      : module(module), topology(topology.str()), combine(combine),
        budget(budget), pinArguments(pinArguments), windows(windows) {}

  /// The pins of the cheapest plan priced, in the order they were found;
  /// empty when none is cheaper than the plan without.
  SmallVector<Pin> run();

  /// A copy of the module propagated with pins (Search.cpp).
  struct Plan;

  /// How many plans were priced.
  unsigned numPriced = 0;
  /// How many plans a first round prices: the candidate values' shardings,
  /// and the plan without pins.
  size_t firstRound = 0;
  /// When the arguments were not searched: the plans a first round with
  /// them would have priced.
  size_t argumentsLeftOut = 0;
  /// Whether the search went by windows, how many window plans it priced
  /// (at most 64 times the budget), and how many more were the same
  /// program as one it had priced.
  bool windowed = false;
  unsigned numWindowsPriced = 0, numWindowsReused = 0;
  /// The modelled seconds of the plan without pins, when priced.
  std::optional<double> unpinned;
  /// Where the search's summary goes (explanations): the first function it
  /// found values in.
  std::optional<Location> at;

private:
  struct Candidate {
    Value value;
    SmallVector<ShardingAttr> shardings;
  };
  /// The values ops make (`candidates`) and the function arguments
  /// (`argumentCandidates`) the search may pin, with their shardings.
  void collectCandidates();
  /// The module propagated with `pins` on a copy (a whole plan priced);
  /// nullopt when propagation fails there, or when a device cannot hold the
  /// plan (its largest live set per rank) but can hold the plan without
  /// pins.
  std::optional<Plan> wholePlan(ArrayRef<Pin> pins);
  /// Its modelled seconds.
  std::optional<double> price(ArrayRef<Pin> pins);
  /// The search of whole plans, and the one by windows.
  SmallVector<Pin> runWhole();
  SmallVector<Pin> runWindowed();

  ModuleOp module;
  std::string topology;
  bool combine;
  unsigned budget;
  bool pinArguments;
  bool windows;
  bool unpinnedFits = true;
  SmallVector<Candidate> candidates;
  SmallVector<Candidate> argumentCandidates;
};

} // namespace mlir::dt

#endif // DT_DIALECT_DT_TRANSFORMS_SEARCH_H
