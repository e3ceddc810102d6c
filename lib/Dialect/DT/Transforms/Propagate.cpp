//===- Propagate.cpp - dt-propagate ---------------------------------------===//
//
// Decides the sharding of every tensor from the user's annotations. Each op
// with a sharding rule picks, per mesh axis, the choice (replicate, shard a
// factor, pass partial values through) whose redistributions cost least
// given what is already decided around it: the shardings of its operands and
// what its users need of its results. Decisions are final, so the sweeps
// (forward, then backward, until nothing changes) terminate, and the order is
// the program's, so the result is deterministic. Ops that no information
// reaches replicate. An op whose all_reduce could share a call with one a
// later op may still make waits for that op (wouldJoinLater).
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/Search.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"
#include "dt/Dialect/DT/Transforms/Strategy.h"
#include "dt/Support/QuietDiagnostics.h"
#include "dt/Support/Statistic.h"

#include "mlir/Analysis/CallGraph.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <map>
#include <set>

namespace mlir::dt {
#define GEN_PASS_DEF_PROPAGATEPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;

namespace {

class ModulePropagation;

/// What a look-ahead asks a user to suppose of one value: that it comes as
/// `sharding`, or (`moved`) that another op moves it to `sharding` anyway.
struct Supposition {
  Value value;
  ShardingAttr sharding;
  bool moved = false;
};

/// Propagation over one function on one mesh.
class FunctionPropagation {
public:
  FunctionPropagation(func::FuncOp func, const MeshInfo &mesh,
                      FlatSymbolRefAttr meshRef, ModulePropagation &module,
                      ArrayRef<ShardingAttr> argumentSeeds, bool explain,
                      bool combine)
      : func(func), mesh(mesh), meshRef(meshRef), module(module),
        argumentSeeds(argumentSeeds), explain(explain), combine(combine) {}

  LogicalResult run();

  unsigned numDecided = 0;
  unsigned numRedistributions = 0;
  /// How often an op asked again as if its all_reduces had partners.
  unsigned numSecondLooks = 0;

private:
  LogicalResult seed();
  bool tryDecide(Operation *op, bool force);
  bool decideRuleOp(Operation *op, bool force);
  bool decideLoop(scf::ForOp loop, bool force);
  bool decideBranch(scf::IfOp branch, bool force);
  bool decideWhile(scf::WhileOp loop, bool force);
  bool decideCall(func::CallOp call, bool force);
  /// Whether `op`, which chose `chosen`, would choose otherwise if its
  /// all_reduces that may still get a partner had one: then it waits for
  /// a later sweep. Once the others have had their turn (a sweep with no
  /// progress, then the forced sweeps), it decides with what there is.
  bool wouldJoinLater(Operation *op, const ShardingRule &rule,
                      const StrategyContext &known,
                      ArrayRef<AxisChoice> chosen);
  /// What is known around rule op `op` when it decides: its operands'
  /// shardings, its fixed results, what decided users ask of them, and the
  /// moves other users share; with `supposed` on top. `informed`: whether
  /// any of it was decided.
  StrategyContext contextFor(Operation *op, const ShardingRule &rule,
                             bool &informed,
                             Supposition supposed = Supposition());
  /// StrategyContext::laterCost for `result`: the most any rule op that
  /// reads it and has not decided would pay on mesh axis `axis` for its
  /// being `produced` there (and replicated on the other axes), over what
  /// it pays when `result` comes as it likes; nullopt when no such op
  /// reads it, or another op that has not decided does.
  std::optional<double> laterCost(Value result, unsigned axis,
                                  Placement produced);
  /// StrategyContext::sharedGain for `operand` of `op`: the most a rule op
  /// in the same block that reads it and has not decided would save on mesh
  /// axis `axis` if `op` moved it to `moved` there (and replicated on the
  /// other axes), a move it would then share.
  double sharedGain(Operation *op, Value operand, unsigned axis,
                    Placement moved);
  /// What supposing `supposed` changes for each rule op that reads its
  /// value and has not decided yet (decided ones have said what they
  /// need): its cheapest choice on mesh axis `axis` with the supposition
  /// minus without, once per op; nullopt for a reader with no rule or no
  /// strategy. With `peer`, only the other readers in its block.
  SmallVector<std::optional<double>>
  readersDelta(Supposition supposed, unsigned axis, Operation *peer = nullptr);
  /// The cheapest choice of rule op `op` on mesh axis `axis`, with
  /// `supposed`, the axes before it chosen as they would be; nullopt when
  /// `op` has no strategy.
  std::optional<double> leastOnAxis(Operation *op, const ShardingRule &rule,
                                    unsigned axis, Supposition supposed);
  /// A sharding that is `placement` on mesh axis `axis`, replicated on the
  /// others.
  ShardingAttr onAxis(unsigned axis, Placement placement) {
    SmallVector<Placement> placements(mesh.shape.size(),
                                      Placement::replicate());
    placements[axis] = placement;
    return makeSharding(placements);
  }
  void assign(Value value, ShardingAttr sharding);
  ShardingAttr requestFor(OpOperand &use);
  ShardingAttr makeSharding(ArrayRef<Placement> placements) {
    return ShardingAttr::get(func.getContext(), meshRef, placements);
  }
  ShardingAttr replicated() {
    return makeSharding(
        SmallVector<Placement>(mesh.shape.size(), Placement::replicate()));
  }
  /// What the first user of `value` that asks for a sharding asks.
  ShardingAttr firstRequest(Value value) {
    for (OpOperand &use : value.getUses())
      if (ShardingAttr request = requestFor(use))
        return request;
    return {};
  }
  LogicalResult rewrite();
  void emitExplanations();

  func::FuncOp func;
  const MeshInfo &mesh;
  FlatSymbolRefAttr meshRef;
  ModulePropagation &module;
  /// Shardings the first call site gives unannotated arguments.
  ArrayRef<ShardingAttr> argumentSeeds;
  SmallVector<Operation *> ops;
  /// Rules of the ops that have one, indexed through `ruleIndex`: rules are
  /// large, so they are stored once and never moved by rehashing.
  std::vector<ShardingRule> rules;
  DenseMap<Operation *, unsigned> ruleIndex;
  /// The positions of the ops not decided yet that can make partial values
  /// (their rule has a reduction factor), per block.
  DenseMap<Block *, std::set<int64_t>> undecidedReductions;
  DenseMap<Value, ShardingAttr> assigned;
  /// Where a collective of a value may run in its block, as positions of
  /// ops there: after the op that makes it (-1: the block's start), up to
  /// the first op that reads it (INT64_MAX: none does). Windows that
  /// overlap may share one call (dt-combine-collectives).
  struct Window {
    int64_t ready = -1, firstUse = std::numeric_limits<int64_t>::max();
    bool overlaps(const Window &other) const {
      return std::max(ready, other.ready) < std::min(firstUse, other.firstUse);
    }
  };
  /// The window of `value` in `block`; without `withUses`, open at the end.
  Window windowOf(Block *block, Value value, bool withUses = true) const;
  /// Where an all_reduce of `value` made for `user` (null: before its first
  /// reader) goes, and its window there: before `user`, or before the loops
  /// around it.
  std::pair<Block *, Window> reductionWindow(Value value,
                                             Operation *user) const;
  /// The partial value, if any, whose all_reduce one of `value` on mesh
  /// axis `axis` out of `partial`, with `window` in `block`
  /// (reductionWindow), would run in one call with.
  Value reductionPartner(Value value, Block *block, Window window,
                         unsigned axis, Placement partial);
  /// Whether an op other than `op`, not decided yet, may still make a
  /// partner for an all_reduce with `window` in `block`.
  bool mayGetPartner(Block *block, Window window, Operation *op) const;
  /// Every op's position in its block (the IR does not change until
  /// rewrite()).
  DenseMap<Operation *, int64_t> positions;
  /// The values of one block assigned a partial placement, with their
  /// windows, ordered by where the windows end: the all_reduces the plan
  /// has so far. A window overlaps [r, u] only if it ends after r and, being
  /// at most `longest` long, before u + `longest`: a search looks there
  /// alone (the sweeps also run backward, from ops early in the block).
  struct Partials {
    std::multimap<int64_t, std::pair<Value, Window>> byEnd;
    int64_t longest = 0;
  };
  DenseMap<Block *, Partials> partials;
  DenseSet<Value> fixed;
  /// For each decided op, the sharding it needs of each operand (null for
  /// non-tensors and for operands it takes as they come).
  DenseMap<Operation *, SmallVector<ShardingAttr>> required;
  SmallVector<ShardingAttr> resultShardings;
  bool failedOps = false;
  /// The second forced sweep: a while loop forced before its condition
  /// region decided has waited for it; now it takes what it can.
  bool lastResort = false;
  /// With `explain`: how each rule op chose, and whether it chose with
  /// nothing decided around it.
  bool explain;
  /// Whether an all_reduce that can share a call with another costs no
  /// latency of its own (the pass's `combine`).
  bool combine;
  struct Explanation {
    SmallVector<AxisDecision> axes;
    bool uninformed = false;
  };
  DenseMap<Operation *, Explanation> explanations;
  /// With `explain`: why each tensor result of an scf.for, scf.if or
  /// scf.while got its sharding, by position.
  DenseMap<Operation *, SmallVector<std::string>> carryReasons;
  void explainCarry(Operation *op, unsigned i, StringRef reason) {
    if (!explain)
      return;
    SmallVector<std::string> &reasons = carryReasons[op];
    reasons.resize(op->getNumResults());
    reasons[i] = reason.str();
  }
};

} // namespace

namespace {
/// Propagates every function of a module: annotated functions in order, and
/// each callee when its first call site is decided, with the shardings of
/// that call's operands for its unannotated arguments. Later call sites
/// redistribute to the callee's signature.
class ModulePropagation {
public:
  ModulePropagation(ModuleOp module, MeshCache &meshes, bool explain,
                    bool combine)
      : module(module), meshes(meshes), explain(explain), combine(combine) {}

