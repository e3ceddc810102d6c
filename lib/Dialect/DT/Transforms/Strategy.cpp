//===- Strategy.cpp - Choosing an op's sharding strategy ------------------===//

#include "dt/Dialect/DT/Transforms/Strategy.h"

#include "dt/Dialect/DT/Transforms/Buckets.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;

/// Local moves (slicing, zeroing) cost nothing on the wire but are not free:
/// this keeps ties on the choice that leaves a value as it is.
static constexpr double kLocalMoveSeconds = 1e-12;

static constexpr const char *kBooleanSum =
    "a partial sum of booleans means nothing";

/// A partial i1 means nothing for a sum.
static bool isMeaningful(Placement p, RankedTensorType type) {
  return !(p.isPartial() && p.reduction() == ::dt::ReductionKind::Sum &&
           type.getElementType().isInteger(1));
}

FailureOr<SmallVector<AxisChoice>>
mlir::dt::chooseStrategy(Operation *op, const ShardingRule &rule,
                         const MeshInfo &mesh, const StrategyContext &known,
                         SmallVectorImpl<AxisDecision> *explanation) {
  SmallVector<AxisChoice> options = enumerateAxisChoices(rule);
  SmallVector<Value> operands = rule.operands(op);
  SmallVector<int64_t> factorPieces(rule.factors.size(), 1);
  SmallVector<AxisChoice> strategy;
  OpWork work = estimateWork(op);
  // The costs are per run of the op. A value from outside the loops around
  // it moves once, before them (redistributeOperand), for all their runs.
  SmallVector<int64_t> runsPerMove;
  for (auto [i, operand] : llvm::enumerate(operands))
    runsPerMove.push_back(rule.isTensorOperand(i) ? dt::runsPerMove(operand, op)
                                                  : 1);
  SmallVector<int64_t> runsPerLaterMoveOf = llvm::map_to_vector(
      op->getResults(), [](Value result) { return runsPerLaterMove(result); });
  // On equal cost, moving a result beats moving an operand: communication
  // happens as late as possible, where values tend to be smaller (after
  // reductions) and more of it can be merged.
  // Moving `value` for `user` (null: for its readers, not decided yet).
  auto move = [&](Value value, Operation *user, unsigned axis,
                  RankedTensorType type, ArrayRef<Placement> placements,
                  Placement from, Placement to, double localCost,
                  Value partner) {
    // An all_reduce that shares a call with `partner`'s costs no latency,
    // and its copies as the bucket will have them (asked only then: most
    // moves have no partner).
    auto joined = [&] {
      auto isReturn = [](Operation *op) { return isa<func::ReturnOp>(op); };
      bool returned =
          user ? isReturn(user) : llvm::any_of(value.getUsers(), isReturn);
      return joinedAllReduceSeconds(mesh, axis, type, placements,
                                    isMadeForItsCollective(value), returned);
    };
    double seconds =
        partner ? joined()
                : axisTransitionSeconds(mesh, axis, type, placements, from, to);
    return from == to ? seconds : seconds + localCost;
  };
  // The value whose all_reduce reducing `value` from `from` to `to` for
  // `user` (null: its first reader) shares a call with, if any.
  // Why placing `p` on this axis would give tensor `index` (a result, or
  // an operand) partial axes whose kinds do not commute with those the
  // earlier axes chose (a sharding with no single meaning, which the
  // verifier rejects), or "" when it would not.
  auto mixesKinds = [&](bool isResult, unsigned index,
                        Placement p) -> std::string {
    if (!p.isPartial())
      return "";
    for (auto [axis, earlier] : llvm::enumerate(strategy)) {
      Placement q = placementUnder(rule, earlier, isResult, index);
      if (q.isPartial() &&
          !::dt::partialKindsCommute(q.reduction(), p.reduction()))
        return llvm::formatv("{0} #{1} would be {2} on mesh axis \"{3}\" and "
                             "{4} on this one, which do not commute",
                             isResult ? "result" : "operand", index, q.str(),
                             mesh.axisNames[axis], p.str());
    }
    return "";
  };
  auto joins = [&](Value value, Operation *user, unsigned axis, Placement from,
                   Placement to) -> Value {
    if (!from.isPartial() || !to.isReplicate() || !known.reductionPartner)
      return {};
    return known.reductionPartner(value, user, axis, from);
  };
  for (unsigned axis = 0, e = mesh.shape.size(); axis < e; ++axis) {
    struct Candidate {
      AxisChoice choice;
      double wire, total;
      /// Per result, what the look-ahead guess charged (part of `total`).
      SmallVector<double, 1> guessed;
      /// The operands it moves with a collective no other user shares
      /// yet, and where to.
      SmallVector<std::pair<unsigned, Placement>, 2> moves;
      /// Set for the tied, when looking ahead: what the next users would
      /// pay beyond the guesses, and what its moves would spare the moved
      /// operands' other users.
      std::optional<double> later;
      double gain = 0;
    };
    SmallVector<Candidate> allowedOptions;
    // Per result the user typed, what the options kept only by that type
    // would have made it on this axis: said when none makes it as typed.
    SmallVector<SmallVector<Placement, 2>, 1> otherwiseMade(
        op->getNumResults());
    AxisDecision decision{axis, {}, {}, {}, {}};
    // A replicated operand moves locally if at all: only the others' moves
    // are worth saying shared.
    for (auto [i, current] : llvm::enumerate(known.operands))
      if (current && runsPerMove[i] > 1 &&
          !current.getPlacements()[axis].isReplicate())
        decision.amortized.push_back({i, runsPerMove[i]});
    for (auto [j, runs] : llvm::enumerate(runsPerLaterMoveOf))
      if (runs > 1)
        decision.accumulated.push_back({j, runs});
    for (AxisChoice option : options) {
      if (option.kind == AxisChoice::Kind::ShardFactor) {
        const ShardingRule::Factor &factor = rule.factors[option.index];
        int64_t pieces = factorPieces[option.index] * mesh.shape[axis];
        if (factor.mustDivide && *factor.mustDivide % pieces != 0) {
          if (explanation)
            decision.considered.push_back(
                {option, 0, 0, false, Value(),
                 llvm::formatv(
                     "{0} pieces do not divide the reshaped extent {1}", pieces,
                     *factor.mustDivide)});
          continue;
        }
      }
      // Why the option is not allowed, when explaining.
      std::string ruledOut;
      double cost = 0;
      bool allowed = true;
      // Whether some operand already holds the factor this option shards.
      bool factorAlreadySharded = false;
      bool sharesMove = false;
      Value joinedReductionOf;
      SmallVector<std::pair<unsigned, Placement>, 2> moves;
      for (auto [i, current] : llvm::enumerate(known.operands)) {
        if (!rule.isTensorOperand(i))
          continue;
        auto type = cast<RankedTensorType>(operands[i].getType());
        Placement wanted = placementUnder(rule, option, false, i);
        if (!isMeaningful(wanted, type)) {
          allowed = false;
          ruledOut = kBooleanSum;
        }
        if (std::string mix = mixesKinds(false, i, wanted); !mix.empty()) {
          allowed = false;
          ruledOut = std::move(mix);
        }
        if (!current)
          continue;
        Placement from = current.getPlacements()[axis];
        Value partner = joins(operands[i], op, axis, from, wanted);
        double seconds =
            move(operands[i], op, axis, type, current.getPlacements(), from,
                 wanted, kLocalMoveSeconds, partner);
        // A collective another user needs anyway is shared: only its local
        // part is this op's.
        bool shared =
            seconds > kLocalMoveSeconds && i < known.sharedMoves.size() &&
            llvm::any_of(known.sharedMoves[i], [&](ShardingAttr other) {
              return other.getPlacements()[axis] == wanted;
            });
        sharesMove |= shared;
        if (partner && !shared)
          joinedReductionOf = partner;
        if (!shared && seconds > kLocalMoveSeconds)
          moves.push_back({i, wanted});
        // So is a move made once before the loops around the op: each run
        // pays its share.
        cost += shared ? kLocalMoveSeconds : seconds / runsPerMove[i];
        factorAlreadySharded |=
            wanted.isShard() && current.getPlacements()[axis] == wanted;
      }
      // Per result, what the guess below charged.
      SmallVector<double, 1> guessed(op->getNumResults(), 0);
      for (unsigned j = 0, n = op->getNumResults(); j < n; ++j) {
        if (!rule.isTensorResult(j))
          continue;
        auto type = cast<RankedTensorType>(op->getResult(j).getType());
        Placement produced = placementUnder(rule, option, true, j);
        if (!isMeaningful(produced, type)) {
          allowed = false;
          ruledOut = kBooleanSum;
        }
        if (std::string mix = mixesKinds(true, j, produced); !mix.empty()) {
          allowed = false;
          ruledOut = std::move(mix);
        }
        if (j < known.fixedResults.size() && known.fixedResults[j] &&
            known.fixedResults[j].getPlacements()[axis] != produced) {
          if (allowed && !llvm::is_contained(otherwiseMade[j], produced))
            otherwiseMade[j].push_back(produced);
          allowed = false;
          if (explanation)
            ruledOut = llvm::formatv(
                "result #{0} must be {1}", j,
                known.fixedResults[j].getPlacements()[axis].str());
        }
        bool requested =
            j < known.resultRequests.size() && !known.resultRequests[j].empty();
        Value result = op->getResult(j);
        if (requested)
          for (ShardingAttr request : known.resultRequests[j]) {
            Placement to = request.getPlacements()[axis];
            Value partner = joins(result, nullptr, axis, produced, to);
            if (partner)
              joinedReductionOf = partner;
            cost += move(result, nullptr, axis, type, request.getPlacements(),
                         produced, to, kLocalMoveSeconds / 2, partner);
          }
        // Look one step ahead for a result nobody has asked for yet: a
        // partial result will most likely have to be reduced (most ops are
        // not linear), and a shard this op introduces (slicing replicated
        // operands) gathered again. Charging that now weighs a cheap choice
        // here against the collective it causes later; a result a loop
        // accumulates leaves it once, for all its runs.
        else if (!(j < known.fixedResults.size() && known.fixedResults[j]) &&
                 (produced.isPartial() ||
                  (produced.isShard() && !factorAlreadySharded))) {
          Value partner =
              joins(result, nullptr, axis, produced, Placement::replicate());
          if (partner)
            joinedReductionOf = partner;
          guessed[j] = move(result, nullptr, axis, type, {}, produced,
                            Placement::replicate(), 0, partner) /
                       runsPerLaterMoveOf[j];
          cost += guessed[j];
        }
      }
      // The op's own time on each rank: splitting its loops divides it,
      // replicating or passing partial values through does not.
      strategy.push_back(option);
      double compute = rankComputeSeconds(work, op, rule, mesh, strategy);
      strategy.pop_back();
      if (explanation)
        decision.considered.push_back({option, cost + compute, compute,
                                       sharesMove, joinedReductionOf,
                                       std::move(ruledOut)});
      if (allowed)
        allowedOptions.push_back({option, cost, cost + compute,
                                  std::move(guessed), std::move(moves),
                                  std::nullopt});
    }
    std::optional<AxisChoice> best;
    if (!allowedOptions.empty()) {
      auto leastWireWithin = [&](auto totalOf) {
        double cheapest =
            totalOf(*llvm::min_element(allowedOptions, [&](auto &a, auto &b) {
              return totalOf(a) < totalOf(b);
            }));
        const Candidate *pick = nullptr;
        for (const Candidate &c : allowedOptions)
          if (totalOf(c) <= cheapest + kTieSeconds &&
              (!pick || c.wire < pick->wire))
            pick = &c;
        return pick;
      };
      const Candidate *pick =
          leastWireWithin([](const Candidate &c) { return c.total; });
      // A tie between choices that give different results is broken by
      // what the next users would pay for each (laterCost), and one between
      // choices that move operands differently by what each move would
      // spare the operands' other readers (sharedGain). A tie the
      // wire time alone breaks must not become one the look-ahead breaks
      // with picoseconds: the second pick also takes the least wire time
      // within 0.1 us.
      auto resultsDiffer = [&](const Candidate &a, const Candidate &b) {
        for (unsigned j = 0, n = op->getNumResults(); j < n; ++j)
          if (rule.isTensorResult(j) &&
              placementUnder(rule, a.choice, true, j) !=
                  placementUnder(rule, b.choice, true, j))
            return true;
        return false;
      };
      double cheapest = llvm::min_element(allowedOptions, [](auto &a, auto &b) {
                          return a.total < b.total;
                        })->total;
      auto tied = [&](const Candidate &c) {
        return c.total <= cheapest + kTieSeconds;
      };
      // Shared moves are credited only in a tie of sure costs: not where a
      // tied choice counts on a guess, or makes a partial result, whose
      // reduction priced alone may yet shrink to its bytes in a combined
      // call, which the credit would not see.
      bool sure = llvm::none_of(allowedOptions, [&](const Candidate &c) {
        if (!tied(c))
          return false;
        for (unsigned j = 0, n = op->getNumResults(); j < n; ++j)
          if (c.guessed[j] > 0 ||
              (rule.isTensorResult(j) &&
               placementUnder(rule, c.choice, true, j).isPartial()))
            return true;
        return false;
      });
      bool sharing = known.sharedGain && sure;
      bool lookAhead =
          (known.laterCost || sharing) &&
          llvm::any_of(allowedOptions, [&](auto &c) {
            return tied(c) && (resultsDiffer(c, *pick) ||
                               (sharing && c.moves != pick->moves));
          });
      if (lookAhead) {
        // Each (index, placement) asked once: every query decides users.
        auto once = [](auto query) {
          using Answer = decltype(query(0u, Placement::replicate()));
          return
              [query,
               memo = SmallVector<std::tuple<unsigned, Placement, Answer>>()](
                  unsigned i, Placement p) mutable {
                for (auto &[k, q, answer] : memo)
                  if (k == i && q == p)
                    return answer;
                Answer answer = query(i, p);
                memo.push_back({i, p, answer});
                return answer;
              };
        };
        auto laterCost = once([&](unsigned j, Placement p) {
          return known.laterCost(j, axis, p);
        });
        auto sharedGain = once([&](unsigned i, Placement p) {
          return known.sharedGain(i, axis, p);
        });
        for (Candidate &c : allowedOptions) {
          if (!tied(c))
            continue;
          c.later = 0;
          for (unsigned j = 0, n = op->getNumResults();
               known.laterCost && j < n; ++j) {
            if (!rule.isTensorResult(j) ||
                (j < known.fixedResults.size() && known.fixedResults[j]))
              continue;
            if (std::optional<double> seconds =
                    laterCost(j, placementUnder(rule, c.choice, true, j)))
              *c.later += std::max(*seconds - c.guessed[j], 0.0);
          }
          if (sharing)
            for (auto [i, moved] : c.moves)
              c.gain += sharedGain(i, moved);
        }
        const Candidate *ahead = leastWireWithin([&](const Candidate &c) {
          return c.later ? c.total + *c.later - c.gain
                         : std::numeric_limits<double>::infinity();
        });
        if (explanation) {
          decision.brokenByLaterCost = !(ahead->choice == pick->choice);
          for (const Candidate &c : allowedOptions)
            for (AxisDecision::Considered &considered : decision.considered)
              if (considered.choice == c.choice) {
                considered.laterSeconds = c.later;
                considered.sharedGainSeconds = c.gain;
              }
        }
        pick = ahead;
      }
      best = pick->choice;
    }
    if (!best) {
      InFlightDiagnostic diag =
          op->emitOpError("has no sharding strategy that gives its result "
                          "the required placement on mesh axis \"")
          << mesh.axisNames[axis] << "\"";
      for (auto [j, made] : llvm::enumerate(otherwiseMade))
        if (!made.empty()) {
          Diagnostic &note = diag.attachNote();
          note << "it can make result #" << j << " ";
          llvm::interleave(
              made, note, [&](const Placement &p) { note << p.str(); }, " or ");
          note << " on this axis, not the "
               << known.fixedResults[j].getPlacements()[axis].str()
               << " its type says: type it so and put a dt.redistribute "
                  "after it, or leave its sharding to propagation";
        }
      return diag;
    }
    if (best->kind == AxisChoice::Kind::ShardFactor)
      factorPieces[best->index] *= mesh.shape[axis];
    strategy.push_back(*best);
    if (explanation) {
      decision.chosen = *best;
      explanation->push_back(std::move(decision));
    }
  }
  return strategy;
}

