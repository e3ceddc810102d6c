//===- dt-compile.cpp - .mlir -> native artifact --------------------------===//
//
// dt-compile prog.mlir -o prog.so [--target=cpu] [--topology=FILE]
//            [--emit=so|llvm|spmd-mlir|description] [-O<n>] [--mcpu=CPU]
//
//===----------------------------------------------------------------------===//

#include "dt/Compile/Compile.h"
#include "dt/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
enum class Emit { SharedObject, LLVMIR, SPMDMLIR, Description };

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<input .mlir>"),
                                     llvm::cl::Required);
llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("Output file"),
                                      llvm::cl::value_desc("path"),
                                      llvm::cl::init("-"));
llvm::cl::opt<std::string> target("target",
                                  llvm::cl::desc("cpu (default) or cuda"),
                                  llvm::cl::init("cpu"));
llvm::cl::opt<std::string>
    topology("topology", llvm::cl::desc("Topology file for the cost model"),
             llvm::cl::init(""));
llvm::cl::opt<std::string> cpu("mcpu",
                               llvm::cl::desc("Target CPU (default: native)"),
                               llvm::cl::init("native"));
llvm::cl::opt<unsigned> optLevel("O", llvm::cl::desc("LLVM optimization level"),
                                 llvm::cl::Prefix, llvm::cl::init(3));
llvm::cl::opt<Emit> emit(
    "emit", llvm::cl::desc("What to write"),
    llvm::cl::values(
        clEnumValN(Emit::SharedObject, "so", "the shared object (default)"),
        clEnumValN(Emit::LLVMIR, "llvm", "the optimized LLVM IR"),
        clEnumValN(Emit::SPMDMLIR, "spmd-mlir",
                   "the SPMD program in the LLVM dialect"),
        clEnumValN(Emit::Description, "description",
                   "the program description the runtime reads")),
    llvm::cl::init(Emit::SharedObject));

int fail(const llvm::Twine &message) {
  llvm::errs() << "dt-compile: " << message << "\n";
  return 1;
}

/// Writes `text` to the output file (`-` is stdout), atomically.
int writeText(llvm::function_ref<void(llvm::raw_ostream &)> print) {
  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  print(output->os());
  output->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "dt-compile: sharded .mlir program -> native artifact\n");
  if (target != "cpu")
    return fail("--target=" + target +
                " is not available yet; this build compiles for --target=cpu");
  if (optLevel > 3)
    return fail("-O" + llvm::Twine(optLevel.getValue()) +
                ": the optimization level is 0 to 3");
  if (emit == Emit::SharedObject && outputFile == "-")
    return fail("a shared object needs an output path: -o FILE.so");

  // The CPU pipeline names upstream passes by their registered names.
  dt::registerAllDTPasses();
  DialectRegistry registry;
  dt::registerAllDTDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  dt::CompileOptions options;
  options.topology = topology;
  options.optLevel = optLevel;
  options.cpu = cpu;

  if (emit == Emit::Description) {
    std::string description;
    FailureOr<OwningOpRef<ModuleOp>> spmd =
        dt::lowerSPMDProgram(*module, options, description);
    if (failed(spmd))
      return 1;
    return writeText([&](llvm::raw_ostream &os) { os << description; });
  }
  if (emit == Emit::SPMDMLIR) {
    std::string description;
    FailureOr<OwningOpRef<ModuleOp>> spmd =
        dt::lowerSPMDProgram(*module, options, description);
    if (failed(spmd))
      return 1;
    return writeText([&](llvm::raw_ostream &os) { (*spmd)->print(os); });
  }

  std::unique_ptr<llvm::TargetMachine> machine =
      dt::createTargetMachine(options, error);
  if (!machine)
    return fail(error);
  llvm::LLVMContext llvmContext;
  FailureOr<std::unique_ptr<llvm::Module>> llvmModule =
      dt::compileToLLVM(*module, llvmContext, *machine, options);
  if (failed(llvmModule))
    return 1;
  if (emit == Emit::LLVMIR)
    return writeText([&](llvm::raw_ostream &os) { (*llvmModule)->print(os, nullptr); });
  if (failed(dt::writeSharedObject(**llvmModule, *machine, outputFile, error)))
    return fail(error);
  return 0;
}
