//===- HoistInvariantMath.cpp - dt-hoist-invariant-math -------------------===//
//
// A fused generic computes its body at every point of its loops, and so
// every value in it, even one that depends on fewer loops than it has: a
// rotary embedding's angle, `sin(s * freq(d))` inside a loop nest over
// (batch, seq, heads, dim), is the same for every batch and head. LLVM
// hoists such a value out of the loops inside the ones it depends on, never
// out of one around them. Here a value that needs a transcendental function
// (exp, log, sin, tanh, pow, ...), and depends on a subset of the loops
// that leaves out one around a loop it keeps, is made once for each point of
// its own loops by a generic of its own (a table), which the op then reads.
//
// The table holds what the op computed, bit for bit: the same operations on
// the same operands. 16-bit floats are left alone: a fused kernel keeps
// their intermediate values in f32 (dt-elide-half-roundings), which a bf16
// table would round.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::dt {
#define GEN_PASS_DEF_HOISTINVARIANTMATHPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// The loops hoisting must save at least: a table costs a write and a read
/// of each of its elements.
constexpr int64_t kMinRepeats = 4;

/// Operations worth computing once: the transcendental functions, each a
/// polynomial of tens of instructions or a libm call an element (not the
/// ones an instruction does: sqrt, abs, floor, fma, a division, ...).
bool isCostly(Operation *op) {
  return isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
             math::Log2Op, math::Log10Op, math::Log1pOp, math::SinOp,
             math::CosOp, math::TanOp, math::SinhOp, math::CoshOp, math::TanhOp,
             math::AsinOp, math::AcosOp, math::AtanOp, math::Atan2Op,
             math::AsinhOp, math::AcoshOp, math::AtanhOp, math::ErfOp,
             math::ErfcOp, math::PowFOp, math::FPowIOp, math::CbrtOp>(op);
}

/// A type a table may hold without changing the op's bits.
bool isTableType(Type type) {
  if (auto f = dyn_cast<FloatType>(type))
    return f.getWidth() >= 32;
  return type.isIntOrIndex() && !type.isIndex();
}

/// Of each value of a generic's body: the loops it needs (a bit each),
/// whether it must stay in the op (it reads an output's element, an input
/// through a map that is not a projection, or an op with effects or
/// regions computes it), and whether a costly operation computes it.
struct Dependences {
  unsigned loops;
  DenseMap<Value, llvm::SmallBitVector> of;
  DenseSet<Value> pinned; ///< May not move.
  DenseSet<Value> costly; ///< Computed through a costly operation.

  explicit Dependences(linalg::GenericOp op) : loops(op.getNumLoops()) {
    Block &body = op.getRegion().front();
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(input);
      AffineMap map = op.getMatchingIndexingMap(input);
      llvm::SmallBitVector dims(loops);
      bool projection = true;
      for (AffineExpr e : map.getResults()) {
        if (auto d = dyn_cast<AffineDimExpr>(e))
          dims.set(d.getPosition());
        else
          projection = false;
      }
      of[arg] = dims;
      if (!projection)
        pinned.insert(arg);
    }
    for (OpOperand &init : op.getDpsInitsMutable()) {
      BlockArgument arg = op.getMatchingBlockArgument(&init);
      of[arg] = llvm::SmallBitVector(loops, true);
      pinned.insert(arg);
    }
    for (Operation &inner : body.without_terminator()) {
      llvm::SmallBitVector dims(loops);
      bool pin = inner.getNumRegions() != 0 || !isPure(&inner);
      bool cost = isCostly(&inner);
      if (auto index = dyn_cast<linalg::IndexOp>(inner))
        dims.set(index.getDim());
      for (Value operand : inner.getOperands()) {
        auto it = of.find(operand);
        if (it == of.end())
          continue; // Defined outside the op: no loop.
        dims |= it->second;
        pin |= pinned.contains(operand);
        cost |= costly.contains(operand);
      }
      for (Value result : inner.getResults()) {
        of[result] = dims;
        if (pin)
          pinned.insert(result);
        if (cost)
          costly.insert(result);
      }
    }
  }
};

