//===- TestPrintShardingRules.cpp - dt-test-print-sharding-rules ----------===//

#include "dt/Dialect/DT/IR/DTInterfaces.h"
#include "dt/Dialect/DT/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::dt {
#define GEN_PASS_DEF_TESTPRINTSHARDINGRULESPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct TestPrintShardingRulesPass
    : public mlir::dt::impl::TestPrintShardingRulesPassBase<
          TestPrintShardingRulesPass> {
  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    getOperation()->walk([&](Operation *op) {
      FailureOr<ShardingRule> rule = getShardingRule(op);
      if (failed(rule))
        return;
      os << op->getName() << ":";
      auto print = [&](unsigned count, bool isResult, AxisChoice choice) {
        os << "[";
        for (unsigned i = 0; i < count; ++i) {
          bool tensor = isResult ? rule->isTensorResult(i)
                                 : rule->isTensorOperand(i);
          os << (i ? ", " : "")
             << (tensor ? placementUnder(*rule, choice, isResult, i).str()
                        : std::string("-"));
        }
        os << "]";
      };
      llvm::interleave(
          enumerateAxisChoices(*rule), os,
          [&](AxisChoice choice) {
            os << " ";
            print(rule->operands(op).size(), false, choice);
            os << " -> ";
            print(op->getNumResults(), true, choice);
            if (choice.kind == AxisChoice::Kind::ShardFactor)
              if (auto extent = rule->factors[choice.index].mustDivide)
                os << " pieces | " << *extent;
          },
          " |");
      os << "\n";
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