  /// Propagates `func` unless already done; `fallbackMesh` serves a function
  /// without annotations of its own.
  LogicalResult propagate(func::FuncOp func, FlatSymbolRefAttr fallbackMesh,
                          ArrayRef<ShardingAttr> argumentSeeds,
                          Operation *caller);

  /// The function a call targets.
  func::FuncOp callee(func::CallOp call) {
    return symbolTables.lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
  }

  /// Propagates every function of the module that is not external.
  LogicalResult run();

  unsigned numDecided = 0, numRedistributions = 0, numSecondLooks = 0;

private:
  enum class State { InProgress, Done };
  ModuleOp module;
  MeshCache &meshes;
  bool explain, combine;
  SymbolTableCollection symbolTables;
  DenseMap<Operation *, State> states;
};
} // namespace

FailureOr<FlatSymbolRefAttr> mlir::dt::functionMesh(func::FuncOp func) {
  FlatSymbolRefAttr found;
  auto consider = [&](ShardingAttr sharding, Operation *at) -> LogicalResult {
    if (!sharding)
      return success();
    if (found && found != sharding.getMesh())
      return at->emitError("dt shards a function over one mesh, but @")
             << func.getSymName() << " uses " << found << " and "
             << sharding.getMesh();
    found = sharding.getMesh();
    return success();
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (failed(consider(getShardingEncoding(func.getArgumentTypes()[i]), func)) ||
        failed(consider(func.getArgAttrOfType<ShardingAttr>(
                            i, DTDialect::kShardingAttrName),
                        func)))
      return failure();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (failed(consider(getShardingEncoding(func.getResultTypes()[i]), func)) ||
        failed(consider(func.getResultAttrOfType<ShardingAttr>(
                            i, DTDialect::kShardingAttrName),
                        func)))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto constrain = dyn_cast<ConstrainOp>(op))
      if (failed(consider(constrain.getShardingAttr(), op)))
        return WalkResult::interrupt();
    for (Type type : op->getResultTypes())
      if (failed(consider(getShardingEncoding(type), op)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return found;
}

/// Empty tensors, fills of them and splat constants cost nothing to make
/// again: give each use its own, so that uses wanting different shardings do
/// not force redistributions of a value nobody computed.
static void rematerializeCheapValues(func::FuncOp func) {
  auto isCheap = [](Operation *op) {
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      return fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() &&
             matchPattern(fill.getInputs()[0], m_Constant());
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        return dense.isSplat() && isa<RankedTensorType>(constant.getType());
    return false;
  };
  auto cloneForEachUse = [](Operation *op) {
    // An unused value has no first use to keep (and nothing to clone for).
    if (op->use_empty())
      return;
    OpBuilder builder(op);
    for (OpOperand &use :
         llvm::make_early_inc_range(llvm::drop_begin(op->getResult(0).getUses())))
      use.set(builder.clone(*op)->getResult(0));
  };
  SmallVector<Operation *> cheap;
  func.walk([&](Operation *op) {
    if (isCheap(op))
      cheap.push_back(op);
  });
  for (Operation *op : cheap)
    cloneForEachUse(op);
  // Empties last: the fills cloned above share theirs.
  SmallVector<tensor::EmptyOp> empties;
  func.walk([&](tensor::EmptyOp empty) { empties.push_back(empty); });
  for (tensor::EmptyOp empty : empties)
    cloneForEachUse(empty);
}

/// `sharding` with the placements `replaced` picks replicated instead (the
/// same attribute when it picks none).
static ShardingAttr
replicatedWhere(ShardingAttr sharding,
                llvm::function_ref<bool(const Placement &)> replaced) {
  SmallVector<Placement> placements;
  for (const Placement &p : sharding.getPlacements())
    placements.push_back(replaced(p) ? Placement::replicate() : p);
  return ShardingAttr::get(sharding.getContext(), sharding.getMesh(),
                           placements);
}

/// A tensor whose values differ from element to element but are written
/// into the program (a dense constant, a `tensor.from_elements`) is whole on
/// every rank: its rule asks for replication. A type the user wrote on one
/// still says how the value is held from there on, which a slice of the
/// whole value gives: the op makes it replicated (or the equal-value partial
/// the user wrote) and a `dt.redistribute` after it the user's sharding, as
/// `dt.constrain` on the plain value would.
static void redistributeTypedWholeValues(func::FuncOp func) {
  auto madeWhole = [](Operation *op) {
    if (isa<tensor::FromElementsOp>(op))
      return true;
    auto constant = dyn_cast<arith::ConstantOp>(op);
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                          : DenseElementsAttr();
    return dense && !dense.isSplat();
  };
  func.walk([&](Operation *op) {
    if (!madeWhole(op))
      return;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    ShardingAttr sharding = getShardingEncoding(type);
    if (!sharding)
      return;
    // Equal values on every rank are their own max and min.
    ShardingAttr whole = replicatedWhere(sharding, [](const Placement &p) {
      return p.isShard() || (p.isPartial() && isLinearReduction(p.reduction()));
    });
    if (whole == sharding)
      return;
    auto wholeType = withSharding(type, whole);
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    auto redistribute =
        RedistributeOp::create(builder, op->getLoc(), type, op->getResult(0));
    op->getResult(0).replaceAllUsesExcept(redistribute, redistribute);
    op->getResult(0).setType(wholeType);
    syncConstantValueType(op);
  });
}

/// The sharding a result the user left free is returned in: the value's,
/// but a 16-bit float sum of parts is added up in the program. Returned
/// partial, each rank's part would be rounded to 16 bits before the caller
/// adds them, where the single-device program rounds its f32 sum once
/// (parts 257, 257, -256, -256 in bf16: 0, not 2); reduced in the program,
/// dt-widen-partial-sums adds the parts in f32.
static ShardingAttr freeResultSharding(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  ShardingAttr sharding = getShardingEncoding(type);
  if (!sharding || !isa<Float16Type, BFloat16Type>(type.getElementType()))
    return sharding;
  return replicatedWhere(sharding, [](const Placement &p) {
    return p.isPartial() && isLinearReduction(p.reduction());
  });
}

/// With `explain`: a remark at `ret` when its operand `i`, a free result,
/// is returned in `returned` rather than as its value is held.
static void explainFreeResult(func::ReturnOp ret, unsigned i,
                              ShardingAttr returned) {
  Value value = ret.getOperand(i);
  ShardingAttr held = getShardingEncoding(value.getType());
  if (returned == held)
    return;
  std::string element;
  llvm::raw_string_ostream(element) << getElementTypeOrSelf(value.getType());
  emitRemark(ret.getLoc()) << "result #" << i << ": ["
                           << joinPlacements(held.getPlacements())
                           << "] added up to ["
                           << joinPlacements(returned.getPlacements())
                           << "] before it is returned: returned as a sum of "
                              "parts, each rank's part would be rounded to "
                           << element << " before they are added";
}

static bool hasTensors(Operation *op) {
  auto isTensor = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

/// dt plans static shapes only: an op with a tensor of dynamic shape (a cast
/// to `tensor<?x6xf32>`, say) is named with the tensor and its type, where
/// its sharding rule would only say that it has none.
static LogicalResult checkStaticShapes(Operation *op) {
  auto dynamicIn = [](TypeRange types) -> std::optional<unsigned> {
    for (auto [i, type] : llvm::enumerate(types)) {
      auto tensor = dyn_cast<TensorType>(type);
      if (tensor && !tensor.hasStaticShape())
        return i;
    }
    return std::nullopt;
  };
  std::optional<unsigned> operand = dynamicIn(op->getOperandTypes());
  std::optional<unsigned> result = dynamicIn(op->getResultTypes());
  if (!operand && !result)
    return success();
  InFlightDiagnostic diag =
      op->emitError("dt shards static shapes only, and '")
      << op->getName() << "' has a dynamic one: ";
  if (result)
    diag << "result #" << *result << " is " << op->getResult(*result).getType();
  else
    diag << "operand #" << *operand << " is "
         << op->getOperand(*operand).getType();
  return diag;
}

void FunctionPropagation::assign(Value value, ShardingAttr sharding) {
  if (!assigned.try_emplace(value, sharding).second)
    return;
  ++numDecided;
  if (llvm::any_of(sharding.getPlacements(),
                   [](Placement p) { return p.isPartial(); })) {
    // A value nobody reads is never reduced.
    Window window = windowOf(value.getParentBlock(), value);
    if (window.firstUse == std::numeric_limits<int64_t>::max())
      return;
    Partials &block = partials[value.getParentBlock()];
    block.byEnd.insert({window.firstUse, {value, window}});
    block.longest = std::max(block.longest, window.firstUse - window.ready);
  }
}

FunctionPropagation::Window
FunctionPropagation::windowOf(Block *block, Value value, bool withUses) const {
  Window window;
  if (Operation *def = value.getDefiningOp())
    if (Operation *at = block->findAncestorOpInBlock(*def))
      window.ready = positions.lookup(at);
  if (withUses)
    for (Operation *user : value.getUsers())
      if (Operation *at = block->findAncestorOpInBlock(*user))
        window.firstUse = std::min(window.firstUse, positions.lookup(at));
  return window;
}

std::pair<Block *, FunctionPropagation::Window>
FunctionPropagation::reductionWindow(Value value, Operation *user) const {
  Block *block = value.getParentBlock();
  Operation *at = user ? redistributionPoint(value, user) : nullptr;
  if (at)
    block = at->getBlock();
  Window window = windowOf(block, value, /*withUses=*/!at);
  if (at)
    window.firstUse = positions.lookup(at);
  return {block, window};
}

Value FunctionPropagation::reductionPartner(Value value, Block *block,
                                            Window window, unsigned axis,
                                            Placement partial) {
  if (window.firstUse == std::numeric_limits<int64_t>::max())
    return {}; // Nobody reads it: nothing to reduce.
  auto it = partials.find(block);
  if (it == partials.end())
    return {};
  const Partials &candidates = it->second;
  Type element = getElementTypeOrSelf(value.getType());
  // Another partial value of the block, of the same reduction and element
  // type, with a window that overlaps, that some user (or the look-ahead,
  // for users not decided yet) takes reduced on this axis. (A value a
  // loop or branch yields is carried on, not reduced in this block; a
  // function returns what its signature says.)
  for (auto &[end, entry] :
       llvm::make_range(candidates.byEnd.upper_bound(window.ready),
                        candidates.byEnd.lower_bound(window.firstUse +
                                                     candidates.longest))) {
    auto &[other, otherWindow] = entry;
    if (other == value || !window.overlaps(otherWindow) ||
        assigned.lookup(other).getPlacements()[axis] != partial ||
        getElementTypeOrSelf(other.getType()) != element)
      continue;
    if (llvm::any_of(other.getUses(), [&](OpOperand &otherUse) {
          Operation *owner = otherUse.getOwner();
          if (owner->hasTrait<OpTrait::IsTerminator>() &&
              !isa<func::ReturnOp>(owner))
            return false;
          ShardingAttr request = requestFor(otherUse);
          return !request || request.getPlacements()[axis].isReplicate();
        }))
      return other;
  }
  return {};
}

ShardingAttr mlir::dt::argumentSharding(BlockArgument arg) {
  if (ShardingAttr sharding = getShardingEncoding(arg.getType()))
    return sharding;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func ? func.getArgAttrOfType<ShardingAttr>(
                    arg.getArgNumber(), DTDialect::kShardingAttrName)
              : ShardingAttr();
}

LogicalResult FunctionPropagation::seed() {
  redistributeTypedWholeValues(func);
  rematerializeCheapValues(func);
  func.walk([&](Block *block) {
    int64_t position = 0;
    for (Operation &op : *block)
      positions[&op] = position++;
  });
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    ShardingAttr sharding = argumentSharding(arg);
    if (!sharding && arg.getArgNumber() < argumentSeeds.size())
      sharding = argumentSeeds[arg.getArgNumber()];
    if (sharding) {
      assign(arg, sharding);
      fixed.insert(arg);
    }
  }
  resultShardings.resize(func.getNumResults());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    ShardingAttr sharding = getShardingEncoding(func.getResultTypes()[i]);
    if (!sharding)
      sharding = func.getResultAttrOfType<ShardingAttr>(
          i, DTDialect::kShardingAttrName);
    resultShardings[i] = sharding;
  }

  // A tensor dt cannot type would stop the verifier after the pass, and
  // one whose bytes a 64-bit count cannot hold would wrap in the cost model
  // and the runtime: say which before anything is costed.
  auto unsupported = [&](Value value) {
    auto tensor = dyn_cast<RankedTensorType>(value.getType());
    if (!tensor)
      return false;
    Type element = tensor.getElementType();
    if (!isSupportedElementType(element)) {
      emitError(value.getLoc(), "dt cannot shard a tensor of ")
          << element
          << " elements; expected f32, f16, bf16, f64, i32, i64 or i1";
      return true;
    }
    std::optional<int64_t> bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
    for (int64_t extent : tensor.getShape())
      if (bytes && !ShapedType::isDynamic(extent))
        bytes = llvm::checkedMul(*bytes, extent);
    if (bytes)
      return false;
    emitError(value.getLoc(), "dt cannot hold ")
        << tensor << ": its size is more than 2^63 - 1 bytes";
    return true;
  };
  if (llvm::any_of(entry.getArguments(), unsupported))
    return failure();
  LogicalResult result = success();
  // Program order, a loop before its body: the loop decides its iter args
  // (from its inits) before the ops that use them.
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation())
      return WalkResult::advance();
    ops.push_back(op);
    // A linalg body is scalar code: the op's rule covers it (and the tensors
    // it reads from above).
    WalkResult next =
        isa<linalg::LinalgOp>(op) ? WalkResult::skip() : WalkResult::advance();
    if (llvm::any_of(op->getResults(), unsupported)) {
      result = failure();
      return WalkResult::interrupt();
    }
    // Values already typed by the user are decided.
    for (Value v : op->getResults())
      if (ShardingAttr sharding = getShardingEncoding(v.getType())) {
        assign(v, sharding);
        fixed.insert(v);
      }
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (ShardingAttr sharding = getShardingEncoding(arg.getType())) {
            assign(arg, sharding);
            fixed.insert(arg);
          }
    if (auto constrain = dyn_cast<ConstrainOp>(op)) {
      assign(constrain.getResult(), constrain.getShardingAttr());
      fixed.insert(constrain.getResult());
      required[op] = {constrain.getShardingAttr()};
      return next;
    }
    if (auto redistribute = dyn_cast<RedistributeOp>(op)) {
      required[op] = {redistribute.getSourceSharding()};
      return next;
    }
    if (isa<AxisIndexOp>(op)) {
      op->emitError(kAxisIndexInGlobalProgram);
      result = failure();
      return next;
    }
    if (isa<func::ReturnOp, scf::ForOp, scf::IfOp, scf::WhileOp,
            scf::ConditionOp, scf::YieldOp>(op) ||
        !hasTensors(op))
      return next;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      func::FuncOp callee = module.callee(call);
      if (!callee || callee.isExternal()) {
        op->emitError("dt cannot shard a call to the external function ")
            << call.getCalleeAttr()
            << "; give it a body or keep its tensors out of sharded code";
        result = failure();
      }
      return next;
    }
    if (failed(checkStaticShapes(op))) {
      result = failure();
      return next;
    }
    FailureOr<ShardingRule> rule = getShardingRule(op);
    if (failed(rule)) {
      InFlightDiagnostic diag = op->emitError("dt has no sharding rule for '")
                                << op->getName() << "'; it cannot be sharded";
      if (isa<linalg::LinalgOp>(op))
        diag.attachNote() << "its body uses a tensor from above other than as "
                             "the source of a tensor.extract in its block";
      result = failure();
      return next;
    }
    if (llvm::any_of(rule->factors, [](const ShardingRule::Factor &factor) {
          return factor.kind == ShardingRule::FactorKind::Reduction;
        }))
      undecidedReductions[op->getBlock()].insert(positions.lookup(op));
    ruleIndex[op] = rules.size();
    rules.push_back(std::move(*rule));
    return next;
  });
  return result;
}