/// Whether a loop the value does not depend on is around one it does: LLVM
/// keeps a value in the loops inside those it depends on, not in one around.
bool leavesOuterLoop(const llvm::SmallBitVector &dims) {
  int innermostKept = dims.find_last();
  for (int d = 0; d < innermostKept; ++d)
    if (!dims.test(d))
      return true;
  return false;
}

struct HoistInvariantMathPass
    : public mlir::dt::impl::HoistInvariantMathPassBase<
          HoistInvariantMathPass> {
  using HoistInvariantMathPassBase::HoistInvariantMathPassBase;

  mlir::dt::Statistic numTables{this, "tables",
                                "Tables made of values fewer loops need"};

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics())
        generics.push_back(op);
    });
    for (linalg::GenericOp op : generics)
      hoist(op);
  }

  /// `remark: math.exp, math.cos, math.sin of loops (d1, d3) of 4 made once
  /// into a table of 16384 elements, not 32 times each`.
  static void explainTable(linalg::GenericOp op,
                           const llvm::SetVector<Value> &needed,
                           ArrayRef<unsigned> kept, ArrayRef<int64_t> extents) {
    llvm::SmallSetVector<StringRef, 4> functions;
    for (Operation &inner : op.getRegion().front())
      if (isCostly(&inner) && needed.contains(inner.getResult(0)))
        functions.insert(inner.getName().getStringRef());
    SmallVector<std::string> loops;
    int64_t points = 1;
    for (unsigned d : kept) {
      loops.push_back("d" + std::to_string(d));
      points *= extents[d];
    }
    int64_t all = 1;
    for (int64_t e : extents)
      all *= e;
    op.emitRemark() << llvm::join(functions.getArrayRef(), ", ")
                    << " of loops (" << llvm::join(loops, ", ") << ") of "
                    << extents.size() << " made once into a table of " << points
                    << " elements, not " << all / points << " times each";
  }

  void hoist(linalg::GenericOp op) {
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    if (llvm::any_of(extents, ShapedType::isDynamic))
      return;
    Dependences deps(op);
    Block &body = op.getRegion().front();
    // The values a table could hold: costly, movable, and needing fewer
    // loops than the op, one around a loop they keep among those left.
    DenseSet<Value> candidates;
    for (Operation &inner : body.without_terminator()) {
      for (Value v : inner.getResults()) {
        llvm::SmallBitVector dims = deps.of.lookup(v);
        if (!deps.costly.contains(v) || deps.pinned.contains(v) ||
            !isTableType(v.getType()) || !leavesOuterLoop(dims))
          continue;
        int64_t repeats = 1;
        for (unsigned d = 0; d < deps.loops; ++d)
          if (!dims.test(d))
            repeats *= extents[d];
        if (repeats >= kMinRepeats)
          candidates.insert(v);
      }
    }
    // The tables, grouped by the loops they need: each candidate that a
    // value left in the op reads (the largest expressions; the candidates
    // they are made of are computed in their tables).
    llvm::MapVector<llvm::SmallBitVector, SmallVector<Value>> tables;
    for (Operation &inner : body.without_terminator())
      for (Value v : inner.getResults()) {
        if (!candidates.contains(v))
          continue;
        bool read = llvm::any_of(v.getUsers(), [&](Operation *user) {
          return user->getNumResults() == 0 ||
                 llvm::any_of(user->getResults(),
                              [&](Value r) { return !candidates.contains(r); });
        });
        if (read)
          tables[deps.of.lookup(v)].push_back(v);
      }
    if (tables.empty())
      return;

    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value> newInputs(op.getDpsInputs());
    SmallVector<AffineMap> newMaps;
    for (OpOperand *input : op.getDpsInputOperands())
      newMaps.push_back(op.getMatchingIndexingMap(input));
    DenseMap<Value, unsigned> tableArg; // A hoisted value -> its new input.
    for (auto &[dims, values] : tables) {
      // The table's loops, in the op's order.
      SmallVector<unsigned> kept;
      SmallVector<int64_t> shape;
      DenseMap<unsigned, unsigned> position;
      for (unsigned d = 0; d < deps.loops; ++d)
        if (dims.test(d)) {
          position[d] = kept.size();
          kept.push_back(d);
          shape.push_back(extents[d]);
        }
      // The op's inputs its values read, seen through the table's loops.
      SmallVector<Value> inputs;
      SmallVector<AffineMap> maps;
      SmallVector<BlockArgument> reads;
      llvm::SetVector<Value> needed;
      SmallVector<Value> work(values.begin(), values.end());
      while (!work.empty()) {
        Value v = work.pop_back_val();
        if (!deps.of.count(v) || !needed.insert(v))
          continue;
        if (Operation *def = v.getDefiningOp())
          llvm::append_range(work, def->getOperands());
      }
      for (OpOperand *input : op.getDpsInputOperands()) {
        BlockArgument arg = op.getMatchingBlockArgument(input);
        if (!needed.contains(arg))
          continue;
        SmallVector<AffineExpr> results;
        for (AffineExpr e : op.getMatchingIndexingMap(input).getResults())
          results.push_back(b.getAffineDimExpr(
              position[cast<AffineDimExpr>(e).getPosition()]));
        inputs.push_back(input->get());
        maps.push_back(AffineMap::get(kept.size(), 0, results, b.getContext()));
        reads.push_back(arg);
      }
      SmallVector<Value> inits;
      SmallVector<Type> types;
      for (Value v : values) {
        inits.push_back(
            tensor::EmptyOp::create(b, loc, shape, v.getType()).getResult());
        types.push_back(inits.back().getType());
        maps.push_back(b.getMultiDimIdentityMap(kept.size()));
      }
      SmallVector<utils::IteratorType> iterators(kept.size(),
                                                 utils::IteratorType::parallel);
      auto table = linalg::GenericOp::create(
          b, loc, types, inputs, inits, maps, iterators,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            IRMapping mapping;
            for (auto [arg, read] : llvm::zip(args, reads))
              mapping.map(read, arg);
            for (Operation &inner : body.without_terminator()) {
              if (!llvm::any_of(inner.getResults(),
                                [&](Value r) { return needed.contains(r); }))
                continue;
              if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
                mapping.map(index.getResult(),
                            linalg::IndexOp::create(nb, nloc,
                                                    position[index.getDim()]));
                continue;
              }
              nb.clone(inner, mapping);
            }
            SmallVector<Value> yielded;
            for (Value v : values)
              yielded.push_back(mapping.lookup(v));
            linalg::YieldOp::create(nb, nloc, yielded);
          });
      // The op reads each table through its own loops.
      SmallVector<AffineExpr> projection;
      for (unsigned d : kept)
        projection.push_back(b.getAffineDimExpr(d));
      AffineMap read =
          AffineMap::get(deps.loops, 0, projection, b.getContext());
      for (auto [v, result] : llvm::zip(values, table.getResults())) {
        tableArg[v] = newInputs.size();
        newInputs.push_back(result);
        newMaps.push_back(read);
      }
      ++numTables;
      if (explain)
        explainTable(op, needed, kept, extents);
    }

    // The op, reading the tables instead of computing their values.
    for (OpOperand &init : op.getDpsInitsMutable())
      newMaps.push_back(op.getMatchingIndexingMap(&init));
    auto replacement = linalg::GenericOp::create(
        b, loc, op.getResultTypes(), newInputs, op.getDpsInits(), newMaps,
        op.getIteratorTypesArray(),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          IRMapping mapping;
          unsigned oldInputs = op.getNumDpsInputs();
          for (unsigned i = 0; i < oldInputs; ++i)
            mapping.map(body.getArgument(i), args[i]);
          for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i)
            mapping.map(body.getArgument(oldInputs + i),
                        args[newInputs.size() + i]);
          for (Operation &inner : body) {
            bool hoisted = llvm::all_of(
                inner.getResults(), [&](Value r) { return tableArg.count(r); });
            if (inner.getNumResults() != 0 && hoisted) {
              for (Value r : inner.getResults())
                mapping.map(r, args[tableArg[r]]);
              continue;
            }
            nb.clone(inner, mapping);
          }
        });
    // What only the tables' values needed is no longer computed here.
    for (Operation &inner : llvm::make_early_inc_range(
             llvm::reverse(replacement.getRegion().front())))
      if (isOpTriviallyDead(&inner))
        inner.erase();
    replacement->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    op->replaceAllUsesWith(replacement->getResults());
    op->erase();
  }
};
} // namespace
