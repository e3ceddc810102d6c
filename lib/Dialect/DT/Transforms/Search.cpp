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
#include "dt/Support/QuietDiagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include <array>
#include <functional>
#include <map>
#include <vector>

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

/// A propagated copy of the module: the shardings a plan gives the values
/// of the module as written.
struct PlanSearch::Plan {
  OwningOpRef<ModuleOp> module;
  IRMapping mapping;
  double seconds = 0;
  /// Whether a function's largest live set per rank is more than the
  /// device holds.
  bool overDevice = false;

  /// The sharding `value` has in this plan (null: not a tensor, or not
  /// propagated).
  ShardingAttr sharding(Value value) const {
    // Propagation erases constraints, leaving the sharding they name.
    if (auto constrain = value.getDefiningOp<ConstrainOp>())
      return constrain.getShardingAttr();
    Value copy = mapping.lookupOrNull(value);
    return copy ? getShardingEncoding(copy.getType()) : ShardingAttr();
  }

  /// The sharding `use`'s owner reads its value in: after the
  /// redistribution the plan puts before it, if any.
  ShardingAttr readSharding(OpOperand &use) const {
    Operation *user = use.getOwner();
    if (auto constrain = dyn_cast<ConstrainOp>(user))
      return constrain.getShardingAttr();
    Operation *copy = mapping.lookupOrNull(user);
    if (!copy || copy->getNumOperands() != user->getNumOperands())
      return {};
    return getShardingEncoding(
        copy->getOperand(use.getOperandNumber()).getType());
  }
};

std::optional<PlanSearch::Plan> PlanSearch::wholePlan(ArrayRef<Pin> pins) {
  ++numPriced;
  Plan plan;
  plan.module = cast<ModuleOp>(module->clone(plan.mapping));
  insertPins(llvm::map_to_vector(pins, [&](const Pin &pin) {
    return Pin{plan.mapping.lookup(pin.value), pin.sharding};
  }));
  MeshCache meshes(topology);
  if (failed(propagateModule(*plan.module, meshes, combine)))
    return std::nullopt;
  std::optional<double> seconds =
      modelledSeconds(*plan.module, meshes, combine, &plan.overDevice);
  if (!seconds)
    return std::nullopt;
  plan.seconds = *seconds;
  // A pin whose plan a device cannot hold is no saving, unless the plan
  // without pins cannot be held either.
  if (pins.empty())
    unpinnedFits = !plan.overDevice;
  else if (plan.overDevice && unpinnedFits)
    return std::nullopt;
  return plan;
}

std::optional<double> PlanSearch::price(ArrayRef<Pin> pins) {
  std::optional<Plan> plan = wholePlan(pins);
  return plan ? std::optional<double>(plan->seconds) : std::nullopt;
}

/// What a pin must save on a plan of `seconds` to be kept: a tie's 0.1 us,
/// or 1% of a plan cheaper than 10 us, whose savings are all small.
static double searchTie(double seconds) {
  return std::min(kTieSeconds, 0.01 * seconds);
}

SmallVector<Pin> PlanSearch::run() {
  // Whatever the search meets (a bad mesh, a program propagation rejects)
  // is the business of the real propagation after it, which reports it.
  QuietDiagnostics quiet(module.getContext());
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
  if (withArguments <= budget || candidates.empty() || firstRound > budget) {
    firstRound = withArguments;
    llvm::append_range(candidates, argumentCandidates);
  } else if (!argumentCandidates.empty()) {
    argumentsLeftOut = withArguments;
  }
  if (candidates.empty())
    return {};
  if (firstRound > budget) {
    windowed = windows;
    return windowed ? runWindowed() : SmallVector<Pin>();
  }
  return runWhole();
}

