//===- dt-compile.cpp - .mlir -> native artifact --------------------------===//
//
// dt-compile prog.mlir -o prog.so [--target=cpu|cuda] [--gpu-arch=sm_90]
//            [--topology=FILE] [--explain]
//            [--emit=so|llvm|spmd-mlir|description] [-O<n>] [--mcpu=CPU]
//            [-jN] [--profile-kernels] [--mlir-timing] [--mlir-pass-statistics]
//            [--wide-reference] [--cache-dir=DIR]
//
//===----------------------------------------------------------------------===//

#include "dt/Compile/Compile.h"
#include "dt/Compile/CompileCache.h"
#include "dt/Conversion/Passes.h"
#include "dt/InitAll.h"
#include "dt/Support/Statistic.h"
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

#include <link.h>

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
llvm::cl::opt<bool> wideReference(
    "wide-reference",
    llvm::cl::desc("Also compile the single-device program spelled in f64 "
                   "(CPU code): dt-run --verify then tells a result beyond "
                   "its dtype's tolerance that rounds as the reference does "
                   "from one that is wrong (CPU target or --emulate-gpu)"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<bool> reduceMatmulsInF32(
    "reduce-matmuls-in-f32",
    llvm::cl::desc("Reduce the ranks' parts of a split 16-bit matmul in f32 "
                   "and round once, as the single device's product (twice "
                   "the bytes; other 16-bit sums always are)"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<bool> roundEachHalfOp(
    "round-each-half-op",
    llvm::cl::desc("Round every bf16 and f16 operation's result to its type, "
                   "as PyTorch eager does (CPU target; default: a fused "
                   "kernel keeps its 16-bit intermediate values in f32 and "
                   "rounds once, where it stores them)"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<bool> combineCollectives(
    "combine-collectives",
    llvm::cl::desc("Combine collectives of one group and kind into one call "
                   "where the cost model says it is cheaper (gradient and "
                   "FSDP buckets; default: on)"),
    llvm::cl::init(true), llvm::cl::cat(options));
const std::string planSearchHelp =
    "The most whole plans propagation's plan search may price to find "
    "cheaper shardings than its greedy choices (0: no search; default: " +
    std::to_string(mlir::dt::kDefaultPlanSearch) + ")";
llvm::cl::opt<unsigned> planSearch(
    "plan-search", llvm::cl::desc(planSearchHelp),
    llvm::cl::init(mlir::dt::CompileOptions().planSearch),
    llvm::cl::cat(options));
llvm::cl::opt<bool> fillBucketsInPlace(
    "fill-buckets-in-place",
    llvm::cl::desc("Let the ops that make a combined collective's members "
                   "write them into its buffer, instead of copying them in "
                   "(default: on)"),
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
    llvm::cl::desc("Say why: a remark for each op's sharding choice, each "
                   "redistribution's plan, each sum over an unevenly "
                   "split dim, each convolution's (or adjoint's) matmul, "
                   "each transpose a matmul reads through, each "
                   "contraction left as loops and each reduction split into "
                   "lanes on the CPU (stderr), and the cost report (stdout)"),
    llvm::cl::init(false), llvm::cl::cat(options));
llvm::cl::opt<bool> passStatistics(
    "mlir-pass-statistics",
    llvm::cl::desc("Print what dt's passes counted, on stderr at the end, "
                   "as dt-opt does (the cache does not serve such a compile)"),
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
llvm::cl::opt<std::string> cacheDir(
    "cache-dir",
    llvm::cl::desc("Keep each shared object in DIR under a key that hashes "
                   "everything it is made from; a compile with the same key "
                   "copies it instead (not with --explain or --mlir-timing; "
                   "dt-run passes its cache)"),
    llvm::cl::value_desc("DIR"), llvm::cl::init(""), llvm::cl::cat(options));
llvm::cl::opt<uint64_t> cacheLimit(
    "cache-limit",
    llvm::cl::desc("--cache-dir: past this many bytes of artifacts, the "
                   "least recently used are evicted (default: 1 GiB)"),
    llvm::cl::value_desc("BYTES"),
    llvm::cl::init(dt::CompileCache::kDefaultLimitBytes),
    llvm::cl::cat(options));

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
  if (dt::isWrittenThrough(path))
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

/// The cache key of this compile: the compiler itself and the libraries it
/// loaded, its arguments but the output path and the cache's, the source and
/// its path (diagnostics and profiles name it), the topology, the CPU the
/// code is made for, and the tools that take part (the linker driver; ptxas
/// and fatbinary for CUDA kernels). Empty when the compile is not to be
/// cached: the source is stdin, an argument is a response file, or a file
/// cannot be read (the compile then reports it).
std::string cacheKey(llvm::ArrayRef<const char *> args,
                     const llvm::TargetMachine &machine) {
  dt::CacheKey key;
  key.add("dt-compile cache 1");
  std::string self = llvm::sys::fs::getMainExecutable(
      args[0], reinterpret_cast<void *>(&cacheKey));
  if (self.empty() || !key.addFileContents(self))
    return "";
  // The shared libraries it runs with (libMLIR, libLLVM, the C++ library):
  // an upgrade of one replaces its file.
  ::dl_iterate_phdr(
      [](dl_phdr_info *library, size_t, void *data) {
        if (library->dlpi_name && *library->dlpi_name)
          static_cast<dt::CacheKey *>(data)->addFileIdentity(
              library->dlpi_name);
        return 0;
      },
      &key);
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (arg.starts_with("@"))
      return "";
    // Where the artifact goes and where the cache is are not what it is
    // made from (a value of their own follows when there is no `=`).
    llvm::StringRef name = arg.ltrim('-').split('=').first;
    if (arg.starts_with("-") &&
        llvm::is_contained({"o", "cache-dir", "cache-limit"}, name))
      i += arg.contains('=') ? 0 : 1;
    else
      key.add(arg);
  }
  if (inputFile == "-" || !key.addFileContents(inputFile))
    return "";
  if (!topology.empty() && !key.addFileContents(topology))
    return "";
  key.add(machine.getTargetCPU());
  key.add(machine.getTargetFeatureString());
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc || !key.addFileIdentity(*cc))
    return "";
  if (target == "cuda" && !emulateGPU) {
    for (const char *tool : {"ptxas", "fatbinary"}) {
      llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(tool);
      if (!path || !key.addFileIdentity(*path))
        return "";
    }
    for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"}) {
      const char *value = std::getenv(variable);
      key.add(value ? value : "");
    }
  }
  return key.str();
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
  options.reduceMatmulsInF32 = reduceMatmulsInF32;
  options.roundEachHalfOp = roundEachHalfOp;
  options.exchange = exchange;
  options.fillBucketsInPlace = fillBucketsInPlace;
  options.planSearch = planSearch;
  options.explain = explain;
  options.gpuKernelsAnySize = gpuKernelsAnySize;
  options.wideReference = wideReference;
  if (emulateGPU && target != "cuda")
    return fail("--emulate-gpu goes with --target=cuda");
  if (profileKernels && target != "cpu")
    return fail("--profile-kernels times the CPU target's kernels; dt-run "
                "--profile times a GPU's with events, in any CUDA artifact");
  if (wideReference && target == "cuda" && !emulateGPU)
    return fail("--wide-reference: the f64 reference is CPU code, which a "
                "CUDA artifact's host side does not run; use it with "
                "--target=cpu or --emulate-gpu");
  if (gpuKernelsAnySize && target != "cuda")
    return fail("--gpu-kernels-any-size goes with --target=cuda");

  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine;
  if (emit == Emit::SharedObject || emit == Emit::LLVMIR) {
    machine = dt::createTargetMachine(options, error);
    if (!machine)
      return fail(error);
  }
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  // On every way out, after the compile or its failure.
  struct StatisticsAtExit {
    ~StatisticsAtExit() {
      if (passStatistics)
        dt::printStatistics(llvm::errs());
    }
  } statisticsAtExit;

  // A shared object the cache holds is copied. Timing, statistics and
  // --explain's report are what such a compile is run for.
  std::string key;
  if (!cacheDir.empty() && emit == Emit::SharedObject && !explain &&
      !timingManager.isEnabled() && !passStatistics)
    key = cacheKey(llvm::ArrayRef<const char *>(argv, argc), *machine);
  std::optional<dt::CompileCache> cache;
  if (!key.empty()) {
    cache.emplace(cacheDir, cacheLimit);
    std::string cacheError;
    if (failed(cache->open(cacheError))) {
      llvm::errs() << "dt-compile: warning: --cache-dir: " << cacheError
                   << "; compiling without the cache\n";
      cache.reset();
    } else if (cache->fetch(key, outputFile)) {
      return 0;
    }
  }

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

  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  unsigned buffer =
      sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  if (failed(dt::checkBeforeParsing(sourceMgr, buffer)))
    return 1;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // A compile that prints a diagnostic (a warning) is not cached: a copy
  // would not print it.
  bool diagnosed = false;
  context.getDiagEngine().registerHandler([&](Diagnostic &) {
    diagnosed = true;
    return failure(); // On to the handler that prints it.
  });
  TimingScope timing = timingManager.getRootScope();
  TimingScope parsing = timing.nest("parsing");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  parsing.stop();
  if (!module)
    return 1;
  options.timing = &timing;

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
  // -o /dev/null leaves nothing to keep.
  if (cache && !diagnosed && llvm::sys::fs::is_regular_file(outputFile) &&
      failed(cache->store(key, outputFile, error)))
    llvm::errs() << "dt-compile: warning: the artifact was not cached: "
                 << error << "\n";
  return 0;
}
