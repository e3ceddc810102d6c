//===- dt-opt.cpp - mlir-opt for dt ---------------------------------------===//
//
// Runs dt and upstream passes and pipelines on .mlir files: mlir-opt's
// driver, with the input checked first for what is not MLIR or would crash
// MLIR 22's parser (dt/Tools/ParserGuard.h).
//
// With -split-input-file the driver parses each chunk alone, and a chunk it
// cannot parse fails alone: the others still run. A chunk the checks turn
// away does the same. It is reported and blanked (spaces for all but its
// line breaks, so that the other chunks keep their lines) before the driver
// reads the file, and the empty module printed for it is left out of the
// output: nothing is printed for a chunk that does not parse.
//
// -mlir-pass-statistics prints dt's passes' statistics after MLIR's report
// (dt/Support/Statistic.h says why MLIR's has none of them).
//
//===----------------------------------------------------------------------===//

#include "dt/InitAll.h"
#include "dt/Support/Statistic.h"
#include "dt/Tools/ParserGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>

using namespace mlir;

/// The chunks of `input` that the driver parses one by one under
/// -split-input-file=`marker`, as pieces of `input`'s text.
static SmallVector<StringRef> splitIntoChunks(const llvm::MemoryBuffer &input,
                                              StringRef marker) {
  StringRef whole = input.getBuffer();
  SmallVector<StringRef> chunks;
  size_t from = 0;
  (void)splitAndProcessBuffer(
      llvm::MemoryBuffer::getMemBuffer(input.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      [&](std::unique_ptr<llvm::MemoryBuffer> chunk, raw_ostream &) {
        // The chunk is a view of the text or, in other LLVM versions, a copy
        // of the next piece of it.
        StringRef text = chunk->getBuffer();
        size_t at = text.data() >= whole.data() &&
                            text.data() + text.size() <= whole.end()
                        ? text.data() - whole.data()
                        : whole.find(text, from);
        from = at + text.size();
        chunks.push_back(whole.substr(at, text.size()));
        return success();
      },
      llvm::nulls(), marker, "");
  return chunks;
}

/// Whether checkParserHazards fails on `input` (without reporting it).
static bool holdsParserHazards(const llvm::MemoryBuffer &input) {
  llvm::SourceMgr quiet;
  quiet.setDiagHandler([](const llvm::SMDiagnostic &, void *) {});
  unsigned buffer = quiet.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  return failed(dt::checkParserHazards(quiet, buffer));
}

/// Runs the driver on the chunks of `input` (split per `config`) but those
/// that fail checkParserHazards, which are reported through `sourceMgr`
/// (holding `input`); writes to `os` what the driver prints for the others,
/// and nothing for those, split as it splits it. Fails when a chunk failed
/// (the file as a whole may nest too deep where none of its chunks does).
static LogicalResult runOnSafeChunks(const llvm::MemoryBuffer &input,
                                     const llvm::SourceMgr &sourceMgr,
                                     DialectRegistry &registry,
                                     const MlirOptMainConfig &config,
                                     raw_ostream &os) {
  SmallVector<StringRef> chunks =
      splitIntoChunks(input, config.inputSplitMarker());
  std::string text = input.getBuffer().str();
  SmallVector<bool> blanked;
  for (StringRef chunk : chunks) {
    blanked.push_back(failed(dt::checkParserHazards(sourceMgr, chunk)));
    if (!blanked.back())
      continue;
    auto begin = text.begin() + (chunk.data() - input.getBufferStart());
    std::replace_if(
        begin, begin + chunk.size(), [](char c) { return c != '\n'; }, ' ');
  }
  // The driver's output, chunk by chunk: it writes a marker and a line break
  // between two chunks' outputs, here one that no printed IR holds.
  constexpr StringLiteral kBetween = "// dt-opt: the next chunk's output";
  MlirOptMainConfig marked = config;
  marked.outputSplitMarker(kBetween.str());
  std::string printed;
  llvm::raw_string_ostream printedOs(printed);
  LogicalResult ran = MlirOptMain(
      printedOs,
      llvm::MemoryBuffer::getMemBufferCopy(text, input.getBufferIdentifier()),
      registry, marked);
  SmallVector<StringRef> outputs;
  StringRef(printed).split(outputs, (kBetween + "\n").str());
  std::string between = (config.outputSplitMarker() + "\n").str();
  for (auto [i, output] : llvm::enumerate(outputs)) {
    bool empty = outputs.size() == chunks.size() && blanked[i];
    os << (i == 0 ? "" : between) << (empty ? "" : output);
  }
  return failure(failed(ran) || llvm::is_contained(blanked, true));
}

/// Whether -mlir-pass-statistics was given (an option of MLIR's pass
/// manager).
static bool passStatisticsRequested() {
  auto options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-pass-statistics");
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

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
  if (failed(dt::checkInputIsMLIR(sourceMgr, buffer)))
    return 1;
  bool hazards = holdsParserHazards(*input);
  if (hazards && config.inputSplitMarker().empty()) {
    (void)dt::checkParserHazards(sourceMgr, buffer); // reports them
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  LogicalResult ran =
      hazards
          ? runOnSafeChunks(*input, sourceMgr, registry, config, output->os())
          : MlirOptMain(output->os(), std::move(input), registry, config);
  // The chunks that ran printed their output even when another failed.
  if (hazards || succeeded(ran))
    output->keep();
  // After MLIR's report, which has nothing of dt's passes.
  if (passStatisticsRequested())
    dt::printStatistics(llvm::errs());
  return failed(ran);
}