ShardingAttr FunctionPropagation::requestFor(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto ret = dyn_cast<func::ReturnOp>(user))
    return resultShardings[use.getOperandNumber()];
  auto it = required.find(user);
  if (it == required.end() || use.getOperandNumber() >= it->second.size())
    return {};
  return it->second[use.getOperandNumber()];
}

StrategyContext FunctionPropagation::contextFor(Operation *op,
                                                const ShardingRule &rule,
                                                bool &informed,
                                                Supposition supposed) {
  StrategyContext known;
  informed = false;
  SmallVector<Value> operands = rule.operands(op);
  for (Value operand : operands) {
    known.operands.push_back(operand == supposed.value && !supposed.moved
                                 ? supposed.sharding
                                 : assigned.lookup(operand));
    informed |= known.operands.back() != nullptr;
  }
  known.fixedResults.resize(op->getNumResults());
  known.resultRequests.resize(op->getNumResults());
  for (OpResult result : op->getResults()) {
    if (fixed.contains(result)) {
      known.fixedResults[result.getResultNumber()] = assigned.lookup(result);
      informed = true;
    }
    for (OpOperand &use : result.getUses())
      if (ShardingAttr request = requestFor(use)) {
        known.resultRequests[result.getResultNumber()].push_back(request);
        informed = true;
      }
  }
  // What other users in the same block need of each decided operand: those
  // moves happen anyway. (Scalars have no sharding, so the constant of every
  // fill costs no walk over its many uses.)
  for (auto [operand, current] : llvm::zip(operands, known.operands)) {
    SmallVector<ShardingAttr, 1> &shared = known.sharedMoves.emplace_back();
    if (!current)
      continue;
    for (OpOperand &use : operand.getUses()) {
      Operation *user = use.getOwner();
      if (op->isAncestor(user) || user->getBlock() != op->getBlock())
        continue;
      ShardingAttr need = requestFor(use);
      if (need && need != current && !llvm::is_contained(shared, need))
        shared.push_back(need);
    }
    if (operand == supposed.value && supposed.moved &&
        !llvm::is_contained(shared, supposed.sharding))
      shared.push_back(supposed.sharding);
  }
  return known;
}

