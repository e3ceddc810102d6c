//===- dt-compile.cpp - .mlir -> native artifact --------------------------===//
//
// dt-compile prog.mlir -o prog.so [--target=cpu|cuda] [--gpu-arch=sm_90]
//            [--topology=FILE] [--explain]
//            [--emit=so|llvm|spmd-mlir|description] [-O<n>] [--mcpu=CPU]
//            [-jN] [--profile-kernels] [--mlir-timing]
//
//===----------------------------------------------------------------------===//

#include "dt/Compile/Compile.h"
#include "dt/Conversion/Passes.h"
#include "dt/InitAll.h"
#include "dt/Tools/ParserGuard.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
enum class Emit { SharedObject, LLVMIR, SPMDMLIR, Description };

/// dt-compile's own options: --help lists these, not the hundreds LLVM's
/// libraries register (which are still accepted).
llvm::cl::OptionCategory options("dt-compile options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<input .mlir>"),
                                     llvm::cl::Required,
                                     llvm::cl::cat(options));
llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("Output file"),
                                      llvm::cl::value_desc("path"),
                                      llvm::cl::init("-"),
                                      llvm::cl::cat(options));
llvm::cl::opt<std::string> target("target",
                                  llvm::cl::desc("cpu (default) or cuda"),
                                  llvm::cl::init("cpu"),
                                  llvm::cl::cat(options));
llvm::cl::opt<std::string>
    gpuArch("gpu-arch",
            llvm::cl::desc("--target=cuda: the SM kernels are compiled for "
                           "(PTX for it is embedded too)"),
            llvm::cl::init("sm_90"), llvm::cl::cat(options));
