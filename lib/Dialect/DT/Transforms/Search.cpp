//===- Search.cpp - dt-propagate's search of whole plans -----------------===//
//
// Prices whole plans with values pinned to shardings, on copies of the
// module propagated as dt-propagate propagates, to find where a value is
// better placed than the greedy rules put it.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/Transforms/Search.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"
#include "dt/Dialect/DT/Transforms/Strategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;

void mlir::dt::insertPins(ArrayRef<Pin> pins) {
  for (Pin pin : pins) {
    OpBuilder builder(pin.value.getContext());
    builder.setInsertionPointAfterValue(pin.value);
    auto constrain = ConstrainOp::create(builder, pin.value.getLoc(), pin.value,
                                         pin.sharding);
    pin.value.replaceAllUsesExcept(constrain.getResult(), constrain);
  }
}

/// Every sharding of a tensor of `type` on `mesh` whose shards are even:
/// per mesh axis (of more than one rank), replicated, sharded on a dim, or
/// a partial sum (not for booleans).
static SmallVector<ShardingAttr> evenShardings(RankedTensorType type,
                                               const MeshInfo &mesh,
                                               FlatSymbolRefAttr meshRef) {
  SmallVector<SmallVector<Placement>> shardings = {{}};
  for (int64_t ranks : mesh.shape) {
    SmallVector<Placement> options = {Placement::replicate()};
    if (ranks > 1) {
      for (int64_t dim = 0, e = type.getRank(); dim < e; ++dim)
        options.push_back(Placement::shard(dim));
      if (!type.getElementType().isInteger(1))
        options.push_back(Placement::partial());
    }
    SmallVector<SmallVector<Placement>> longer;
    for (const SmallVector<Placement> &prefix : shardings)
      for (Placement option : options) {
        longer.push_back(prefix);
        longer.back().push_back(option);
      }
    shardings = std::move(longer);
  }
  SmallVector<ShardingAttr> even;
  for (const SmallVector<Placement> &placements : shardings) {
    SmallVector<int64_t> pieces(type.getRank(), 1);
    for (auto [axis, p] : llvm::enumerate(placements))
      if (p.isShard())
        pieces[p.dim()] *= mesh.shape[axis];
    if (llvm::all_of(llvm::seq<int64_t>(0, type.getRank()), [&](int64_t d) {
          return type.getDimSize(d) % pieces[d] == 0;
        }))
      even.push_back(ShardingAttr::get(type.getContext(), meshRef, placements));
  }
  return even;
}

void PlanSearch::collectCandidates() {
  MeshCache meshes(topology);
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    FailureOr<FlatSymbolRefAttr> meshRef = functionMesh(func);
    if (failed(meshRef) || !*meshRef)
      continue;
    const MeshInfo *mesh = meshes.lookup(func, *meshRef);
    if (!mesh)
      continue;
    // An argument keeps the sharding it comes in with; pinned to another
    // (replicated or sharded; not a partial sum, to keep the round small),
    // it is redistributed once at the entry, for all its readers.
    for (BlockArgument arg :
         pinArguments ? func.getArguments() : ArrayRef<BlockArgument>()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape() || type.getEncoding() ||
          !isSupportedElementType(type.getElementType()) || arg.use_empty())
        continue;
      ShardingAttr own = argumentSharding(arg);
      SmallVector<ShardingAttr> shardings =
          evenShardings(type, *mesh, *meshRef);
      llvm::erase_if(shardings, [&](ShardingAttr sharding) {
        return sharding == own ||
               llvm::any_of(sharding.getPlacements(),
                            [](Placement p) { return p.isPartial(); });
      });
      argumentCandidates.push_back({arg, std::move(shardings)});
      if (!at)
        at = func.getLoc();
    }
    func.walk([&](Operation *op) {
      if (isa<ConstrainOp, RedistributeOp, tensor::EmptyOp, linalg::FillOp,
              arith::ConstantOp>(op))
        return isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                         : WalkResult::advance();
      for (Value result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || !type.hasStaticShape() || type.getEncoding() ||
            !isSupportedElementType(type.getElementType()) ||
            result.use_empty())
          continue;
        candidates.push_back({result, evenShardings(type, *mesh, *meshRef)});
        if (!at)
          at = func.getLoc();
      }
      // A linalg body is scalar code.
      return isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                       : WalkResult::advance();
    });
  }
}