SmallVector<std::optional<double>>
FunctionPropagation::readersDelta(Supposition supposed, unsigned axis,
                                  Operation *peer) {
  SmallVector<std::optional<double>> deltas;
  SmallPtrSet<Operation *, 4> asked;
  for (OpOperand &use : supposed.value.getUses()) {
    // What decided users ask is priced as a request.
    Operation *user = use.getOwner();
    if (requestFor(use) || required.contains(user) ||
        (peer && (user == peer || user->getBlock() != peer->getBlock())) ||
        !asked.insert(user).second)
      continue;
    auto it = ruleIndex.find(user);
    if (it == ruleIndex.end()) {
      deltas.push_back(std::nullopt);
      continue;
    }
    // The user's other moves are its own: only the difference counts.
    const ShardingRule &rule = rules[it->second];
    std::optional<double> given = leastOnAxis(user, rule, axis, supposed);
    std::optional<double> free = leastOnAxis(user, rule, axis, {});
    deltas.push_back(given && free ? std::optional<double>(*given - *free)
                                   : std::nullopt);
  }
  return deltas;
}

std::optional<double> FunctionPropagation::laterCost(Value result,
                                                     unsigned axis,
                                                     Placement produced) {
  SmallVector<std::optional<double>> deltas =
      readersDelta({result, onAxis(axis, produced)}, axis);
  if (deltas.empty())
    return std::nullopt;
  // The dearest user, not the sum: users that need the same move of the
  // value share it. A user that cannot say makes the answer unknown.
  double seconds = 0;
  for (std::optional<double> delta : deltas) {
    if (!delta)
      return std::nullopt;
    seconds = std::max(seconds, *delta);
  }
  return seconds;
}

double FunctionPropagation::sharedGain(Operation *op, Value operand,
                                       unsigned axis, Placement moved) {
  // Only readers in the same block share a move (contextFor).
  double seconds = 0;
  for (std::optional<double> delta :
       readersDelta({operand, onAxis(axis, moved), /*moved=*/true}, axis, op))
    if (delta)
      seconds = std::max(seconds, -*delta);
  return seconds;
}

std::optional<double> FunctionPropagation::leastOnAxis(Operation *op,
                                                       const ShardingRule &rule,
                                                       unsigned axis,
                                                       Supposition supposed) {
  bool informed;
  StrategyContext known = contextFor(op, rule, informed, supposed);
  SmallVector<AxisDecision> decisions;
  // An op with no strategy says so when it decides.
  QuietDiagnostics quiet(func.getContext());
  if (failed(chooseStrategy(op, rule, mesh, known, &decisions)))
    return std::nullopt;
  double least = std::numeric_limits<double>::infinity();
  for (const AxisDecision::Considered &c : decisions[axis].considered)
    if (c.ruledOut.empty())
      least = std::min(least, c.seconds);
  return least;
}

