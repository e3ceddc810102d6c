//===- Check.cpp - dt-check -----------------------------------------------===//
//
// The soundness proof of the typed program: on every mesh axis, each op's
// operand and result placements must be exactly what one choice of its
// sharding rule gives. A choice of the rule computes, on the shards, the
// pieces of the single-device result (parallel factors), partial values that
// reduce to it (reduction factors, or ops linear in their partial operands),
// or the whole of it (replicate); so a program in which every op matches a
// choice computes what the single-device program computes.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/Strategy.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dt {
#define GEN_PASS_DEF_CHECKPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;

/// True when some choice of the rule lets operand `i` be `p`.
static bool someChoiceAccepts(const ShardingRule &rule, unsigned i,
                              Placement p) {
  for (AxisChoice choice : enumerateAxisChoices(rule))
    if (placementUnder(rule, choice, false, i) == p)
      return true;
  return false;
}

static std::string describe(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  value.printAsOperand(os, OpPrintingFlags());
  return text;
}

static LogicalResult checkOp(Operation *op, const ShardingRule &rule,
                             MeshOp mesh) {
  StrategyContext known = currentShardings(op, rule);
  std::optional<StrategyMismatch> mismatch =
      findMismatch(rule, mesh.getShape(), known);
  if (!mismatch)
    return success();
  unsigned axis = mismatch->axis;
  StringRef axisName = cast<StringAttr>(mesh.getAxisNames()[axis]).getValue();
  if (mismatch->indivisibleExtent)
    return op->emitOpError("shards a dim of extent ")
           << *mismatch->indivisibleExtent << " into " << mismatch->pieces
           << " pieces across a reshape; torch.chunk layouts survive the "
              "reshape only when the pieces divide the extent, so replicate "
              "that dim first";
  // Name the most likely culprit: a partial operand the op is not linear in.
  for (auto [i, sharding] : llvm::enumerate(known.operands)) {
    if (!sharding)
      continue;
    Placement p = sharding.getPlacements()[axis];
    if (p.isPartial() && !someChoiceAccepts(rule, i, p))
      return op->emitOpError("operand #")
             << i << " (" << describe(rule.operand(op, i)) << ") is " << p.str()
             << " on mesh axis \"" << axisName
             << "\", but the op is not linear in it for that reduction: "
                "reduce "
             << describe(rule.operand(op, i)) << " from " << p.str()
             << " to R before this op (dt.redistribute)";
  }
  InFlightDiagnostic diag = op->emitOpError(
      "has no sharding strategy with these placements on mesh axis \"");
  diag << axisName << "\": operands [";
  auto print = [&](ShardingAttr s) {
    diag << (s ? s.getPlacements()[axis].str() : std::string("-"));
  };
  ArrayRef<ShardingAttr> operands = known.operands;
  unsigned own = op->getNumOperands();
  llvm::interleaveComma(operands.take_front(own), diag, print);
  diag << "]";
  if (!rule.captured.empty()) {
    diag << ", read in its body [";
    llvm::interleaveComma(llvm::zip(rule.captured, operands.drop_front(own)),
                          diag, [&](auto read) {
                            diag << describe(std::get<0>(read)) << ": ";
                            print(std::get<1>(read));
                          });
    diag << "]";
  }
  diag << ", results [";
  llvm::interleaveComma(known.fixedResults, diag, print);
  return diag << "]";
}

namespace {
struct CheckPass : public mlir::dt::impl::CheckPassBase<CheckPass> {
  mlir::dt::Statistic numOpsChecked{this, "ops-checked",
                                    "Number of ops checked"};
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTables;
    bool ok = succeeded(verifyEncodingsPreserved(module));
    module.walk([&](FunctionOpInterface func) {
      if (func.isExternal() || !isMeshedFunction(func))
        return;
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        // A linalg body is scalar code: its op's rule covers it.
        WalkResult next = isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                                    : WalkResult::advance();
        if (isa<ConstrainOp>(op))
          return next;
        if (isa<AxisIndexOp>(op)) {
          op->emitOpError() << kAxisIndexInGlobalProgram;
          ok = false;
          return next;
        }
        if (isFullyReplicated(op))
          return next;
        FailureOr<ShardingRule> rule = getShardingRule(op);
        if (failed(rule)) {
          // Structural ops move values whole; their verifiers compare types.
          // (A linalg op without a rule reads a tensor from above in a way
          // dt cannot shard.)
          bool structural =
              !isa<linalg::LinalgOp>(op) && op->getDialect() &&
              (isa<DTDialect>(op->getDialect()) ||
               op->hasTrait<OpTrait::IsTerminator>() ||
               op->getNumRegions() > 0 || isa<CallOpInterface>(op));
          if (!structural &&
              llvm::any_of(op->getResultTypes(),
                           [](Type t) { return isa<RankedTensorType>(t); })) {
            op->emitOpError("has no sharding rule; dt cannot prove it correct "
                            "on sharded tensors");
            ok = false;
          }
          return next;
        }
        ShardingAttr any = findSharding(op->getOperandTypes());
        if (!any)
          any = findSharding(op->getResultTypes());
        if (!any)
          any = findSharding(ValueRange(rule->captured).getTypes());
        if (!any)
          return next;
        MeshOp mesh = lookupMesh(op, any.getMesh(), symbolTables);
        ++numOpsChecked;
        ok &= mesh && succeeded(checkOp(op, *rule, mesh));
        return next;
      });
    });
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