std::string mlir::dt::describeChoice(const ShardingRule &rule,
                                     AxisChoice choice) {
  auto placements = [&](unsigned begin, unsigned end, bool isResult) {
    SmallVector<std::string> names;
    for (unsigned i = begin; i < end; ++i)
      if (isResult ? rule.isTensorResult(i) : rule.isTensorOperand(i))
        names.push_back(placementUnder(rule, choice, isResult, i).str());
    return llvm::join(names, ", ");
  };
  std::string results = placements(0, rule.resultIsTensor.size(), true);
  // The tensors a body reads come after the op's own operands.
  unsigned numOperands = rule.operandIsTensor.size();
  unsigned own = numOperands - rule.captured.size();
  std::string operands = placements(0, own, false);
  if (own != numOperands)
    operands += "; reads " + placements(own, numOperands, false);
  return "(" + operands + ") -> " +
         (rule.resultIsTensor.size() == 1 ? results : "(" + results + ")");
}

ShardingAttr mlir::dt::shardingUnder(const ShardingRule &rule,
                                     ArrayRef<AxisChoice> strategy,
                                     bool isResult, unsigned index,
                                     FlatSymbolRefAttr meshRef) {
  SmallVector<Placement> placements;
  for (AxisChoice choice : strategy)
    placements.push_back(placementUnder(rule, choice, isResult, index));
  return ShardingAttr::get(meshRef.getContext(), meshRef, placements);
}