SmallVector<Pin> PlanSearch::runWhole() {
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

//===----------------------------------------------------------------------===//
// The search by windows
//===----------------------------------------------------------------------===//

namespace {
/// The ops around a value that its window prices, with what crosses the
/// window's edge.
struct Window {
  /// Ops of one block (a function's entry block, or the body of an scf.for
  /// or scf.if in one), in block order.
  SmallVector<Operation *> ops;
  /// The loop whose body holds the ops, if any, and the values it carries
  /// that the window reads and makes the next of (the positions of its
  /// iter_args). The window runs in a copy of that loop, carrying those:
  /// a pin may change what a loop carries (a gradient summed as a partial
  /// sum, reduced once after the loop), and moves of what the ops read
  /// from outside are made once, before it.
  scf::ForOp loop;
  SmallVector<unsigned> carried;
  /// Values the ops read that are made outside and cost something to make
  /// (the window's arguments), in the order they are first read, then the
  /// initial values of what the loop carries and its bounds.
  SmallVector<Value> inputs;
  /// The uses outside of values the ops make (the window's results), then
  /// those of the loop's results the window carries.
  SmallVector<OpOperand *> exits;
  /// What the window is as a program, but for the shardings at its edge
  /// and the pins inside: its ops (names, attributes and types by
  /// identity, as MLIR uniques them; properties by hash; operands by
  /// position), the free values it makes again, its loop's bounds and what
  /// it carries, and its exits. Windows of equal shape and edge are the
  /// same program (a model's layers).
  std::vector<uintptr_t> shape;
  /// The position in `shape` of each value the window reads or makes.
  DenseMap<Value, uintptr_t> ids;

  bool makes(Value value) const {
    Operation *def = value.getDefiningOp();
    return def && llvm::is_contained(ops, def);
  }
  /// The bounds of the loop the window runs a copy of.
  std::array<Value, 3> bounds() const {
    scf::ForOp copied = loop;
    return {copied.getLowerBound(), copied.getUpperBound(), copied.getStep()};
  }
};
} // namespace

/// The most ops a window holds (a value read by many ops stops there),
/// counting those in the regions of the loops and branches it holds.
static constexpr size_t kWindowOps = 24;

/// How many ops a window counts `op` as: itself and the ops in its regions,
/// but for linalg bodies (scalar code); counted up to one more than
/// kWindowOps.
static size_t opsIn(Operation *op) {
  size_t ops = 0;
  op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
    if (++ops > kWindowOps)
      return WalkResult::interrupt();
    return isa<linalg::LinalgOp>(inner) ? WalkResult::skip()
                                        : WalkResult::advance();
  });
  return ops;
}

/// Values that cost nothing to make again (empty tensors, constants, fills
/// of one with one): a window makes its own.
static bool isFree(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<arith::ConstantOp>(def))
    return true;
  if (isa<tensor::EmptyOp, linalg::FillOp>(def))
    return llvm::all_of(def->getOperands(), isFree);
  return false;
}

/// Calls `read` on each value `op` reads: its operands, then what its
/// regions use from above.
static void forEachRead(Operation *op, function_ref<void(Value)> read) {
  for (Value operand : op->getOperands())
    read(operand);
  SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  for (Value value : above)
    read(value);
}

/// Fills in `window`'s shape and ids.
static void describe(Window &window) {
  std::vector<uintptr_t> &shape = window.shape;
  DenseMap<Value, uintptr_t> &ids = window.ids;
  auto pointer = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  auto name = [&](Value value) {
    ids[value] = ids.size() + 1;
    shape.push_back(pointer(value.getType().getAsOpaquePointer()));
  };
  auto describeOp = [&](Operation *op) {
    shape.push_back(pointer(op->getName().getAsOpaquePointer()));
    shape.push_back(pointer(op->getRawDictionaryAttrs().getAsOpaquePointer()));
    shape.push_back(static_cast<uintptr_t>(size_t(op->hashProperties())));
    shape.push_back(op->getNumOperands());
    for (Value operand : op->getOperands())
      shape.push_back(ids.lookup(operand));
    for (Value result : op->getResults())
      name(result);
    shape.push_back(op->getNumRegions());
    for (Region &region : op->getRegions()) {
      shape.push_back(region.getBlocks().size());
      for (Block &block : region) {
        shape.push_back(block.getOperations().size());
        for (BlockArgument arg : block.getArguments())
          name(arg);
      }
    }
  };
  // Free values, made again before their first reader, come as the ops
  // that make them.
  std::function<void(Value)> describeFree = [&](Value value) {
    if (ids.count(value) || !isFree(value))
      return;
    for (Value operand : value.getDefiningOp()->getOperands())
      describeFree(operand);
    value.getDefiningOp()->walk<WalkOrder::PreOrder>(describeOp);
  };
  for (Value input : window.inputs)
    name(input);
  if (scf::ForOp loop = window.loop) {
    for (Value bound : window.bounds()) {
      describeFree(bound);
      shape.push_back(ids.lookup(bound));
    }
    name(loop.getInductionVar());
    shape.push_back(window.carried.size());
    for (unsigned k : window.carried) {
      describeFree(loop.getInitArgs()[k]);
      shape.push_back(ids.lookup(loop.getInitArgs()[k]));
      name(loop.getRegionIterArgs()[k]);
    }
  }
  for (Operation *op : window.ops) {
    forEachRead(op, describeFree);
    op->walk<WalkOrder::PreOrder>(describeOp);
  }
  if (scf::ForOp loop = window.loop)
    for (unsigned k : window.carried) {
      shape.push_back(ids.lookup(loop.getYieldedValues()[k]));
      name(loop.getResult(k));
    }
  for (OpOperand *exit : window.exits)
    shape.push_back(ids.lookup(exit->get()));
}