bool FunctionPropagation::decideRuleOp(Operation *op, bool force) {
  const ShardingRule &rule = rules[ruleIndex.lookup(op)];
  bool informed;
  StrategyContext known = contextFor(op, rule, informed);
  if (!informed && !force)
    return false;
  SmallVector<Value> operands = rule.operands(op);
  known.laterCost = [&](unsigned result, unsigned axis, Placement produced) {
    return laterCost(op->getResult(result), axis, produced);
  };
  known.sharedGain = [&](unsigned operand, unsigned axis, Placement moved) {
    return sharedGain(op, operands[operand], axis, moved);
  };

  // Whether an all_reduce was priced alone that an op not decided yet may
  // still give a partner.
  bool mayJoinLater = false;
  if (combine)
    known.reductionPartner = [&](Value value, Operation *user, unsigned axis,
                                 Placement partial) {
      auto [block, window] = reductionWindow(value, user);
      Value partner = reductionPartner(value, block, window, axis, partial);
      if (!partner && !force && !mayJoinLater)
        mayJoinLater = mayGetPartner(block, window, op);
      return partner;
    };

  SmallVector<AxisDecision> *explanation = nullptr;
  if (explain) {
    Explanation &record = explanations[op];
    explanation = &record.axes;
    record.uninformed = !informed;
  }
  FailureOr<SmallVector<AxisChoice>> strategy =
      chooseStrategy(op, rule, mesh, known, explanation);
  if (succeeded(strategy) && mayJoinLater &&
      wouldJoinLater(op, rule, known, *strategy)) {
    explanations.erase(op);
    return false;
  }
  undecidedReductions[op->getBlock()].erase(positions.lookup(op));
  if (failed(strategy)) {
    failedOps = true;
    required[op] = {};
    return true;
  }
  SmallVector<ShardingAttr> needs(operands.size());
  for (auto [i, operand] : llvm::enumerate(operands)) {
    if (!rule.isTensorOperand(i))
      continue;
    needs[i] = shardingUnder(rule, *strategy, false, i, meshRef);
    // A function's arguments have no producer to decide them: they adapt.
    // (A loop's iter args are the loop's to decide, from its inits.)
    auto arg = dyn_cast<BlockArgument>(operand);
    if (arg && !assigned.count(arg) &&
        arg.getOwner() == &func.getBody().front())
      assign(operand, needs[i]);
  }
  required[op] = std::move(needs);
  for (unsigned j = 0, e = op->getNumResults(); j < e; ++j)
    if (rule.isTensorResult(j))
      assign(op->getResult(j), shardingUnder(rule, *strategy, true, j, meshRef));
  return true;
}

bool FunctionPropagation::mayGetPartner(Block *block, Window window,
                                        Operation *op) const {
  // A partner would be made by a contraction or reduction of the
  // all_reduce's block, not decided yet, inside the all_reduce's window (one
  // made before it and read after is almost always decided by then: the
  // sweeps go in program order).
  auto it = undecidedReductions.find(block);
  if (it == undecidedReductions.end())
    return false;
  Operation *opThere = block->findAncestorOpInBlock(*op);
  int64_t self = opThere ? positions.lookup(opThere) : -1;
  const std::set<int64_t> &makers = it->second;
  for (auto at = makers.upper_bound(window.ready);
       at != makers.end() && *at < window.firstUse; ++at)
    if (*at != self)
      return true;
  return false;
}

bool FunctionPropagation::wouldJoinLater(Operation *op,
                                         const ShardingRule &rule,
                                         const StrategyContext &known,
                                         ArrayRef<AxisChoice> chosen) {
  // The choice if every all_reduce that may still get a partner had one.
  StrategyContext hopeful = known;
  hopeful.reductionPartner = [&](Value value, Operation *user, unsigned axis,
                                 Placement partial) {
    auto [block, window] = reductionWindow(value, user);
    if (Value partner = reductionPartner(value, block, window, axis, partial))
      return partner;
    return mayGetPartner(block, window, op) ? value : Value();
  };
  ++numSecondLooks;
  FailureOr<SmallVector<AxisChoice>> hoped =
      chooseStrategy(op, rule, mesh, hopeful);
  return succeeded(hoped) && ArrayRef<AxisChoice>(*hoped) != chosen;
}

bool FunctionPropagation::decideLoop(scf::ForOp loop, bool force) {
  // Each position is decided as soon as it can be, so that the body's ops
  // decide from it; the loop is done once every position is.
  // Both entries exist before either is held: adding one to the map may
  // move the other (a loop nest deep enough to grow the map crashed here).
  Operation *yield = loop.getBody()->getTerminator();
  required.try_emplace(loop);
  required.try_emplace(yield);
  SmallVector<ShardingAttr> &needs = required.find(loop)->second;
  SmallVector<ShardingAttr> &yieldNeeds = required.find(yield)->second;
  needs.resize(loop->getNumOperands());
  yieldNeeds.resize(loop.getNumResults());
  bool progress = false;
  for (unsigned i = 0, e = loop.getNumResults(); i < e; ++i) {
    Value result = loop.getResult(i);
    if (assigned.count(result) || !isa<RankedTensorType>(result.getType()))
      continue;
    // An iter arg typed by the program comes first: the body is written
    // for it.
    BlockArgument iterArg = loop.getRegionIterArgs()[i];
    ShardingAttr sharding = assigned.lookup(iterArg);
    StringRef reason = "as the program typed its iter arg";
    // Then the init, unless the carry is an accumulator and the init
    // replicated: gradients accumulated over micro-batches stay a partial
    // sum until after the loop, one all_reduce instead of one per
    // iteration, whether the init is a zero fill (which decides nothing) or
    // a replicated gradient buffer (which becomes any sharding locally). A
    // split or partial init keeps the carry as it is (taking it elsewhere
    // would cost a collective before the loop).
    Value init = loop.getInitArgs()[i];
    ShardingAttr initSharding = assigned.lookup(init);
    bool accumulates = isAccumulator(loop, i) &&
                       (!initSharding || initSharding.isReplicated());
    auto take = [&](ShardingAttr candidate, StringRef why) {
      if (!sharding && candidate) {
        sharding = candidate;
        reason = why;
      }
    };
    if (!accumulates)
      take(initSharding, "as its init");
    take(assigned.lookup(loop.getYieldedValues()[i]),
         accumulates ? "as the body yields it (the carry accumulates, and "
                       "its init, replicated or a fill, takes any sharding "
                       "locally, so the body decides)"
                     : "as the body yields it (its init decided nothing)");
    if (force)
      take(initSharding, "as its init (the body decided nothing)");
    // What the loop's users ask comes last (and only once nothing else
    // will decide), so that the body can speak first.
    if (force)
      take(firstRequest(result), "as a user of the result asks (nothing "
                                 "else decided it)");
    if (force)
      take(replicated(), "replicated: nothing decided it");
    if (!sharding)
      continue;
    explainCarry(loop, i, reason);
    assign(result, sharding);
    assign(iterArg, sharding);
    // The loop needs its init, and its body yields, as the iter arg is.
    needs[loop.getNumControlOperands() + i] = sharding;
    yieldNeeds[i] = sharding;
    progress = true;
  }
  return progress;
}

