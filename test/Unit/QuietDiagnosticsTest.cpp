//===- QuietDiagnosticsTest.cpp - One thread's diagnostics silenced -------===//
//
// dt-compile lowers the single-device program on a second thread while the
// SPMD program's plan search silences its own trial diagnostics; an error of
// the second thread must still reach the handlers (it used to be swallowed,
// and dt-compile failed without a message).
//
//===----------------------------------------------------------------------===//

#include "dt/Support/QuietDiagnostics.h"

#include "mlir/IR/Location.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace mlir;
using namespace mlir::dt;

namespace {

TEST(QuietDiagnosticsTest, SilencesOnlyItsOwnThread) {
  MLIRContext context;
  std::vector<std::string> seen;
  context.getDiagEngine().registerHandler([&](Diagnostic &diagnostic) {
    seen.push_back(diagnostic.str());
    return success();
  });
  Location loc = UnknownLoc::get(&context);
  {
    QuietDiagnostics quiet(&context);
    emitError(loc, "a trial's failure");
    std::thread other([&] { emitError(loc, "the other thread's error"); });
    other.join();
    emitRemark(loc, "a trial's remark");
  }
  emitWarning(loc, "after the trial");
  EXPECT_EQ(seen, (std::vector<std::string>{"the other thread's error",
                                            "after the trial"}));
}

TEST(QuietDiagnosticsTest, NestsAndUnwinds) {
  MLIRContext context;
  int seen = 0;
  context.getDiagEngine().registerHandler([&](Diagnostic &) {
    ++seen;
    return success();
  });
  Location loc = UnknownLoc::get(&context);
  {
    QuietDiagnostics outer(&context);
    {
      QuietDiagnostics inner(&context);
      emitError(loc, "inner");
    }
    emitError(loc, "outer");
  }
  EXPECT_EQ(seen, 0);
  emitError(loc, "after");
  EXPECT_EQ(seen, 1);
}

} // namespace