/// Whether windows may hold ops of `block`: a function's entry block, or
/// the body of an scf.for or a branch of an scf.if (whose runs the plan
/// prices: a loop's trip count times).
static bool holdsWindows(Block *block) {
  Operation *parent = block->getParentOp();
  if (isa_and_nonnull<func::FuncOp>(parent))
    return block->isEntryBlock();
  return isa_and_nonnull<scf::ForOp, scf::IfOp>(parent);
}

/// The window around `value`: empty when a block that holds windows does
/// not make it or read it in an op a window can hold (no calls or
/// terminators; of the ops with regions, linalg's, and loops (scf.for,
/// scf.while) and branches small enough to fit in a window with room to
/// spare, with no call).
static Window windowAround(Value value) {
  Block *block = value.getParentBlock();
  if (!holdsWindows(block))
    return Window();
  auto holdable = [&](Operation *op) -> Operation * {
    Operation *top = block->findAncestorOpInBlock(*op);
    if (!top || isa<func::CallOp>(top) ||
        top->hasTrait<OpTrait::IsTerminator>() ||
        llvm::any_of(top->getResults(), isFree))
      return nullptr;
    if (top->getNumRegions() && !isa<linalg::LinalgOp>(top) &&
        (!isa<scf::ForOp, scf::IfOp, scf::WhileOp>(top) ||
         opsIn(top) > kWindowOps / 2 ||
         top->walk([](func::CallOp) { return WalkResult::interrupt(); })
             .wasInterrupted()))
      return nullptr;
    return top;
  };
  Window window;
  size_t held = 0;
  SmallVector<std::pair<Operation *, unsigned>> queue;
  auto reach = [&](Operation *op, unsigned steps) {
    if (!op || llvm::is_contained(window.ops, op))
      return;
    size_t ops = opsIn(op);
    if (held + ops > kWindowOps)
      return;
    held += ops;
    window.ops.push_back(op);
    queue.push_back({op, steps});
  };
  if (Operation *def = value.getDefiningOp()) {
    if (!holdable(def))
      return Window();
    reach(def, 0);
  } else {
    for (Operation *user : value.getUsers())
      reach(holdable(user), 1);
  }
  for (size_t next = 0; next < queue.size(); ++next) {
    auto [op, steps] = queue[next];
    if (steps == kWindowSteps)
      continue;
    // The other readers of a value the block does not make (an argument,
    // or a value from outside a loop) are a step away too: they share the
    // move of it that a pin may change.
    forEachRead(op, [&](Value read) {
      Operation *def = read.getDefiningOp();
      if (def && def->getBlock() == block)
        reach(holdable(def), steps + 1);
      else if (!isFree(read))
        for (Operation *user : read.getUsers())
          reach(holdable(user), steps + 1);
    });
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        reach(holdable(user), steps + 1);
  }
  llvm::sort(window.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  // In a loop's body, the window carries what it reads and makes the next
  // of.
  SetVector<Value> reads;
  for (Operation *op : window.ops)
    forEachRead(op, [&](Value read) { reads.insert(read); });
  window.loop = dyn_cast<scf::ForOp>(block->getParentOp());
  if (scf::ForOp loop = window.loop)
    for (auto [k, arg] : llvm::enumerate(loop.getRegionIterArgs()))
      if (reads.contains(arg) && window.makes(loop.getYieldedValues()[k]))
        window.carried.push_back(k);
  auto isCarried = [&](Value value) {
    return window.loop && (value == window.loop.getInductionVar() ||
                           llvm::any_of(window.carried, [&](unsigned k) {
                             return value == window.loop.getRegionIterArgs()[k];
                           }));
  };

  // The edge: what comes in (values read in the ops' regions too), and
  // where what is made inside goes out.
  auto input = [&](Value read) {
    if (!isFree(read) && !window.makes(read) && !isCarried(read) &&
        !llvm::is_contained(window.inputs, read))
      window.inputs.push_back(read);
  };
  for (Value read : reads)
    input(read);
  if (scf::ForOp loop = window.loop) {
    for (unsigned k : window.carried)
      input(loop.getInitArgs()[k]);
    for (Value bound : window.bounds())
      input(bound);
  }
  for (Operation *op : window.ops)
    for (OpResult result : op->getResults())
      for (OpOperand &use : result.getUses()) {
        Operation *user = block->findAncestorOpInBlock(*use.getOwner());
        bool next = isa<scf::YieldOp>(user) &&
                    llvm::is_contained(window.carried, use.getOperandNumber());
        if (!next && !llvm::is_contained(window.ops, user))
          window.exits.push_back(&use);
      }
  if (scf::ForOp loop = window.loop)
    for (unsigned k : window.carried)
      for (OpOperand &use : loop.getResult(k).getUses())
        window.exits.push_back(&use);
  describe(window);
  return window;
}

/// The sharding a window's result leaves in for `exit`: the one `plan`'s
/// reader reads it in, or none where the reader returns it as a result its
/// function leaves free (no annotation), which a pin may change as it may
/// in the whole plan.
static ShardingAttr exitSharding(const PlanSearch::Plan &plan,
                                 OpOperand &exit) {
  if (auto ret = dyn_cast<func::ReturnOp>(exit.getOwner())) {
    auto func = ret->getParentOfType<func::FuncOp>();
    unsigned i = exit.getOperandNumber();
    if (!getShardingEncoding(func.getResultTypes()[i]) &&
        !func.getResultAttrOfType<ShardingAttr>(i,
                                                DTDialect::kShardingAttrName))
      return {};
  }
  return plan.readSharding(exit);
}

/// `window` as a module of its own: the module's meshes, and a function of
/// its ops whose arguments come as `plan` has them and whose results leave
/// as the plan's readers outside read them (exitSharding), with `pins`
/// (those on values the window reads or makes) as constraints.
static OwningOpRef<ModuleOp> windowModule(ModuleOp module, const Window &window,
                                          const PlanSearch::Plan &plan,
                                          ArrayRef<Pin> pins) {
  MLIRContext *ctx = module.getContext();
  OpBuilder builder(ctx);
  OwningOpRef<ModuleOp> copy = ModuleOp::create(module.getLoc());
  builder.setInsertionPointToEnd(copy->getBody());
  for (Operation &op : *module.getBody())
    if (!isa<func::FuncOp>(op))
      builder.clone(op);
  Location loc = window.ops.front()->getLoc();
  auto func = func::FuncOp::create(builder, loc, "window",
                                   builder.getFunctionType({}, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  IRMapping mapping;
  SmallVector<ShardingAttr> argumentShardings;
  for (Value input : window.inputs) {
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
    argumentShardings.push_back(getShardingEncoding(input.getType())
                                    ? ShardingAttr()
                                    : plan.sharding(input));
  }
  // Free values are made again where the window reads them.
  std::function<void(Value)> makeFree = [&](Value value) {
    if (mapping.contains(value) || !isFree(value))
      return;
    Operation *def = value.getDefiningOp();
    for (Value operand : def->getOperands())
      makeFree(operand);
    builder.clone(*def, mapping);
  };
  // In a loop's body, the ops run in a copy of the loop.
  scf::YieldOp next;
  if (scf::ForOp loop = window.loop) {
    auto made = [&](Value value) {
      makeFree(value);
      return mapping.lookup(value);
    };
    SmallVector<Value> inits;
    for (unsigned k : window.carried)
      inits.push_back(made(loop.getInitArgs()[k]));
    auto [lower, upper, step] = window.bounds();
    auto copy = scf::ForOp::create(
        builder, loop.getLoc(), made(lower), made(upper), made(step), inits,
        [](OpBuilder &builder, Location loc, Value, ValueRange carried) {
          scf::YieldOp::create(builder, loc, carried);
        });
    mapping.map(loop.getInductionVar(), copy.getInductionVar());
    for (auto [k, arg] : llvm::zip(window.carried, copy.getRegionIterArgs())) {
      mapping.map(loop.getRegionIterArgs()[k], arg);
      mapping.map(loop.getResult(k), copy.getResult(arg.getArgNumber() - 1));
    }
    next = cast<scf::YieldOp>(copy.getBody()->getTerminator());
    builder.setInsertionPoint(next);
  }
  for (Operation *op : window.ops) {
    forEachRead(op, makeFree);
    builder.clone(*op, mapping);
  }
  if (next) {
    scf::ForOp loop = window.loop;
    next->setOperands(llvm::map_to_vector(window.carried, [&](unsigned k) {
      return mapping.lookup(loop.getYieldedValues()[k]);
    }));
    builder.setInsertionPointAfter(next->getParentOp());
  }

  // One result per value and sharding its readers outside read it in.
  SmallVector<std::pair<Value, ShardingAttr>> results;
  for (OpOperand *exit : window.exits) {
    std::pair<Value, ShardingAttr> result = {mapping.lookup(exit->get()),
                                             exitSharding(plan, *exit)};
    if (!llvm::is_contained(results, result))
      results.push_back(result);
  }
  SmallVector<Value> returned =
      llvm::map_to_vector(results, [](auto &result) { return result.first; });
  func::ReturnOp::create(builder, loc, returned);
  func.setType(builder.getFunctionType(body->getArgumentTypes(),
                                       ValueRange(returned).getTypes()));
  auto attr = [&](ShardingAttr sharding) {
    return sharding ? builder.getDictionaryAttr(builder.getNamedAttr(
                          DTDialect::kShardingAttrName, sharding))
                    : builder.getDictionaryAttr({});
  };
  for (auto [i, sharding] : llvm::enumerate(argumentShardings))
    func.setArgAttrs(i, attr(sharding));
  for (auto [i, result] : llvm::enumerate(results))
    if (!getShardingEncoding(result.first.getType()))
      func.setResultAttrs(i, attr(result.second));

  SmallVector<Pin> inside;
  for (const Pin &pin : pins)
    if (mapping.contains(pin.value))
      inside.push_back({mapping.lookup(pin.value), pin.sharding});
  insertPins(inside);
  return copy;
}

SmallVector<Pin> PlanSearch::runWindowed() {
  std::optional<Plan> plan = wholePlan({});
  if (!plan)
    return {};
  unpinned = plan->seconds;
  double current = plan->seconds;
  SmallVector<Pin> pins;
  SmallVector<bool> pinned(candidates.size(), false);

  // Each candidate's window, how often a step runs it (the trip counts of
  // the loops around it but the one it runs a copy of; once when one is
  // not constant), what it saves with each sharding in all those runs, and
  // the edge (shardings in and out, pins inside) those savings were priced
  // at.
  struct Entry {
    Window window;
    double runs = 1;
    std::vector<uintptr_t> edge;
    SmallVector<std::optional<double>> saves;
  };
  std::vector<Entry> entries;
  for (const Candidate &candidate : candidates) {
    Entry &entry = entries.emplace_back();
    Window &window = entry.window = windowAround(candidate.value);
    if (!window.ops.empty())
      entry.runs = runsPerCall(window.loop ? window.loop.getOperation()
                                           : window.ops.front())
                       .value_or(1);
  }
  // The shardings at a window's edge, in and out, and the pins inside
  // it, by position.
  auto edgeOf = [&](const Window &window) {
    std::vector<uintptr_t> edge;
    auto pointer = [](ShardingAttr sharding) {
      return reinterpret_cast<uintptr_t>(sharding.getAsOpaquePointer());
    };
    for (Value input : window.inputs)
      edge.push_back(pointer(plan->sharding(input)));
    for (OpOperand *exit : window.exits)
      edge.push_back(pointer(exitSharding(*plan, *exit)));
    SmallVector<std::pair<uintptr_t, uintptr_t>> inside;
    for (const Pin &pin : pins)
      if (uintptr_t id = window.ids.lookup(pin.value))
        inside.push_back({id, pointer(pin.sharding)});
    llvm::sort(inside);
    for (auto [id, sharding] : inside)
      edge.insert(edge.end(), {id, sharding});
    return edge;
  };
  // Windows of one shape and edge are the same program (the layers of a
  // model): each is propagated once.
  std::map<std::vector<uintptr_t>, std::optional<double>> windowPrices;
  auto priceWindow = [&](const Window &window) -> std::optional<double> {
    std::vector<uintptr_t> key = window.shape;
    llvm::append_range(key, edgeOf(window));
    auto [it, inserted] = windowPrices.try_emplace(std::move(key));
    if (!inserted) {
      ++numWindowsReused;
      return it->second;
    }
    ++numWindowsPriced;
    OwningOpRef<ModuleOp> copy = windowModule(module, window, *plan, pins);
    MeshCache meshes(topology);
    if (succeeded(propagateModule(*copy, meshes, combine)))
      it->second = modelledSeconds(*copy, meshes, combine);
    return it->second;
  };
  uint64_t windowBudget = 64 * uint64_t(budget);

  // As in the search of whole plans, a round after a pin first reprices
  // only the windows of the candidates that saved in the round before; a
  // full round looks at every candidate again when none of those saves.
  bool full = true;
  DenseSet<size_t> lastSavers;
  while (numPriced < budget) {
    struct Saver {
      size_t candidate, sharding;
      double saves;
    };
    SmallVector<Saver> savers;
    double tie = searchTie(current);
    for (auto [i, entry] : llvm::enumerate(entries)) {
      const Candidate &candidate = candidates[i];
      if (pinned[i] || entry.window.ops.empty() ||
          (!full && !lastSavers.contains(i)))
        continue;
      std::vector<uintptr_t> edge = edgeOf(entry.window);
      if (entry.saves.empty() || edge != entry.edge) {
        if (numWindowsPriced + 1 + candidate.shardings.size() > windowBudget)
          continue;
        entry.edge = std::move(edge);
        entry.saves.assign(candidate.shardings.size(), std::nullopt);
        // Each sharding is priced against the sharding the plan gives the
        // value, pinned: left free, the window's rules could choose
        // otherwise in a smaller program, and price a plan that is not
        // the one a pin would change.
        ShardingAttr planned = plan->sharding(candidate.value);
        if (planned)
          pins.push_back({candidate.value, planned});
        std::optional<double> without = priceWindow(entry.window);
        if (planned)
          pins.pop_back();
        for (auto [k, sharding] : llvm::enumerate(candidate.shardings)) {
          if (!without || sharding == planned)
            continue;
          pins.push_back({candidate.value, sharding});
          std::optional<double> with = priceWindow(entry.window);
          pins.pop_back();
          if (with)
            entry.saves[k] = (*without - *with) * entry.runs;
        }
      }
      for (auto [k, saves] : llvm::enumerate(entry.saves))
        if (saves && *saves > tie)
          savers.push_back({i, k, *saves});
    }
    if (savers.empty() && !full) {
      full = true;
      continue;
    }
    if (savers.empty())
      break;
    llvm::stable_sort(savers, [](const Saver &a, const Saver &b) {
      return a.saves > b.saves;
    });
    // The savers whose windows do not overlap, the ones that save most
    // first: each changes its own part of the plan.
    SmallVector<Saver> together;
    DenseSet<Operation *> covered;
    for (const Saver &saver : savers) {
      ArrayRef<Operation *> ops = entries[saver.candidate].window.ops;
      if (llvm::any_of(ops, [&](Operation *op) { return covered.count(op); }))
        continue;
      together.push_back(saver);
      covered.insert(ops.begin(), ops.end());
    }
    // Kept together when the whole plan with them is cheaper; else the
    // first half, and so on.
    std::optional<Plan> better;
    size_t kept = together.size();
    for (; kept > 0 && numPriced < budget; kept /= 2) {
      SmallVector<Pin> trial = pins;
      for (const Saver &saver : ArrayRef(together).take_front(kept))
        trial.push_back(
            {candidates[saver.candidate].value,
             candidates[saver.candidate].shardings[saver.sharding]});
      better = wholePlan(trial);
      if (better && better->seconds < current - tie)
        break;
      better.reset();
    }
    if (!better) {
      // Not even the best saver alone saves on the whole plan: its window
      // misjudged it. It is not tried again until its edge changes.
      if (kept == 0)
        entries[together.front().candidate]
            .saves[together.front().sharding]
            .reset();
      continue;
    }
    for (const Saver &saver : ArrayRef(together).take_front(kept)) {
      pinned[saver.candidate] = true;
      const Window &window = entries[saver.candidate].window;
      pins.push_back({candidates[saver.candidate].value,
                      candidates[saver.candidate].shardings[saver.sharding],
                      current, better->seconds, static_cast<unsigned>(kept),
                      saver.saves});
      if (window.loop)
        pins.back().loopCarried = window.carried.size();
    }
    current = better->seconds;
    plan = std::move(better);
    lastSavers.clear();
    for (const Saver &saver : savers)
      if (!pinned[saver.candidate])
        lastSavers.insert(saver.candidate);
    full = lastSavers.empty();
  }
  return pins;
}