bool FunctionPropagation::decideBranch(scf::IfOp branch, bool force) {
  // Every rank takes the same branch: the condition is a scalar, and dt's
  // scalars are the same on every rank (tensor.extract reads replicated
  // tensors only). So a result has one sharding whichever branch ran, and
  // the other branch moves its value there.
  SmallVector<ShardingAttr> shardings(branch.getNumResults());
  for (auto [i, result] : llvm::enumerate(branch.getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      continue;
    // What the branches yield comes first, once both are decided (or
    // nothing else will decide): of those, the sharding that costs least to
    // reach from both and to give the users what they ask wins; on a tie,
    // the then branch's.
    SmallVector<ShardingAttr, 2> yielded;
    for (Block *block : {branch.thenBlock(), branch.elseBlock()}) {
      if (!block)
        continue;
      if (ShardingAttr s =
              assigned.lookup(block->getTerminator()->getOperand(i)))
        yielded.push_back(s);
      else if (!force)
        return false;
    }
    auto cost = [&](ShardingAttr to) {
      double seconds = 0;
      auto add = [&](ShardingAttr from, ShardingAttr target) {
        seconds += redistributionSeconds(mesh, type, from.getPlacements(),
                                         target.getPlacements());
      };
      for (ShardingAttr from : yielded)
        add(from, to);
      for (OpOperand &use : result.getUses())
        if (ShardingAttr request = requestFor(use))
          add(to, request);
      return seconds;
    };
    for (ShardingAttr candidate : yielded)
      if (!shardings[i] || cost(candidate) < cost(shardings[i]))
        shardings[i] = candidate;
    // Explained apart: the costs are computed again only when asked.
    if (explain && shardings[i]) {
      std::string why = "as the branches yield it";
      if (yielded.size() == 2 && yielded[0] != yielded[1]) {
        bool then = shardings[i] == yielded[0];
        double chosen = cost(shardings[i]) * 1e6;
        double other = cost(yielded[then ? 1 : 0]) * 1e6;
        why = llvm::formatv("as the {0} branch yields it: ",
                            then ? "then" : "else");
        why += chosen < other
                   ? llvm::formatv("{0:f1} us to reach from both branches and "
                                   "give its users what they ask, against "
                                   "{1:f1} us",
                                   chosen, other)
                         .str()
                   : llvm::formatv("{0:f1} us either way, and a tie goes to "
                                   "the then branch",
                                   chosen)
                         .str();
      }
      explainCarry(branch, i, why);
    }
    // Then what the users ask, once nothing else will decide.
    if (!shardings[i] && force) {
      shardings[i] = firstRequest(result);
      explainCarry(branch, i,
                   "as a user of the result asks (the branches decided "
                   "nothing)");
    }
    if (!shardings[i] && force) {
      shardings[i] = replicated();
      explainCarry(branch, i, "replicated: nothing decided it");
    }
    // All results at once: a decision is final.
    if (!shardings[i])
      return false;
  }
  for (auto [result, sharding] : llvm::zip(branch.getResults(), shardings))
    if (sharding)
      assign(result, sharding);
  required[branch] = {ShardingAttr()}; // The condition is a scalar.
  for (Block *block : {branch.thenBlock(), branch.elseBlock()})
    if (block)
      required[block->getTerminator()] = shardings;
  return true;
}

bool FunctionPropagation::decideWhile(scf::WhileOp loop, bool force) {
  // Two sets of values share a sharding per position: what enters the
  // condition region (an init, its block argument, what the body yields)
  // and what leaves it (what scf.condition forwards, the body's block
  // argument, the loop's result). Every rank runs as many trips: the
  // condition is a scalar, equal on every rank. Each position is decided
  // as soon as it can be, so that the regions' ops decide from it.
  Block *before = loop.getBeforeBody(), *after = loop.getAfterBody();
  scf::ConditionOp condition = loop.getConditionOp();
  scf::YieldOp yield = loop.getYieldOp();
  bool progress = false, done = true;
  // Entering: the block argument if typed, else the init's, else what the
  // body yields, else (forced) replicated.
  for (auto [i, init] : llvm::enumerate(loop.getInits())) {
    BlockArgument arg = before->getArgument(i);
    if (!isa<RankedTensorType>(arg.getType()) || assigned.count(arg))
      continue;
    ShardingAttr s = assigned.lookup(init);
    if (!s)
      s = assigned.lookup(yield.getOperand(i));
    if (!s && force)
      s = replicated();
    if (!s) {
      done = false;
      continue;
    }
    assign(arg, s);
    progress = true;
  }
  // Leaving: what the condition region forwards, once it has decided; as a
  // last resort, what a user of the result asks, else replicated.
  for (auto [j, result] : llvm::enumerate(loop.getResults())) {
    BlockArgument arg = after->getArgument(j);
    if (!isa<RankedTensorType>(arg.getType()) || assigned.count(arg))
      continue;
    ShardingAttr s = assigned.lookup(condition.getArgs()[j]);
    StringRef reason = "as the condition region forwards it";
    if (!s && lastResort) {
      s = firstRequest(result);
      reason = "as a user of the result asks (nothing else decided it)";
    }
    if (!s && lastResort) {
      s = replicated();
      reason = "replicated: nothing decided it";
    }
    if (!s) {
      done = false;
      continue;
    }
    explainCarry(loop, j, reason);
    assign(arg, s);
    assign(result, s);
    progress = true;
  }
  if (!done)
    return progress;
  // The loop needs its inits, the body yields, and the condition forwards
  // (after the condition itself) as the block arguments are.
  auto shardingsOf = [&](ValueRange values) {
    return llvm::map_to_vector(values,
                               [&](Value v) { return assigned.lookup(v); });
  };
  required[loop] = shardingsOf(before->getArguments());
  required[yield] = shardingsOf(before->getArguments());
  SmallVector<ShardingAttr> forwarded = {ShardingAttr()};
  llvm::append_range(forwarded, shardingsOf(after->getArguments()));
  required[condition] = std::move(forwarded);
  return true;
}

bool FunctionPropagation::tryDecide(Operation *op, bool force) {
  // A loop decides position by position (decideLoop says when it has
  // nothing left to decide).
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return decideLoop(loop, force);
  if (required.count(op))
    return false;
  if (ruleIndex.count(op))
    return decideRuleOp(op, force);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return decideBranch(branch, force);
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    return decideWhile(loop, force);
  if (auto call = dyn_cast<func::CallOp>(op))
    return decideCall(call, force);
  return false;
}

bool FunctionPropagation::decideCall(func::CallOp call, bool force) {
  SmallVector<ShardingAttr> seeds;
  for (Value operand : call.getOperands()) {
    seeds.push_back(assigned.lookup(operand));
    if (!seeds.back() && isa<RankedTensorType>(operand.getType()) && !force)
      return false;
  }
  func::FuncOp callee = module.callee(call);
  if (failed(module.propagate(callee, meshRef, seeds, call))) {
    failedOps = true;
    required[call] = {};
    return true;
  }
  // The callee's signature is final: the call needs its operands that way
  // and produces its results that way.
  SmallVector<ShardingAttr> needs;
  for (Type type : callee.getArgumentTypes())
    needs.push_back(getShardingEncoding(type));
  required[call] = std::move(needs);
  for (auto [result, type] : llvm::zip(call.getResults(), callee.getResultTypes()))
    if (ShardingAttr sharding = getShardingEncoding(type)) {
      assign(result, sharding);
      fixed.insert(result);
    }
  return true;
}

LogicalResult FunctionPropagation::run() {
  if (failed(seed()))
    return failure();
  // Sweep forward then backward while anything is decided, then let what no
  // information reached replicate.
  for (bool progress = true; progress;) {
    progress = false;
    for (Operation *op : ops)
      progress |= tryDecide(op, /*force=*/false);
    for (Operation *op : llvm::reverse(ops))
      progress |= tryDecide(op, /*force=*/false);
  }
  for (Operation *op : ops)
    tryDecide(op, /*force=*/true);
  lastResort = true;
  for (Operation *op : ops)
    tryDecide(op, /*force=*/true);
  if (failedOps)
    return failure();
  // Arguments nothing decided take what their first user needs.
  for (BlockArgument arg : func.getArguments())
    if (!assigned.count(arg))
      if (ShardingAttr request = firstRequest(arg))
        assign(arg, request);
  // Before the rewrite, which erases the constraints: an explanation may
  // name a constrained value (the partner of a joined all_reduce).
  emitExplanations();
  return rewrite();
}

/// `linalg.generic`, or `linalg.generic (softmax: max)` for an op whose
/// location names it.
static std::string describeOp(Operation *op) {
  std::string name = locationName(op->getLoc());
  std::string text = op->getName().getStringRef().str();
  return name.empty() ? text : text + " (" + name + ")";
}

/// Where `value` is made, for explanations: `f.mlir:12:8` for an op's
/// result, `argument #i`.
static std::string describeValue(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return "argument #" + std::to_string(arg.getArgNumber());
  std::string text = fileLineColumn(value.getLoc());
  if (text.empty())
    text =
        ("the " + value.getDefiningOp()->getName().getStringRef() + " result")
            .str();
  return text;
}

void FunctionPropagation::emitExplanations() {
  // A contraction's own compute is part of its cost: said apart, since it
  // is often far below the 0.1 us the total is rounded to.
  // A move another user needs anyway is shared, and an all_reduce that
  // runs in one call with another costs no latency of its own: both said.
  auto cost = [](const AxisDecision::Considered &c) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::format("[%.1f us", c.seconds * 1e6);
    if (c.computeSeconds != 0) {
      // Two significant digits below 0.1 us, where the total shows nothing.
      double micros = c.computeSeconds * 1e6;
      os << " with " << llvm::format(micros < 0.1 ? "%.2g" : "%.1f", micros)
         << " us compute";
    }
    if (c.sharesMove)
      os << ", sharing a move another user needs";
    if (c.joinedReductionOf)
      os << ", its all_reduce in one call with that of "
         << describeValue(c.joinedReductionOf);
    os << "]";
    return text;
  };
  for (Operation *op : ops) {
    if (auto reasons = carryReasons.find(op); reasons != carryReasons.end())
      for (auto [i, reason] : llvm::enumerate(reasons->second)) {
        if (reason.empty())
          continue;
        InFlightDiagnostic remark = emitRemark(op->getLoc());
        remark << describeOp(op) << ", result #" << i << ": [";
        llvm::interleaveComma(assigned.lookup(op->getResult(i)).getPlacements(),
                              remark,
                              [&](const Placement &p) { remark << p.str(); });
        remark << "] " << reason;
      }
    auto it = explanations.find(op);
    // Empty tensors, fills and constants take what their users need.
    if (it == explanations.end() ||
        isa<tensor::EmptyOp, linalg::FillOp, arith::ConstantOp>(op))
      continue;
    const ShardingRule &rule = rules[ruleIndex.lookup(op)];
    for (const AxisDecision &decision : it->second.axes) {
      InFlightDiagnostic remark = emitRemark(op->getLoc());
      remark << describeOp(op) << ", mesh axis \""
             << mesh.axisNames[decision.axis] << "\": chose ";
      SmallVector<const AxisDecision::Considered *> others, ruledOut;
      const AxisDecision::Considered *chosen = nullptr;
      for (const AxisDecision::Considered &c : decision.considered) {
        if (c.choice == decision.chosen) {
          remark << describeChoice(rule, c.choice) << " " << cost(c);
          chosen = &c;
        } else
          (c.ruledOut.empty() ? others : ruledOut).push_back(&c);
      }
      llvm::stable_sort(
          others, [](auto *a, auto *b) { return a->seconds < b->seconds; });
      if (!others.empty())
        remark << " over ";
      llvm::interleaveComma(others, remark, [&](auto *c) {
        remark << describeChoice(rule, c->choice) << " " << cost(*c);
      });
      if (decision.brokenByLaterCost) {
        bool spares = chosen && chosen->sharedGainSeconds > 0;
        bool costsMore = llvm::any_of(others, [](auto *c) {
          return c->laterSeconds && *c->laterSeconds > 0;
        });
        if (costsMore || !spares)
          remark << "; a tie within 0.1 us, which what its users would pay "
                    "next breaks";
        for (const AxisDecision::Considered *c : others)
          if (c->laterSeconds && *c->laterSeconds > 0)
            remark << " (" << describeChoice(rule, c->choice) << ": "
                   << llvm::formatv("{0:f1}", *c->laterSeconds * 1e6)
                   << " us more)";
        if (spares)
          remark << (costsMore ? ", and " : "; a tie within 0.1 us, which ")
                 << "the other readers of an operand it moves break: they "
                    "share the move ("
                 << llvm::formatv("{0:f1}", chosen->sharedGainSeconds * 1e6)
                 << " us less for them)";
      } else if (!others.empty() && chosen &&
                 others.front()->seconds < chosen->seconds)
        remark << "; a tie within 0.1 us, which the least time on the wire "
                  "breaks";
      if (!ruledOut.empty())
        remark << "; ruled out: ";
      llvm::interleaveComma(ruledOut, remark, [&](auto *c) {
        remark << describeChoice(rule, c->choice) << " (" << c->ruledOut << ")";
      });
      for (auto [i, runs] : decision.amortized) {
        remark << "; a move of ";
        if (i < op->getNumOperands())
          remark << "operand #" << i;
        else
          remark << "the tensor its body reads";
        remark << " goes before the loops around it, so each of their " << runs
               << " runs pays 1/" << runs << " of it";
      }
      for (auto [j, runs] : decision.accumulated)
        remark << "; the loop around it accumulates result #" << j
               << ", so each of its " << runs << " runs pays 1/" << runs
               << " of moving it after the loop";
      if (it->second.uninformed)
        remark << "; nothing around it was decided, so the first of the "
                  "cheapest";
    }
  }
}

