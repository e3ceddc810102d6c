//===- QuietDiagnostics.h - Silence one thread's diagnostics ----*- C++ -*-===//
//
// A trial run of propagation (the plan search, a cost probe) fails often and
// says why; the real run after it reports what matters. MLIR's diagnostic
// handlers belong to the context, not to a thread, and dt-compile lowers the
// single-device program on a second thread while the SPMD program's plan
// search runs: a handler that swallowed everything swallowed that thread's
// errors too, and dt-compile failed without a word. QuietDiagnostics
// swallows what its own thread emits and passes the rest on.
//
//===----------------------------------------------------------------------===//

#ifndef DT_SUPPORT_QUIETDIAGNOSTICS_H
#define DT_SUPPORT_QUIETDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Threading.h"

namespace mlir::dt {

/// While it lives, the diagnostics emitted on the thread that made it are
/// dropped; other threads' go on to the handlers registered before it.
class QuietDiagnostics {
public:
  explicit QuietDiagnostics(MLIRContext *context) : context(context) {
    uint64_t thread = llvm::get_threadid();
    handler = context->getDiagEngine().registerHandler([thread](Diagnostic &) {
      return success(llvm::get_threadid() == thread);
    });
  }
  ~QuietDiagnostics() { context->getDiagEngine().eraseHandler(handler); }
  QuietDiagnostics(const QuietDiagnostics &) = delete;
  QuietDiagnostics &operator=(const QuietDiagnostics &) = delete;

private:
  MLIRContext *context;
  DiagnosticEngine::HandlerID handler;
};

} // namespace mlir::dt

#endif // DT_SUPPORT_QUIETDIAGNOSTICS_H