llvm::cl::opt<bool> emulateGPU(
    "emulate-gpu",
    llvm::cl::desc("--target=cuda: run the kernels as CPU loops and matmuls "
                   "through BLAS: a CPU artifact that tests the CUDA lowering "
                   "without a GPU"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<bool> gpuKernelsAnySize(
    "gpu-kernels-any-size",
    llvm::cl::desc("--target=cuda: cooperative reduction, row and split "
                   "kernels whatever the sizes, as --emulate-gpu makes them "
                   "(to run on a GPU the kernels the emulation checked)"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<bool> boundsChecks(
    "bounds-checks",
    llvm::cl::desc("Check each index computed from data (a gather's ids) "
                   "against its tensor: an index outside fails the run with "
                   "a message instead of reading outside (default: on)"),
    llvm::cl::init(true), llvm::cl::cat(options));
llvm::cl::opt<bool> combineCollectives(
    "combine-collectives",
    llvm::cl::desc("Combine collectives of one group and kind into one call "
                   "where the cost model says it is cheaper (gradient and "
                   "FSDP buckets; default: on)"),
    llvm::cl::init(true), llvm::cl::cat(options));
llvm::cl::opt<bool> exchange(
    "exchange",
    llvm::cl::desc("Let a redistribution move just the parts each rank lacks, "
                   "point to point (dt.exchange), where one-axis collectives "
                   "would gather more (default: on)"),
    llvm::cl::init(true), llvm::cl::cat(options));
llvm::cl::opt<std::string>
    topology("topology", llvm::cl::desc("Topology file for the cost model"),
             llvm::cl::init(""), llvm::cl::cat(options));
llvm::cl::opt<bool> explain(
    "explain",
    llvm::cl::desc("Say why: a remark for each op's sharding choice and each "
                   "redistribution's plan (stderr), and the cost report "
                   "(stdout)"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<std::string> cpu("mcpu",
                               llvm::cl::desc("Target CPU (default: native)"),
                               llvm::cl::init("native"),
                               llvm::cl::cat(options));
llvm::cl::opt<unsigned> optLevel("O", llvm::cl::desc("LLVM optimization level"),
                                 llvm::cl::Prefix, llvm::cl::init(3),
                                 llvm::cl::cat(options));
llvm::cl::opt<bool> profileKernels(
    "profile-kernels",
    llvm::cl::desc("Time each loop nest and matmul of the SPMD program for "
                   "dt-run --profile (CPU target)"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<unsigned> jobs(
    "j",
    llvm::cl::desc("Threads generating machine code, each for a part of the "
                   "functions (default 0: one per hardware thread)"),
    llvm::cl::Prefix, llvm::cl::init(0), llvm::cl::cat(options));
llvm::cl::opt<Emit> emit(
    "emit", llvm::cl::desc("What to write"),
    llvm::cl::values(clEnumValN(Emit::SharedObject, "so",
                                "the shared object (default)"),
                     clEnumValN(Emit::LLVMIR, "llvm", "the optimized LLVM IR"),
                     clEnumValN(Emit::SPMDMLIR, "spmd-mlir",
                                "the SPMD program in the LLVM dialect"),
                     clEnumValN(Emit::Description, "description",
                                "the program description the runtime reads")),
    llvm::cl::init(Emit::SharedObject), llvm::cl::cat(options));

int fail(const llvm::Twine &message) {
  llvm::errs() << "dt-compile: " << message << "\n";
  return 1;
}

/// MLIR's NVVM serialization runs `ptxas` and `fatbinary` from PATH and
/// links libdevice (the math functions) from the toolkit named by
/// $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH; without it `math.exp` would stay a
/// call ptxas cannot resolve. The toolkit is $CUDA_HOME, else
/// /usr/local/cuda.
bool findCUDAToolkit(std::string &error) {
  const char *home = std::getenv("CUDA_HOME");
  std::string root = home ? home : "/usr/local/cuda";
  if (!llvm::sys::fs::exists(root + "/nvvm/libdevice")) {
    error = "--target=cuda needs the CUDA toolkit (ptxas, fatbinary, "
            "libdevice): none in " +
            root + " (set CUDA_HOME)";
    return false;
  }
  if (!std::getenv("CUDA_ROOT") && !std::getenv("CUDA_HOME") &&
      !std::getenv("CUDA_PATH"))
    ::setenv("CUDA_ROOT", root.c_str(), 1);
  if (llvm::sys::findProgramByName("ptxas") &&
      llvm::sys::findProgramByName("fatbinary"))
    return true;
  std::string bin = root + "/bin";
  if (!llvm::sys::fs::can_execute(bin + "/ptxas")) {
    error = "--target=cuda needs the CUDA toolkit's ptxas and fatbinary: "
            "none on PATH, nor in " +
            bin + " (set CUDA_HOME)";
    return false;
  }
  const char *path = std::getenv("PATH");
  std::string newPath = bin + (path ? ":" + std::string(path) : "");
  ::setenv("PATH", newPath.c_str(), 1);
  return true;
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

/// Why the output cannot be written at `path` ("" when it can), found
/// before compiling: a mistyped -o then costs no compile, and the message
/// names the path rather than the linker's temporary file.
std::string unwritable(llvm::StringRef path) {
  if (path == "-")
    return "";
  if (llvm::sys::fs::is_directory(path))
    return "it is a directory";
  // A device or a pipe (/dev/null) is written through, not replaced.
  if (llvm::sys::fs::exists(path) && !llvm::sys::fs::is_regular_file(path))
    return llvm::sys::fs::access(path, llvm::sys::fs::AccessMode::Write)
               ? "it is not writable"
               : "";
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  if (directory.empty())
    directory = ".";
  if (!llvm::sys::fs::is_directory(directory))
    return ("there is no directory " + directory).str();
  if (llvm::sys::fs::access(directory, llvm::sys::fs::AccessMode::Write))
    return ("the directory " + directory + " is not writable").str();
  // Permissions do not stop root, but a read-only or special file system
  // (/proc) does: try a file there.
  llvm::SmallString<256> probe;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          directory + "/.dt-compile-probe-%%%%%%", fd, probe))
    return ("cannot create a file in " + directory + ": " + ec.message()).str();
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::sys::fs::remove(probe);
  return "";
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --mlir-timing (and its -display and -output-format): the phases, the
  // passes of both programs and LLVM's parts, timed.
  registerDefaultTimingManagerCLOptions();
  llvm::cl::HideUnrelatedOptions(options);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "dt-compile: sharded .mlir program -> native artifact\n");
  if (target != "cpu" && target != "cuda")
    return fail("--target=" + target + ": expected cpu or cuda");
  if (!llvm::StringRef(gpuArch).starts_with("sm_"))
    return fail("--gpu-arch=" + gpuArch +
                ": expected an SM name such as sm_90");
  std::string archError;
  if (target == "cuda" && failed(dt::checkGPUArch(gpuArch, archError)))
    return fail("--gpu-arch=" + gpuArch + ": not an SM that LLVM knows (" +
                archError + ")");
  if (optLevel > 3)
    return fail("-O" + llvm::Twine(optLevel.getValue()) +
                ": the optimization level is 0 to 3");
  std::string toolkitError;
  if (target == "cuda" && !emulateGPU && emit != Emit::Description &&
      !findCUDAToolkit(toolkitError))
    return fail(toolkitError);
  if (emit == Emit::SharedObject && outputFile == "-")
    return fail("a shared object needs an output path: -o FILE.so");
  if (std::string why = unwritable(outputFile); !why.empty())
    return fail("cannot write " + outputFile + ": " + why);
  if (explain && outputFile == "-")
    return fail("--explain prints the cost report on stdout: write the "
                "output elsewhere with -o FILE");

  // The CPU pipeline names upstream passes by their registered names.
  dt::registerAllDTPasses();
  DialectRegistry registry;
  dt::registerAllDTDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // An error names the value and what was expected at its location; the
  // generic form of the op around it, which dt-opt prints for compiler
  // work, would bury that (dt-run shows these errors too).
  context.printOpOnDiagnostic(false);

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  unsigned buffer = sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  if (failed(dt::checkBeforeParsing(sourceMgr, buffer)))
    return 1;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  TimingScope parsing = timing.nest("parsing");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  parsing.stop();
  if (!module)
    return 1;

  dt::CompileOptions options;
  options.topology = topology;
  options.optLevel = optLevel;
  options.cpu = cpu;
  options.jobs = jobs;
  options.profileKernels = profileKernels;
  options.target = target == "cuda" ? dt::Target::CUDA : dt::Target::CPU;
  options.gpuArch = gpuArch;
  options.emulateGPU = emulateGPU;
  options.boundsChecks = boundsChecks;
  options.combineCollectives = combineCollectives;
  options.exchange = exchange;
  options.explain = explain;
  options.gpuKernelsAnySize = gpuKernelsAnySize;
  options.timing = &timing;
  if (emulateGPU && target != "cuda")
    return fail("--emulate-gpu goes with --target=cuda");
  if (profileKernels && target != "cpu")
    return fail("--profile-kernels times the CPU target's kernels; a GPU "
                "queues them on streams (profile those with nsys)");
  if (gpuKernelsAnySize && target != "cuda")
    return fail("--gpu-kernels-any-size goes with --target=cuda");

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
  if (emit == Emit::LLVMIR) {
    FailureOr<std::unique_ptr<llvm::Module>> llvmModule =
        dt::compileToLLVM(*module, llvmContext, *machine, options);
    if (failed(llvmModule))
      return 1;
    return writeText(
        [&](llvm::raw_ostream &os) { (*llvmModule)->print(os, nullptr); });
  }
  FailureOr<std::unique_ptr<llvm::Module>> llvmModule =
      dt::translateToLLVM(*module, llvmContext, *machine, options);
  if (failed(llvmModule))
    return 1;
  if (failed(dt::writeSharedObject(**llvmModule, options, outputFile, error)))
    return fail(error);
  return 0;
}