Operation *mlir::dt::redistributionPoint(Value value, Operation *user) {
  Operation *definedIn = value.getParentRegion()->getParentOp();
  Operation *at = user;
  for (Operation *parent = at->getParentOp();
       parent && isa<LoopLikeOpInterface, linalg::LinalgOp>(parent) &&
       !parent->isAncestor(definedIn);
       parent = at->getParentOp())
    at = parent;
  return at;
}

/// The trip count of `loop` if it is static and at least 1; 1 otherwise.
static uint64_t staticTripCount(LoopLikeOpInterface loop) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  return trips ? std::max<uint64_t>(1, trips->getLimitedValue()) : 1;
}

int64_t mlir::dt::runsPerMove(Value value, Operation *op) {
  Operation *at = redistributionPoint(value, op);
  uint64_t runs = 1;
  for (Operation *parent = op->getParentOp(); at->isAncestor(parent);
       parent = parent->getParentOp())
    if (auto loop = dyn_cast<LoopLikeOpInterface>(parent))
      runs = llvm::SaturatingMultiply(runs, staticTripCount(loop));
  return std::min<uint64_t>(runs, std::numeric_limits<int64_t>::max());
}

/// Whether `use` is an operand its owner adds elementwise to something
/// else: an arith add of tensors, an input of linalg.add, or an operand of
/// a linalg.generic whose body yields an add of that operand's element (as
/// torch-mlir writes aten.add). The init of linalg.add is only overwritten.
static bool isAddend(OpOperand &use) {
  Operation *user = use.getOwner();
  if (isa<arith::AddFOp, arith::AddIOp>(user))
    return true;
  if (auto add = dyn_cast<linalg::AddOp>(user))
    return add.isDpsInput(&use);
  auto generic = dyn_cast<linalg::GenericOp>(user);
  if (!generic || generic.getNumDpsInits() != 1)
    return false;
  Operation *sum =
      generic.getBody()->getTerminator()->getOperand(0).getDefiningOp();
  return isa_and_nonnull<arith::AddFOp, arith::AddIOp>(sum) &&
         llvm::is_contained(sum->getOperands(),
                            generic.getMatchingBlockArgument(&use));
}

