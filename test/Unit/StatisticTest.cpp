//===- StatisticTest.cpp - dt::Statistic and its sections
//------------------===//
//
// dt-compile lowers the single-device reference through the passes the SPMD
// program's lowering runs too; the reference's passes count in a section of
// their own (StatisticSection), and a pass's clones, which MLIR's pass
// manager makes for its threads, add to the pass's count.
//
//===----------------------------------------------------------------------===//

#include "dt/Support/Statistic.h"

#include "mlir/Pass/Pass.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

using namespace mlir;
using namespace mlir::dt;

namespace {

struct CountingPass : public PassWrapper<CountingPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountingPass)
  StringRef getArgument() const final { return "test-statistic-sections"; }
  void runOnOperation() override {}
  // Qualified: within a pass, Statistic names MLIR's (Pass::Statistic).
  mlir::dt::Statistic counted{this, "counted", "Things counted"};
};

std::string printed() {
  std::string text;
  llvm::raw_string_ostream os(text);
  printStatistics(os);
  return text;
}

/// The count on the first line of `text` from `from` that names the test
/// pass, or -1.
long countAfter(StringRef text, size_t from) {
  size_t at = text.find("test-statistic-sections", from);
  if (at == StringRef::npos)
    return -1;
  size_t line = text.rfind('\n', at) + 1;
  long count = -1;
  (void)text.substr(line, at - line).trim().getAsInteger(10, count);
  return count;
}

TEST(StatisticTest, SectionsCountApartAndClonesTogether) {
  CountingPass plain;
  // What Pass::clone makes: a copy.
  CountingPass clone(plain);
  ++plain.counted;
  clone.counted += 2;
  // Made on another thread within a section, as dt-compile's reference
  // pipeline is; the section ends with its scope, not with the pass.
  std::unique_ptr<CountingPass> apart;
  std::thread([&] {
    StatisticSection section("the single-device program");
    apart = std::make_unique<CountingPass>();
  }).join();
  apart->counted += 5;
  CountingPass plainAgain;
  plainAgain.counted += 10;

  std::string text = printed();
  size_t header = text.find("... dt pass statistics ...");
  size_t section =
      text.find("... dt pass statistics: the single-device program ...");
  ASSERT_NE(header, std::string::npos) << text;
  ASSERT_NE(section, std::string::npos) << text;
  EXPECT_LT(header, section);
  EXPECT_EQ(countAfter(text, header), 13) << text;
  EXPECT_EQ(countAfter(text, section), 5) << text;
}

} // namespace