LogicalResult FunctionPropagation::rewrite() {
  MLIRContext *ctx = func.getContext();
  ShardingAttr replicatedSharding = replicated();
  auto typeOf = [&](Value v) -> Type {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return v.getType();
    ShardingAttr sharding = assigned.lookup(v);
    return withSharding(type, sharding ? sharding : replicatedSharding);
  };
  // Types first, everywhere.
  for (BlockArgument arg : func.getArguments())
    arg.setType(typeOf(arg));
  for (Operation *op : ops) {
    for (Value result : op->getResults())
      result.setType(typeOf(result));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(typeOf(arg));
  }

  // Constants carry their type in their value too.
  for (Operation *op : ops)
    syncConstantValueType(op);

  // Every operand an op needs in another sharding gets its dt.redistribute:
  // upstream verifiers demand equal types (SameOperandsAndResultType,
  // destination-style inits, returns, loops), so none can wait.
  SmallVector<ConstrainOp> constraints;
  for (Operation *op : ops) {
    if (auto constrain = dyn_cast<ConstrainOp>(op)) {
      constraints.push_back(constrain);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (OpOperand &init : loop.getInitArgsMutable())
        if (isa<RankedTensorType>(init.get().getType()))
          redistributeOperand(
              init, getShardingEncoding(
                        loop.getTiedLoopRegionIterArg(&init).getType()));
      continue;
    }
    if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      for (auto [init, arg] :
           llvm::zip(loop->getOpOperands(), loop.getBeforeArguments()))
        if (isa<RankedTensorType>(arg.getType()))
          redistributeOperand(init, getShardingEncoding(arg.getType()));
      continue;
    }
    if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
      Block *after = condition.getParentOp().getAfterBody();
      for (auto [operand, arg] :
           llvm::zip(condition.getArgsMutable(), after->getArguments()))
        if (isa<RankedTensorType>(arg.getType()))
          redistributeOperand(operand, getShardingEncoding(arg.getType()));
      continue;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      // A loop's body and a branch yield the parent's results; a while's
      // body yields the condition region's arguments.
      Operation *parent = yield->getParentOp();
      if (auto loop = dyn_cast<scf::WhileOp>(parent)) {
        for (auto [operand, arg] :
             llvm::zip(yield->getOpOperands(), loop.getBeforeArguments()))
          if (isa<RankedTensorType>(arg.getType()))
            redistributeOperand(operand, getShardingEncoding(arg.getType()));
      } else if (isa<scf::ForOp, scf::IfOp>(parent)) {
        for (OpOperand &operand : yield->getOpOperands())
          if (isa<RankedTensorType>(operand.get().getType()))
            redistributeOperand(
                operand,
                getShardingEncoding(
                    parent->getResult(operand.getOperandNumber()).getType()));
      }
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      for (auto [operand, need] : llvm::zip(call->getOpOperands(), required[call]))
        if (need)
          redistributeOperand(operand, need);
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (OpOperand &operand : ret->getOpOperands()) {
        unsigned i = operand.getOperandNumber();
        if (!isa<RankedTensorType>(operand.get().getType()))
          continue;
        if (!resultShardings[i]) {
          resultShardings[i] = freeResultSharding(operand.get());
          if (explain)
            explainFreeResult(ret, i, resultShardings[i]);
        }
        redistributeOperand(operand, resultShardings[i]);
      }
      continue;
    }
    auto it = required.find(op);
    if (it == required.end() || !ruleIndex.count(op))
      continue;
    const ShardingRule &rule = rules[ruleIndex.lookup(op)];
    for (auto [i, need] : llvm::enumerate(it->second))
      if (need && getShardingEncoding(rule.operand(op, i).getType()) != need) {
        redistributeRuleOperand(op, rule, i, need);
        ++numRedistributions;
      }
  }

  // A constraint is now the type of its result: what remains is moving the
  // input there.
  for (ConstrainOp constrain : constraints) {
    redistributeOperand(constrain.getInputMutable(), constrain.getShardingAttr());
    constrain.getResult().replaceAllUsesWith(constrain.getInput());
    constrain.erase();
  }

  // The signature: argument and result types carry the shardings, and the
  // annotations they came from go away.
  SmallVector<Type> resultTypes;
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    resultTypes.push_back(
        tensor ? withSharding(tensor, resultShardings[i] ? resultShardings[i]
                                                         : replicatedSharding)
               : type);
  }
  func.setType(FunctionType::get(ctx, func.getBody().getArgumentTypes(),
                                 resultTypes));
  // Rebuild the attribute lists once: removing one attribute at a time
  // rebuilds the whole list each time, quadratic in the number of arguments.
  auto withoutSharding = [&](ArrayRef<DictionaryAttr> dicts) {
    SmallVector<DictionaryAttr> result;
    for (DictionaryAttr dict : dicts) {
      NamedAttrList attrs(dict);
      attrs.erase(DTDialect::kShardingAttrName);
      result.push_back(attrs.getDictionary(ctx));
    }
    return result;
  };
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  func.getAllArgAttrs(argAttrs);
  func.getAllResultAttrs(resultAttrs);
  func.setAllArgAttrs(withoutSharding(argAttrs));
  func.setAllResultAttrs(withoutSharding(resultAttrs));
  return success();
}

