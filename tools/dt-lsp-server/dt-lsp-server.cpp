//===- dt-lsp-server.cpp - MLIR language server with dt -------------------===//

#include "dt/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dt::registerAllDTDialects(registry);
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
}
