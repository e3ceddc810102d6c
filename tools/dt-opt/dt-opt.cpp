//===- dt-opt.cpp - mlir-opt for dt ---------------------------------------===//
//
// Runs dt and upstream passes and pipelines on .mlir files.
//
//===----------------------------------------------------------------------===//

#include "dt/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::dt::registerAllDTPasses();
  mlir::DialectRegistry registry;
  mlir::dt::registerAllDTDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dt optimizer driver\n", registry));
}
