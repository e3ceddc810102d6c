//===- VerifyEncodings.cpp - dt-verify-encodings --------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dt {
#define GEN_PASS_DEF_VERIFYENCODINGSPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"

namespace {
struct VerifyEncodingsPass
    : public impl::VerifyEncodingsPassBase<VerifyEncodingsPass> {
  mlir::dt::Statistic numFunctionsChecked{
      this, "functions-checked",
      "Number of functions on global tensors checked"};
  void runOnOperation() override {
    getOperation()->walk([&](FunctionOpInterface func) {
      if (isMeshedFunction(func))
        ++numFunctionsChecked;
    });
    if (failed(verifyEncodingsPreserved(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
} // namespace mlir::dt
