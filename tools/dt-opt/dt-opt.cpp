//===- dt-opt.cpp - mlir-opt for dt ---------------------------------------===//
//
// Runs dt and upstream passes and pipelines on .mlir files: mlir-opt's
// driver, with the input checked first for what is not MLIR or would crash
// MLIR 22's parser (dt/Tools/ParserGuard.h).
//
//===----------------------------------------------------------------------===//

#include "dt/InitAll.h"
#include "dt/Tools/ParserGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  dt::registerAllDTPasses();
  DialectRegistry registry;
  dt::registerAllDTDialects(registry);
  auto [inputFile, outputFile] =
      registerAndParseCLIOptions(argc, argv, "dt optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // These read no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  unsigned buffer = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef()),
      llvm::SMLoc());
  if (failed(dt::checkBeforeParsing(sourceMgr, buffer)))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