std::optional<double> PlanSearch::price(ArrayRef<Pin> pins) {
  ++numPriced;
  IRMapping mapping;
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone(mapping)));
  insertPins(llvm::map_to_vector(pins, [&](const Pin &pin) {
    return Pin{mapping.lookup(pin.value), pin.sharding};
  }));
  MeshCache meshes(topology);
  if (failed(propagateModule(*copy, meshes, combine)))
    return std::nullopt;
  return modelledSeconds(*copy, meshes, combine);
}

/// What a pin must save on a plan of `seconds` to be kept: a tie's 0.1 us,
/// or 1% of a plan cheaper than 10 us, whose savings are all small.
static double searchTie(double seconds) {
  return std::min(kTieSeconds, 0.01 * seconds);
}

SmallVector<Pin> PlanSearch::run() {
  // Whatever the search meets (a bad mesh, a program propagation rejects)
  // is the business of the real propagation after it, which reports it.
  ScopedDiagnosticHandler quiet(module.getContext(),
                                [](Diagnostic &) { return success(); });
  collectCandidates();
  auto roundOf = [](ArrayRef<Candidate> candidates) {
    size_t plans = 0;
    for (const Candidate &candidate : candidates)
      plans += candidate.shardings.size();
    return plans;
  };
  firstRound = 1 + roundOf(candidates);
  // Arguments are searched too when a first round with them still fits.
  size_t withArguments = firstRound + roundOf(argumentCandidates);
  if (withArguments <= budget || candidates.empty()) {
    firstRound = withArguments;
    llvm::append_range(candidates, argumentCandidates);
  } else if (!argumentCandidates.empty()) {
    argumentsLeftOut = withArguments;
  }
  if (candidates.empty() || firstRound > budget)
    return {};
  std::optional<double> current = price({});
  if (!current)
    return {};
  unpinned = current;
  SmallVector<Pin> pins;
  SmallVector<bool> pinned(candidates.size(), false);
  // A round after a pin first tries only the pins that saved in the round
  // before: most values gain nothing from any pin, and mostly still gain
  // nothing after another. Only when none of those saves does a full round
  // try every value again, so the search ends where a full round finds
  // nothing, as when every round is full, in a few full rounds instead of
  // one per pin.
  using Move = std::pair<size_t, ShardingAttr>;
  SmallVector<Move> savers;
  bool full = true;
  while (numPriced < budget) {
    std::optional<std::pair<size_t, Pin>> best;
    SmallVector<Move> saved;
    double tie = searchTie(*current);
    auto tryPin = [&](size_t i, ShardingAttr sharding) {
      if (pinned[i] || numPriced >= budget)
        return;
      pins.push_back({candidates[i].value, sharding});
      std::optional<double> seconds = price(pins);
      pins.pop_back();
      if (!seconds || *seconds >= *current - tie)
        return;
      saved.push_back({i, sharding});
      if (!best || *seconds < best->second.after - tie)
        best = {i, Pin{candidates[i].value, sharding, *current, *seconds}};
    };
    if (full) {
      for (auto [i, candidate] : llvm::enumerate(candidates))
        for (ShardingAttr sharding : candidate.shardings)
          tryPin(i, sharding);
    } else {
      for (auto [i, sharding] : savers)
        tryPin(i, sharding);
    }
    if (!best) {
      if (full)
        break;
      full = true;
      continue;
    }
    pinned[best->first] = true;
    pins.push_back(best->second);
    current = best->second.after;
    savers = std::move(saved);
    full = llvm::all_of(savers,
                        [&](const Move &move) { return pinned[move.first]; });
  }
  return pins;
}