LogicalResult ModulePropagation::propagate(func::FuncOp func,
                                           FlatSymbolRefAttr fallbackMesh,
                                           ArrayRef<ShardingAttr> argumentSeeds,
                                           Operation *caller) {
  auto [it, inserted] = states.try_emplace(func, State::InProgress);
  if (!inserted) {
    if (it->second == State::Done)
      return success();
    return caller->emitError("dt cannot shard recursive calls: @")
           << func.getSymName() << " calls itself";
  }
  FailureOr<FlatSymbolRefAttr> meshRef = functionMesh(func);
  if (failed(meshRef))
    return failure();
  FlatSymbolRefAttr chosen = *meshRef ? *meshRef : fallbackMesh;
  if (!chosen) {
    // Not sharded, and not called from sharded code (yet): leave it, unless
    // a later call site asks for it.
    states.erase(func);
    return success();
  }
  if (*meshRef && fallbackMesh && *meshRef != fallbackMesh)
    return caller->emitError("calls @")
           << func.getSymName() << ", which is sharded over " << *meshRef
           << ", from a function sharded over " << fallbackMesh;
  const MeshInfo *mesh = meshes.lookup(func, chosen);
  if (!mesh)
    return failure();
  FunctionPropagation propagation(func, *mesh, chosen, *this, argumentSeeds,
                                  explain, combine);
  if (failed(propagation.run()))
    return failure();
  numDecided += propagation.numDecided;
  numRedistributions += propagation.numRedistributions;
  numSecondLooks += propagation.numSecondLooks;
  states[func] = State::Done;
  return success();
}

LogicalResult ModulePropagation::run() {
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!func.isExternal() && failed(propagate(func, nullptr, {}, nullptr)))
      return failure();
  return success();
}

LogicalResult mlir::dt::propagateModule(ModuleOp module, MeshCache &meshes,
                                        bool combine) {
  return ModulePropagation(module, meshes, /*explain=*/false, combine).run();
}

namespace {
struct PropagatePass
    : public mlir::dt::impl::PropagatePassBase<PropagatePass> {
  mlir::dt::Statistic numPlansPriced{
      this, "plans-priced", "Number of whole plans the plan search priced"};
  mlir::dt::Statistic numPins{
      this, "pins", "Number of values and arguments the plan search pinned"};
  mlir::dt::Statistic numValuesDecided{
      this, "values-decided", "Number of tensor values given a sharding"};
  mlir::dt::Statistic numRedistributes{
      this, "redistributes-inserted",
      "Number of dt.redistribute ops inserted for op operands"};
  mlir::dt::Statistic numSecondLooks{
      this, "second-looks",
      "Number of times an op priced its choices again as if its all_reduces "
      "had partners (it waits when that changes them)"};
  using Base::Base;

  /// A remark at the first function with values the search could pin, on
  /// what it did, and one at each value it pinned.
  void explainSearch(const PlanSearch &planSearch, ArrayRef<Pin> pins) {
    InFlightDiagnostic summary = emitRemark(*planSearch.at) << "plan search: ";
    if (planSearch.firstRound > search && !planSearch.windowed) {
      summary << "not run: a first round would price " << planSearch.firstRound
              << " plans, more than search=" << static_cast<unsigned>(search);
      return;
    }
    if (!planSearch.unpinned) {
      summary << "not run: the plan without pins could not be priced";
      return;
    }
    if (planSearch.windowed)
      summary << "by windows (a first round of whole plans would price "
              << planSearch.firstRound
              << ", more than search=" << static_cast<unsigned>(search)
              << "; a window is the ops "
              << "within " << kWindowSteps << " use-def steps of a value): "
              << "priced " << planSearch.numWindowsPriced
              << " window plans (and reused " << planSearch.numWindowsReused
              << " of the same program) and " << planSearch.numPriced
              << " whole plans";
    else
      summary << "priced " << planSearch.numPriced << " plans";
    if (planSearch.argumentsLeftOut)
      summary << " (values ops make only: a first round with the arguments "
                 "would price "
              << planSearch.argumentsLeftOut << ")";
    summary << "; ";
    if (pins.empty()) {
      summary << "none is cheaper than propagation's own ("
              << formatSeconds(*planSearch.unpinned)
              << ") by more than a tie (0.1 us, or 1% of a plan under 10 us)";
      return;
    }
    summary << "pinned " << pins.size() << " value"
            << (pins.size() == 1 ? "" : "s") << ": the plan costs "
            << formatSeconds(pins.back().after) << " instead of "
            << formatSeconds(*planSearch.unpinned)
            << " (collectives, contractions and memory-bound ops, as "
               "dt-cost-report prices them)";
    summary.report();
    for (const Pin &pin : pins) {
      InFlightDiagnostic remark = emitRemark(pin.value.getLoc());
      remark << "plan search: pinned ";
      if (auto arg = dyn_cast<BlockArgument>(pin.value))
        remark << "argument #" << arg.getArgNumber()
               << (argumentSharding(arg)
                       ? " (redistributed once, at the entry) to "
                       : " to ");
      else
        remark << "this value to ";
      remark << pin.sharding << ": " << formatSeconds(pin.before) << " -> "
             << formatSeconds(pin.after);
      if (planSearch.windowed) {
        remark << " (" << formatSeconds(pin.inWindow) << " less in its window";
        if (pin.loopCarried) {
          remark << ", run in a copy of its loop";
          if (*pin.loopCarried)
            remark << " carrying " << *pin.loopCarried
                   << (*pin.loopCarried == 1 ? " value" : " values");
        }
        remark << "; " << pin.together << (pin.together == 1 ? " pin" : " pins")
               << " kept together)";
      }
    }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    PlanSearch planSearch(module, topology, combine, search, pinArguments,
                          windows);
    SmallVector<Pin> pins;
    if (search) {
      pins = planSearch.run();
      numPlansPriced += planSearch.numPriced;
      numPins += pins.size();
    }
    insertPins(pins);
    MeshCache meshes(topology);
    ModulePropagation propagation(module, meshes, explain, combine);
    if (failed(propagation.run()))
      return signalPassFailure();
    if (explain && planSearch.at)
      explainSearch(planSearch, pins);
    numValuesDecided += propagation.numDecided;
    numRedistributes += propagation.numRedistributions;
    numSecondLooks += propagation.numSecondLooks;
    if (failed(verifyEncodingsPreserved(module)))
      signalPassFailure();
  }
};
} // namespace