bool mlir::dt::isAccumulator(scf::ForOp loop, unsigned i) {
  BlockArgument arg = loop.getRegionIterArgs()[i];
  Operation *update = loop.getYieldedValues()[i].getDefiningOp();
  if (!update || update->getParentOp() != loop || !arg.hasOneUse() ||
      arg.use_begin()->getOwner() != update)
    return false;
  OpOperand &use = *arg.use_begin();
  if (isAddend(use))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(update);
  return linalgOp && linalgOp.getNumReductionLoops() > 0 &&
         linalgOp.isDpsInit(&use);
}

int64_t mlir::dt::runsPerLaterMove(Value value) {
  auto loop = dyn_cast<scf::ForOp>(value.getParentBlock()->getParentOp());
  if (!loop)
    return 1;
  // The position the loop yields `v` at, if it does (not a yield of an
  // scf.if inside).
  Operation *yield = loop.getBody()->getTerminator();
  auto yieldedAt = [&](Value v) -> std::optional<unsigned> {
    for (OpOperand &use : v.getUses())
      if (use.getOwner() == yield)
        return use.getOperandNumber();
    return std::nullopt;
  };
  std::optional<unsigned> position = yieldedAt(value);
  // Or added to the carry by the add that updates it (not an operand of a
  // matmul that reduces into the carry: that one may have to move first).
  if (!position && value.hasOneUse() && isAddend(*value.use_begin()))
    position = yieldedAt(value.use_begin()->getOwner()->getResult(0));
  if (!position || !isAccumulator(loop, *position))
    return 1;
  return std::min<uint64_t>(staticTripCount(loop),
                            std::numeric_limits<int64_t>::max());
}

