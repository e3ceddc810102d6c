//===- dt-lsp-server.cpp - MLIR language server with dt -------------------===//
//
// Upstream's server, with every dt dialect registered. It parses each
// document recursively and has no hook before parsing where dt-opt's
// nesting limit (ParserGuard) could refuse a deep one, so it runs on a
// thread with a 1 GiB stack: reserved, and touched only as deep as a
// document nests. Nests that overflowed the main thread's 8 MiB (30000
// regions, 20000 brackets) parse; one about 128 times deeper than those
// still would not (test/Tools/dt-lsp-server-deep.test).
//
//===----------------------------------------------------------------------===//

#include "dt/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

#include "llvm/Support/thread.h"

#include <optional>

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dt::registerAllDTDialects(registry);
  constexpr unsigned kStackBytes = 1u << 30;
  int status = 0;
  llvm::thread server(std::optional<unsigned>(kStackBytes), [&] {
    status = mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
  });
  server.join();
  return status;
}