void mlir::dt::redistributeOperand(OpOperand &operand, ShardingAttr sharding) {
  auto type = cast<RankedTensorType>(operand.get().getType());
  if (getShardingEncoding(type) == sharding)
    return;
  Operation *owner = redistributionPoint(operand.get(), operand.getOwner());
  RankedTensorType target = withSharding(type, sharding);
  for (Operation *user : operand.get().getUsers())
    if (auto earlier = dyn_cast<RedistributeOp>(user))
      if (earlier.getType() == target &&
          earlier->getBlock() == owner->getBlock() &&
          earlier->isBeforeInBlock(owner)) {
        operand.set(earlier.getResult());
        return;
      }
  OpBuilder builder(owner);
  Value moved =
      RedistributeOp::create(builder, owner->getLoc(), target, operand.get());
  operand.set(moved);
}

void mlir::dt::redistributeRuleOperand(Operation *op, const ShardingRule &rule,
                                       unsigned i, ShardingAttr sharding) {
  if (i < op->getNumOperands())
    return redistributeOperand(op->getOpOperand(i), sharding);
  // Every read in the body: the first moves the tensor before the op, the
  // others share that move.
  Value tensor = rule.operand(op, i);
  SmallVector<OpOperand *> reads;
  for (OpOperand &use : tensor.getUses())
    if (op->isProperAncestor(use.getOwner()))
      reads.push_back(&use);
  for (OpOperand *read : reads)
    redistributeOperand(*read, sharding);
}

StrategyContext mlir::dt::currentShardings(Operation *op,
                                           const ShardingRule &rule) {
  StrategyContext known;
  for (auto [i, operand] : llvm::enumerate(rule.operands(op)))
    known.operands.push_back(rule.isTensorOperand(i)
                                 ? getShardingEncoding(operand.getType())
                                 : ShardingAttr());
  for (auto [j, result] : llvm::enumerate(op->getResults()))
    known.fixedResults.push_back(rule.isTensorResult(j)
                                     ? getShardingEncoding(result.getType())
                                     : ShardingAttr());
  return known;
}

/// True when `choice` gives exactly the placements the op has on `axis`.
static bool matches(const ShardingRule &rule, AxisChoice choice,
                    const StrategyContext &known, unsigned axis) {
  for (auto [i, sharding] : llvm::enumerate(known.operands))
    if (sharding && placementUnder(rule, choice, false, i) !=
                        sharding.getPlacements()[axis])
      return false;
  for (auto [j, sharding] : llvm::enumerate(known.fixedResults))
    if (sharding &&
        placementUnder(rule, choice, true, j) != sharding.getPlacements()[axis])
      return false;
  return true;
}

std::optional<StrategyMismatch>
mlir::dt::findMismatch(const ShardingRule &rule, ArrayRef<int64_t> meshShape,
                       const StrategyContext &known,
                       SmallVectorImpl<AxisChoice> *strategy) {
  SmallVector<AxisChoice> choices = enumerateAxisChoices(rule);
  SmallVector<int64_t> factorPieces(rule.factors.size(), 1);
  for (unsigned axis = 0, e = meshShape.size(); axis < e; ++axis) {
    const AxisChoice *found = llvm::find_if(
        choices, [&](AxisChoice c) { return matches(rule, c, known, axis); });
    if (found == choices.end())
      return StrategyMismatch{axis, std::nullopt};
    if (strategy)
      strategy->push_back(*found);
    if (found->kind != AxisChoice::Kind::ShardFactor)
      continue;
    int64_t &pieces = factorPieces[found->index];
    pieces *= meshShape[axis];
    const ShardingRule::Factor &factor = rule.factors[found->index];
    if (factor.mustDivide && *factor.mustDivide % pieces != 0)
      return StrategyMismatch{axis, factor.mustDivide, pieces};
  }
  return std::nullopt;
}

bool mlir::dt::isFullyReplicated(Operation *op) {
  auto replicated = [](Type type) {
    ShardingAttr sharding = getShardingEncoding(type);
    if (!sharding)
      return !isa<RankedTensorType>(type);
    return sharding.isReplicated();
  };
  if (!llvm::all_of(op->getOperandTypes(), replicated) ||
      !llvm::all_of(op->getResultTypes(), replicated))
    return false;
  // Tensors its regions use from above (a gather's table).
  WalkResult walk = op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentRegion()->getParentOp()) &&
          !replicated(v.getType()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}
