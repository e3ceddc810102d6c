//===- dt-run.cpp - Run a dt artifact on the ranks of its mesh ------------===//
//
// dt-run PROG.so|PROG.mlir [--backend=threads|mpi|nccl] [--gpus=MODE]
//        [--entry=NAME] [--input=I=FILE.npy]... [--seed=N]
//        [--output-dir=DIR] [--verify] [--repeat=N] [--timeout=SECONDS]
//        [--profile] [--no-cache]
//
// Links the runtime only; a .mlir program is compiled first by running the
// dt-compile that sits next to this executable (under mpirun, by rank 0
// alone, which sends the artifact to the others), through the compile cache
// (dt-compile --cache-dir; $DT_CACHE_DIR, else ~/.cache/dt). The CUDA runtime
// (libdt_runtime_cuda.so) is loaded only for --backend=nccl.
//
//===----------------------------------------------------------------------===//

#include "dt/Runtime/Cuda.h"
#include "dt/Runtime/Job.h"
#include "dt/Runtime/Program.h"
#include "dt/Sharding/ShardLayout.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace dt::rt;

namespace {
struct Flags {
  std::string program;
  std::string backend = "threads";
  std::string gpus = "auto";
  std::string entry = "main";
  std::vector<std::pair<std::string, std::string>> inputs;
  std::optional<uint64_t> seed;
  std::string outputDir;
  bool verify = false;
  /// --verify: the tolerance alone decides; no judge against f64.
  bool strict = false;
  bool describe = false;
  bool profile = false;
  /// --profile-rows: --profile's kernels and matmuls shown one a row, the
  /// slowest first (0: every one; 15 when not given); the rest are summed
  /// in one row.
  std::optional<int> profileRows;
  /// The compile cache's directory; empty: none (--no-cache).
  std::string cacheDir;
  int repeat = 1;
  /// --blas-threads: each rank's OpenBLAS threads (0: $OPENBLAS_NUM_THREADS,
  /// else this machine's CPUs shared out among its ranks).
  int blasThreads = 0;
  /// --kernel-threads: the threads each rank's large kernels are shared out
  /// among (0: this machine's CPUs shared out among its ranks).
  int kernelThreads = 0;
  double timeoutSeconds = 60;
  std::optional<double> rtol, atol;
};

constexpr char kUsage[] =
    "usage: dt-run PROG.so|PROG.mlir [--backend=threads|mpi|nccl]\n"
    "              [--gpus=auto|one-per-rank|device-local] [--entry=NAME]\n"
    "              [--input=I=FILE.npy]... [--seed=N] [--output-dir=DIR]\n"
    "              [--verify [--rtol=X] [--atol=X] [--strict]] [--repeat=N]\n"
    "              [--timeout=SECONDS] [--profile [--profile-rows=N]]\n"
    "              [--blas-threads=N] [--kernel-threads=N] [--describe]\n"
    "              [--no-cache]\n"
    "  I is an argument's index or its dt.name. Arguments without --input\n"
    "  take seeded values (--seed). --profile times each collective of the\n"
    "  program and prints them per call of the entry, by source location,\n"
    "  then its kernels and matmuls, the slowest first (on the CPU, an\n"
    "  artifact compiled with --profile-kernels, as a .mlir given here is\n"
    "  under --profile; on GPUs, every artifact, with events on the streams\n"
    "  the work runs on), N of them a row (15; 0: all), the rest summed.\n"
    "  --blas-threads=N: each rank's CPU matmuls run on N OpenBLAS threads\n"
    "  (default: $OPENBLAS_NUM_THREADS if set, else the CPUs this process\n"
    "  may use shared out among the ranks on this machine, at least one\n"
    "  each; a matmul's bits depend on N). --kernel-threads=N: each rank\n"
    "  shares the chunks of its large CPU kernels among N threads (default:\n"
    "  the CPUs shared out as above; the bits do not depend on N).\n"
    "  --describe prints the program\n"
    "  description (entries, meshes, arguments, results) and exits.\n"
    "  --verify compares each result with the single-device reference's; a\n"
    "  float result beyond its dtype's tolerance passes all the same when,\n"
    "  against the program spelled in f64, it is as accurate as the\n"
    "  reference's (dt-compile --wide-reference; a .mlir given here is\n"
    "  compiled so when needed). --strict: the tolerance alone decides.\n"
    "  A .mlir program is compiled through the compile cache: the directory\n"
    "  $DT_CACHE_DIR (empty: no cache), else $XDG_CACHE_HOME/dt, else\n"
    "  ~/.cache/dt; --no-cache compiles afresh and keeps nothing.\n"
    "  --backend=nccl runs a CUDA artifact (dt-compile --target=cuda): under\n"
    "  mpirun one process per GPU, else one thread per rank, each on its own\n"
    "  GPU (--gpus=one-per-rank) or all on GPU 0 (--gpus=device-local; auto\n"
    "  picks one-per-rank when there are enough GPUs).\n"
    "  See docs/Runtime.md.\n";

[[noreturn]] void usage(const std::string &message) {
  std::fprintf(stderr, "dt-run: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

/// The compile cache's directory: $DT_CACHE_DIR (set and empty: none), else
/// $XDG_CACHE_HOME/dt, else $HOME/.cache/dt.
std::string cacheDirectory() {
  if (const char *dir = std::getenv("DT_CACHE_DIR"))
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return absl::StrCat(xdg, "/dt");
  if (const char *home = std::getenv("HOME"); home && *home)
    return absl::StrCat(home, "/.cache/dt");
  return "";
}

Flags parseFlags(int argc, char **argv) {
  Flags flags;
  bool noCache = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](absl::string_view name) -> std::optional<std::string> {
      std::string prefix = absl::StrCat("--", name);
      if (arg == prefix) {
        if (i + 1 >= argc)
          usage(absl::StrCat(prefix, " needs a value"));
        return std::string(argv[++i]);
      }
      if (absl::StartsWith(arg, prefix + "="))
        return arg.substr(prefix.size() + 1);
      return std::nullopt;
    };
    if (auto v = value("backend")) {
      flags.backend = *v;
    } else if (auto v = value("gpus")) {
      flags.gpus = *v;
    } else if (auto v = value("entry")) {
      flags.entry = *v;
    } else if (auto v = value("input")) {
      size_t eq = v->find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v->size())
        usage(absl::StrCat("--input takes I=FILE.npy, got '", *v, "'"));
      flags.inputs.emplace_back(v->substr(0, eq), v->substr(eq + 1));
    } else if (auto v = value("seed")) {
      uint64_t seed;
      if (!absl::SimpleAtoi(*v, &seed))
        usage(absl::StrCat("--seed takes a non-negative integer, got '", *v, "'"));
      flags.seed = seed;
    } else if (auto v = value("output-dir")) {
      flags.outputDir = *v;
    } else if (arg == "--verify") {
      flags.verify = true;
    } else if (arg == "--strict") {
      flags.strict = true;
    } else if (arg == "--describe") {
      flags.describe = true;
    } else if (arg == "--profile") {
      flags.profile = true;
    } else if (auto v = value("profile-rows")) {
      int rows;
      if (!absl::SimpleAtoi(*v, &rows) || rows < 0)
        usage(absl::StrCat("--profile-rows takes an integer >= 0, got '", *v,
                           "'"));
      flags.profileRows = rows;
    } else if (arg == "--no-cache") {
      noCache = true;
    } else if (auto v = value("repeat")) {
      if (!absl::SimpleAtoi(*v, &flags.repeat) || flags.repeat < 1)
        usage(absl::StrCat("--repeat takes a positive integer, got '", *v, "'"));
    } else if (auto v = value("blas-threads")) {
      if (!absl::SimpleAtoi(*v, &flags.blasThreads) || flags.blasThreads < 1)
        usage(absl::StrCat("--blas-threads takes a positive integer, got '", *v,
                           "'"));
    } else if (auto v = value("kernel-threads")) {
      if (!absl::SimpleAtoi(*v, &flags.kernelThreads) ||
          flags.kernelThreads < 1)
        usage(absl::StrCat("--kernel-threads takes a positive integer, got '",
                           *v, "'"));
    } else if (auto v = value("rtol")) {
      double x;
      if (!absl::SimpleAtod(*v, &x) || !(x >= 0))
        usage(absl::StrCat("--rtol takes a number >= 0, got '", *v, "'"));
      flags.rtol = x;
    } else if (auto v = value("atol")) {
      double x;
      if (!absl::SimpleAtod(*v, &x) || !(x >= 0))
        usage(absl::StrCat("--atol takes a number >= 0, got '", *v, "'"));
      flags.atol = x;
    } else if (auto v = value("timeout")) {
      if (!absl::SimpleAtod(*v, &flags.timeoutSeconds) ||
          !(flags.timeoutSeconds > 0))
        usage(absl::StrCat("--timeout takes seconds > 0, got '", *v, "'"));
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (absl::StartsWith(arg, "-")) {
      usage(absl::StrCat("unknown flag ", arg));
    } else if (flags.program.empty()) {
      flags.program = arg;
    } else {
      usage(absl::StrCat("one program only; got '", flags.program, "' and '",
                         arg, "'"));
    }
  }
  if (flags.program.empty())
    usage("no program given");
  if (flags.strict && !flags.verify)
    usage("--strict goes with --verify");
  if (flags.profileRows && !flags.profile)
    usage("--profile-rows goes with --profile");
  if (!noCache)
    flags.cacheDir = cacheDirectory();
  if (flags.backend != "threads" && flags.backend != "mpi" &&
      flags.backend != "nccl")
    usage(absl::StrCat("--backend is threads, mpi or nccl, got '",
                       flags.backend, "'"));
  if (flags.gpus != "auto" && flags.gpus != "one-per-rank" &&
      flags.gpus != "device-local")
    usage(absl::StrCat("--gpus is auto, one-per-rank or device-local, got '",
                       flags.gpus, "'"));
  return flags;
}

[[noreturn]] void die(const absl::Status &status) {
  std::fprintf(stderr, "dt-run: error: %s\n", std::string(status.message()).c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  // Not exit(): a rank thread stuck after a failure may still be running.
  std::_Exit(1);
}

/// A fresh temporary directory for a compiled program, under $TMPDIR (or
/// /tmp). The six X's end mkdtemp's name template: it makes the directory
/// under a unique name that replaces them.
absl::StatusOr<std::string> temporaryDirectory() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/dt-run-XXXXXX");
  if (!::mkdtemp(pattern.data()))
    return absl::InternalError(
        absl::StrCat("cannot create a temporary directory ", pattern, ": ",
                     std::strerror(errno)));
  return pattern;
}

/// Compiles `source` with the dt-compile next to this executable into a
/// fresh temporary directory, its kernels timed when `timed` (--profile on
/// the CPU), with the f64 reference when `wide`, through the compile cache
/// in `cacheDir` unless it is empty; returns the artifact's path.
absl::StatusOr<std::string> compile(const std::string &source, bool cuda,
                                    bool timed, const std::string &cacheDir,
                                    bool wide = false) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return absl::InternalError("cannot find dt-run's own path");
  self[n] = '\0';
  std::string dir(self);
  dir = dir.substr(0, dir.rfind('/'));
  std::string compiler = dir + "/dt-compile";
  if (::access(compiler.c_str(), X_OK) != 0)
    return absl::NotFoundError(absl::StrCat(
        "cannot compile ", source, ": no dt-compile next to dt-run (", compiler,
        "); pass a .so built by dt-compile instead"));
  absl::StatusOr<std::string> directory = temporaryDirectory();
  if (!directory.ok())
    return directory.status();
  std::string output = *directory + "/program.so";
  std::vector<std::string> args = {compiler, source, "-o", output,
                                   cuda ? "--target=cuda" : "--target=cpu"};
  if (timed)
    args.push_back("--profile-kernels");
  if (wide)
    args.push_back("--wide-reference");
  if (!cacheDir.empty())
    args.push_back(absl::StrCat("--cache-dir=", cacheDir));
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(compiler.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    ::rmdir(directory->c_str());
    return absl::InvalidArgumentError(
        absl::StrCat("dt-compile failed on ", source, " (its errors are above)"));
  }
  return output;
}

/// Removes a compiled program and its temporary directory.
void removeCompiled(const std::string &path) {
  ::unlink(path.c_str());
  ::rmdir(path.substr(0, path.rfind('/')).c_str());
}

/// Under mpirun: rank 0's compiled program (`compiled`, or its error) on
/// every rank. Rank 0 compiles alone, with every core, and sends the
/// artifact's bytes to the others, which write them into temporary
/// directories of their own (a cluster's nodes need not share a file
/// system). An error of rank 0's reaches every rank, marked `shared`.
absl::StatusOr<std::string> shareCompiled(absl::StatusOr<std::string> compiled,
                                          const MpiWorld &world, bool &shared) {
  // What rank 0 sends (the others' is not read).
  absl::StatusOr<std::string> bytes = std::string();
  if (!compiled.ok())
    bytes = compiled.status();
  else if (world.rank == 0) {
    std::ifstream in(*compiled, std::ios::binary);
    std::string contents(std::istreambuf_iterator<char>(in), {});
    if (in.bad()) {
      bytes = absl::InternalError(
          absl::StrCat("cannot read the compiled program ", *compiled));
      removeCompiled(*compiled);
    } else
      bytes = std::move(contents);
  }
  absl::StatusOr<std::string> received = mpiBroadcast(bytes, world);
  shared = !received.ok();
  if (world.rank == 0 || !received.ok())
    return received.ok() ? compiled : received.status();
  absl::StatusOr<std::string> directory = temporaryDirectory();
  if (!directory.ok())
    return directory.status();
  std::string path = *directory + "/program.so";
  std::ofstream out(path, std::ios::binary);
  out.write(received->data(), static_cast<std::streamsize>(received->size()));
  out.close();
  if (!out) {
    removeCompiled(path);
    return absl::InternalError(absl::StrCat(
        "cannot write the compiled program (", received->size(),
        " bytes from rank 0) to ", path, ": ", std::strerror(errno)));
  }
  return path;
}

/// The argument an `--input` key names: an index or a dt.name.
absl::StatusOr<int> argumentIndex(const EntrySpec &entry, const std::string &key) {
  int index;
  if (absl::SimpleAtoi(key, &index)) {
    if (index < 0 || index >= static_cast<int>(entry.args.size()))
      return absl::InvalidArgumentError(absl::StrCat(
          "--input ", key, ": entry ", entry.name, " has ", entry.args.size(),
          " arguments (0 to ", entry.args.size() - 1, ")"));
    return index;
  }
  for (const TensorSpec &arg : entry.args)
    if (arg.name == key)
      return arg.index;
  std::string names;
  for (const TensorSpec &arg : entry.args)
    absl::StrAppend(&names, names.empty() ? "" : ", ",
                    arg.name.empty() ? absl::StrCat("#", arg.index) : arg.name);
  return absl::InvalidArgumentError(absl::StrCat(
      "--input ", key, ": entry ", entry.name, " has no argument named '",
      key, "' (its arguments: ", names, ")"));
}

struct Tolerance {
  double rtol, atol; ///< atol is relative to the largest |reference|.
};
Tolerance toleranceFor(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return {1e-10, 1e-12};
  case DType::F32:
    return {1e-4, 1e-5};
  case DType::F16:
    return {1e-2, 1e-3};
  case DType::BF16:
    return {4e-2, 8e-3};
  case DType::I32:
  case DType::I64:
  case DType::I1:
    return {0, 0};
  }
  return {0, 0};
}

/// Prints the comparison of one result; false beyond tolerance.
bool compareResult(const TensorSpec &spec, const HostTensor &got,
                   const HostTensor &want, const Flags &flags) {
  double maxRef = 0, maxAbs = 0;
  bool nanMismatch = false;
  for (int64_t i = 0; i < want.numElements(); ++i)
    if (std::isfinite(want.at(i)))
      maxRef = std::max(maxRef, std::fabs(want.at(i)));
  Tolerance tol = toleranceFor(spec.dtype);
  tol.rtol = flags.rtol.value_or(tol.rtol);
  tol.atol = flags.atol.value_or(tol.atol);
  // The elements beyond tolerance, and the worst of them (furthest past
  // what its tolerance allows; a NaN/Inf mismatch is worst of all).
  int64_t beyond = 0, worst = -1;
  double worstExcess = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    double a = got.at(i), b = want.at(i);
    double excess;
    if (std::isnan(a) != std::isnan(b) || (std::isinf(b) && a != b)) {
      nanMismatch = true;
      excess = std::numeric_limits<double>::infinity();
    } else if (!std::isfinite(b)) {
      continue;
    } else {
      double diff = std::fabs(a - b);
      maxAbs = std::max(maxAbs, diff);
      double allowed = tol.atol * maxRef + tol.rtol * std::fabs(b);
      if (diff <= allowed)
        continue;
      excess = allowed > 0 ? diff / allowed
                           : std::numeric_limits<double>::infinity();
    }
    ++beyond;
    if (worst < 0 || excess > worstExcess) {
      worst = i;
      worstExcess = excess;
    }
  }
  bool ok = beyond == 0;
  double rel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
  std::printf("  %s %s %s: max abs err %.3g, max rel err %.3g (tolerance rtol "
              "%.0e, atol %.0e x max|ref|)%s: %s\n",
              spec.label("result").c_str(), shapeString(spec.shape).c_str(),
              std::string(dtypeName(spec.dtype)).c_str(), maxAbs, rel, tol.rtol,
              tol.atol, nanMismatch ? ", NaN/Inf mismatch" : "",
              ok ? "ok" : "MISMATCH");
  if (!ok) {
    // How many, and where: what tells a wrong op from a program whose
    // result rounding alone moves (then compare with --rtol/--atol).
    // Row-major coordinates, as of a rank on a mesh.
    std::vector<int64_t> index = dt::meshCoords(spec.shape, worst);
    std::printf("    %lld of %lld elements beyond tolerance; the worst at "
                "[%s]: got %.9g, expected %.9g\n",
                static_cast<long long>(beyond),
                static_cast<long long>(want.numElements()),
                absl::StrJoin(index, ", ").c_str(), got.at(worst),
                want.at(worst));
  }
  return ok;
}

/// A float narrower than f64: a dtype whose results the f64 judge takes.
bool isNarrowFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

/// The largest |got - exact| over the elements; infinite where one holds a
/// NaN or an infinity the other does not.
double distance(const HostTensor &got, const HostTensor &exact) {
  double worst = 0;
  for (int64_t i = 0; i < exact.numElements(); ++i) {
    double a = got.at(i), b = exact.at(i);
    if (a == b || (std::isnan(a) && std::isnan(b)))
      continue;
    double d = std::fabs(a - b);
    if (!std::isfinite(d))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, d);
  }
  return worst;
}

/// How far a distributed result may be from the program spelled in f64, in
/// multiples of the single-device result's own distance from it (plus one
/// unit roundoff of the largest value): each split contraction rounds its
/// partial sums once more, the backward pass compounds it, and a sum of
/// large terms of either sign has few correct digits in any order. Over
/// 750 random training steps (scripts/fuzz-programs.py) the largest ratio
/// was 3.9.
constexpr double kRoundingFactor = 4;

/// The judge of results beyond their dtype's tolerance (`beyond`, float
/// results narrower than f64): each passes when, against the f64 program
/// `wide` run on the same inputs (widened exactly), it is within
/// kRoundingFactor of the single-device result's distance plus its unit
/// roundoff (of the narrowest float its computation goes through, from
/// `artifact`) times the largest value. Prints a line per result; true
/// when all pass.
absl::StatusOr<bool> judgeAgainstF64(
    Artifact::EntryFn wide, const Artifact &artifact, const EntrySpec &entry,
    const std::vector<HostTensor> &args, const std::vector<HostTensor> &got,
    const std::vector<HostTensor> &want, const std::vector<int> &beyond) {
  // Floats widened (exactly); integers and bools as they are.
  auto widened = [](const HostTensor &t) {
    bool narrow = isNarrowFloat(t.dtype());
    HostTensor wide(narrow ? DType::F64 : t.dtype(), t.shape());
    if (!narrow)
      std::memcpy(wide.data(), t.data(), t.byteSize());
    else
      for (int64_t i = 0; i < t.numElements(); ++i)
        wide.set(i, t.at(i));
    return wide;
  };
  std::vector<HostTensor> wideArgs, exact;
  for (const HostTensor &arg : args)
    wideArgs.push_back(widened(arg));
  for (const TensorSpec &result : entry.results)
    exact.emplace_back(isNarrowFloat(result.dtype) ? DType::F64 : result.dtype,
                       result.shape);
  if (absl::Status s = runReference(wide, wideArgs, exact); !s.ok())
    return s;
  bool all = true;
  std::printf("against the program in f64 (the same inputs):\n");
  for (int index : beyond) {
    const HostTensor &f64 = exact[index];
    double scale = 0;
    for (int64_t i = 0; i < f64.numElements(); ++i)
      if (std::isfinite(f64.at(i)))
        scale = std::max(scale, std::fabs(f64.at(i)));
    double errGot = distance(got[index], f64);
    double errRef = distance(want[index], f64);
    double unit = artifact.unitRoundoff(entry.name, index).value_or(0);
    double bound = kRoundingFactor * errRef + unit * scale;
    bool ok = errGot <= bound;
    all = all && ok;
    std::printf("  %s: max abs err %.3g, the single-device result's %.3g "
                "(allowed: %g x that + 2^%d x max|f64| %.3g = %.3g): %s\n",
                entry.results[index].label("result").c_str(), errGot, errRef,
                kRoundingFactor, std::ilogb(unit), scale, bound,
                ok ? "as accurate as the reference" : "LESS ACCURATE");
  }
  return all;
}

void printTiming(const RunStats &stats, const std::string &backend) {
  for (size_t i = 0; i < stats.ranks.size(); ++i) {
    const std::vector<double> &s = stats.seconds[i];
    if (s.empty())
      continue;
    // Of several calls the first warms up (first touches, threads starting
    // apart) and is shown apart, as --profile leaves it out.
    size_t skipped = s.size() > 1 ? 1 : 0;
    double total = 0, best = s[skipped];
    for (size_t k = skipped; k < s.size(); ++k) {
      total += s[k];
      best = std::min(best, s[k]);
    }
    std::string first =
        skipped ? absl::StrFormat("; the first %.1f us, not in the mean",
                                  1e6 * s[0])
                : "";
    std::printf(
        "  rank %lld: %.1f us per call (min %.1f us, %zu call%s, %s%s)\n",
        static_cast<long long>(stats.ranks[i]),
        1e6 * total / (s.size() - skipped), 1e6 * best, s.size(),
        s.size() == 1 ? "" : "s", backend.c_str(), first.c_str());
  }
}

/// "512 B", "16.0 KiB", "4.0 MiB".
std::string bytesString(int64_t bytes) {
  if (bytes < 1024)
    return absl::StrCat(bytes, " B");
  if (bytes < 1024 * 1024)
    return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrFormat("%.1f MiB", bytes / (1024.0 * 1024.0));
}

/// One collective or kernel of the program, merged over the ranks.
struct ProfiledSite {
  std::string name;
  bool compute = false;
  std::vector<double> seconds; ///< Per call of the entry, one per rank.
  int64_t runs = 0, bytesIn = 0, bytesOut = 0;
  double model = -1; ///< The compiler's estimate of one run.

  double mean() const {
    double sum = 0;
    for (double t : seconds)
      sum += t;
    return sum / seconds.size();
  }
  double fastest() const {
    return *std::min_element(seconds.begin(), seconds.end());
  }
};

/// The collectives' table of --profile, in the order they ran, and how much
/// of the entry's `entry` seconds they took; returns that (their mean
/// seconds per call).
double printCollectives(const std::vector<const ProfiledSite *> &sites,
                        double entry, int repeat, int skipped, size_t ranks) {
  std::printf("profile: collectives per call of the entry (%d call%s%s), "
              "mean over %zu ranks (in brackets the fastest rank, which "
              "waited least for the others: closest to the transfer alone; "
              "model: the compiler's alpha-beta estimate on its topology, "
              "dt-compile --topology)\n",
              repeat, repeat == 1 ? "" : "s",
              skipped ? ", after one to warm up" : "", ranks);
  std::printf("  %10s %12s %10s %7s %24s %7s  %s\n", "time", "(fastest)",
              "model", "runs", "in -> out per run", "share", "site");
  // The model column: the compiler's estimate (dt-price-collectives) for
  // the same runs; "-" where the artifact has none.
  double collectives = 0, modelled = 0;
  bool allModelled = true;
  double fastestCollectives = 0;
  for (const ProfiledSite *site : sites) {
    double mean = site->mean(), fastest = site->fastest();
    collectives += mean;
    fastestCollectives += fastest;
    std::string sizes = absl::StrCat(bytesString(site->bytesIn), " -> ",
                                     bytesString(site->bytesOut));
    double runsPerCall = static_cast<double>(site->runs) / repeat;
    std::string model = "-";
    if (site->model >= 0) {
      model = absl::StrFormat("%.1f us", 1e6 * site->model * runsPerCall);
      modelled += site->model * runsPerCall;
    } else {
      allModelled = false;
    }
    std::printf("  %7.1f us (%7.1f us) %10s %7.4g %24s %6.1f%%  %s\n",
                1e6 * mean, 1e6 * fastest, model.c_str(), runsPerCall,
                sizes.c_str(), entry > 0 ? 100 * mean / entry : 0.0,
                site->name.c_str());
  }
  std::string expected =
      allModelled ? absl::StrFormat(" (the model: %.1f us)", 1e6 * modelled)
                  : "";
  std::printf("  collectives: %.1f us%s of %.1f us per call (%.1f%%); outside "
              "them (compute, local copies): %.1f us\n",
              1e6 * collectives, expected.c_str(), 1e6 * entry,
              entry > 0 ? 100 * collectives / entry : 0.0,
              1e6 * std::max(0.0, entry - collectives));
  // Against the fastest ranks' times, the closest to the transfers alone: a
  // model off by more than 3x plans for another machine.
  if (allModelled && modelled > 0 && fastestCollectives > 0) {
    double ratio = fastestCollectives / modelled;
    if (ratio > 3 || ratio < 1.0 / 3)
      std::printf("  the model is %.1fx %s the fastest ranks' %.1f us: "
                  "scripts/calibrate-topology.py fits the links to this "
                  "machine (dt-compile --topology)\n",
                  ratio > 1 ? ratio : 1 / ratio,
                  ratio > 1 ? "below" : "above", 1e6 * fastestCollectives);
  }
  return collectives;
}

/// The kernels' and matmuls' table of --profile (an artifact compiled with
/// --profile-kernels): the slowest first, `rows` of them (0: all), the rest
/// summed in one line; what neither they nor the collectives (`collectives`
/// seconds) took is the entry's own overhead.
void printCompute(std::vector<const ProfiledSite *> sites, double entry,
                  double collectives, int repeat, size_t ranks, int rows) {
  size_t shown = rows == 0 ? sites.size() : static_cast<size_t>(rows);
  std::stable_sort(sites.begin(), sites.end(),
                   [](const ProfiledSite *a, const ProfiledSite *b) {
                     return a->mean() > b->mean();
                   });
  std::printf("profile: kernels and matmuls per call of the entry, the "
              "slowest first, mean over %zu ranks (in brackets the fastest "
              "rank)\n",
              ranks);
  std::printf("  %10s %12s %7s %7s  %s\n", "time", "(fastest)", "runs", "share",
              "site");
  double total = 0, rest = 0;
  for (size_t i = 0; i < sites.size(); ++i) {
    const ProfiledSite *site = sites[i];
    double mean = site->mean();
    total += mean;
    if (i >= shown) {
      rest += mean;
      continue;
    }
    std::printf("  %7.1f us (%7.1f us) %7.4g %6.1f%%  %s\n", 1e6 * mean,
                1e6 * site->fastest(), static_cast<double>(site->runs) / repeat,
                entry > 0 ? 100 * mean / entry : 0.0, site->name.c_str());
  }
  if (sites.size() > shown)
    std::printf("  %7.1f us %12s %7s %6.1f%%  (%zu more site%s)\n", 1e6 * rest,
                "", "", entry > 0 ? 100 * rest / entry : 0.0,
                sites.size() - shown, sites.size() - shown == 1 ? "" : "s");
  std::printf("  kernels and matmuls: %.1f us of %.1f us per call (%.1f%%); "
              "with the collectives' %.1f us, that leaves %.1f us "
              "(allocations, copies, the calls themselves)\n",
              1e6 * total, 1e6 * entry, entry > 0 ? 100 * total / entry : 0.0,
              1e6 * collectives,
              1e6 * std::max(0.0, entry - total - collectives));
}

/// --profile: each collective's time per call of the entry, merged over the
/// ranks by site, in the order the first rank ran them, then the kernels
/// and matmuls when the artifact times them, and on the CPU the BLAS
/// kernels the matmuls ran. Of several calls, the first (warm-up) is left
/// out, as the runtime left it out of the profile.
void printProfile(const RunStats &stats, int repeat, bool cuda, int rows) {
  int skipped = repeat > 1 ? 1 : 0;
  repeat -= skipped;
  std::vector<ProfiledSite> sites;
  std::map<std::string, size_t> index;
  for (const std::vector<SiteProfile> &rank : stats.profiles)
    for (const SiteProfile &profile : rank) {
      auto [it, inserted] = index.try_emplace(profile.site, sites.size());
      if (inserted)
        sites.push_back({profile.site,
                         profile.compute,
                         {},
                         profile.runs,
                         profile.bytesIn,
                         profile.bytesOut,
                         profile.modelSeconds});
      ProfiledSite &site = sites[it->second];
      site.seconds.push_back(profile.seconds / repeat);
      site.runs = std::max(site.runs, profile.runs);
    }
  double entry = 0;
  int64_t timedRanks = 0;
  for (const std::vector<double> &calls : stats.seconds) {
    if (calls.empty())
      continue;
    double sum = 0;
    for (size_t i = skipped; i < calls.size(); ++i)
      sum += calls[i];
    entry += sum / repeat;
    ++timedRanks;
  }
  entry = timedRanks ? entry / timedRanks : 0;
  std::vector<const ProfiledSite *> collectives, compute;
  for (const ProfiledSite &site : sites)
    (site.compute ? compute : collectives).push_back(&site);
  size_t ranks = stats.profiles.size();
  double collectiveSeconds = 0;
  if (collectives.empty())
    std::printf("profile: no collective ran\n");
  else
    collectiveSeconds =
        printCollectives(collectives, entry, repeat, skipped, ranks);
  if (compute.empty())
    std::printf("profile: the kernels were not timed (dt-compile "
                "--profile-kernels times each loop nest and matmul; dt-run "
                "compiles a .mlir so under --profile)\n");
  else
    printCompute(std::move(compute), entry, collectiveSeconds, repeat, ranks,
                 rows);
  if (!cuda)
    std::printf("profile: matmuls through %s\n", blasKernels().c_str());
}

/// Makes --output-dir (when given) ready to take the results: created if
/// missing, a writable directory. Checked before the run, so that a wrong
/// path costs no run.
absl::Status prepareOutputDir(const std::string &dir) {
  if (dir.empty())
    return absl::OkStatus();
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create --output-dir ", dir, ": ", std::strerror(errno)));
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return absl::FailedPreconditionError(absl::StrCat(
        "--output-dir ", dir, " is not a directory (it is a file)"));
  // Whether a file can be made there, tried rather than asked: access(W_OK)
  // says yes to root even in /proc or on a read-only file system. The six
  // X's end mkstemp's name template: it makes the file under a unique name
  // that replaces them.
  std::string probe = absl::StrCat(dir, "/.dt-run-probe-XXXXXX");
  int fd = ::mkstemp(probe.data());
  if (fd < 0)
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot write to --output-dir ", dir, ": ", std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

absl::Status writeResults(const std::string &dir,
                          const std::vector<HostTensor> &results) {
  if (dir.empty())
    return absl::OkStatus();
  for (size_t i = 0; i < results.size(); ++i)
    if (absl::Status s = writeNpy(absl::StrCat(dir, "/result", i, ".npy"), results[i]);
        !s.ok())
      return s;
  return absl::OkStatus();
}

/// One argument's global value (verification and the threads backend).
absl::StatusOr<HostTensor> globalInput(const TensorSpec &spec,
                                       const std::string *file,
                                       std::optional<uint64_t> seed) {
  HostTensor global(spec.dtype, spec.shape);
  std::string what = absl::StrCat("input for ", spec.label("argument"));
  if (file) {
    std::vector<int64_t> zero(spec.shape.size(), 0);
    if (absl::Status s = readNpyBox(*file, what, spec.dtype, spec.shape, zero,
                                    spec.shape, global);
        !s.ok())
      return s;
  } else {
    fillSeeded(global, spec, Mesh{}, 0, *seed);
  }
  return global;
}

/// A fault in the compiled program (the runtime's own errors are statuses)
/// ends the run with a message rather than a bare signal. Most often it is
/// a gather index outside its table (ids out of range in an input): the
/// compiled program reads its indices unchecked, as a compiled gather
/// does. Exit status 3.
void reportFaults() {
  static const auto handler = +[](int signal) {
    const char *what =
        signal == SIGFPE
            ? "SIGFPE): an integer division overflowed (the most negative "
              "value by -1)\n"
        : signal == SIGILL
            ? "SIGILL): an instruction this CPU lacks (compiled for another "
              "one? dt-compile --mcpu)\n"
            : "SIGSEGV or SIGBUS): most likely an index outside its tensor "
              "(a gather's ids out of range?) in a program compiled with "
              "--bounds-checks=false\n";
    // Only async-signal-safe calls here.
    for (const char *text :
         {"dt-run: error: the compiled program crashed (", what})
      (void)!::write(STDERR_FILENO, text, std::strlen(text));
    ::_exit(3);
  };
  struct sigaction action = {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    ::sigaction(signal, &action, nullptr);
}

/// The f64 judge of the float results beyond tolerance (`beyond`): the
/// artifact's f64 reference, or a .mlir given to dt-run (`compiledHere`)
/// compiled again with one. False, with a line saying why, where there is
/// none to run.
bool judgeRounding(const Flags &flags, const Artifact &artifact,
                   bool compiledHere, bool cuda, const EntrySpec &entry,
                   const std::vector<HostTensor> &args,
                   const std::vector<HostTensor> &got,
                   const std::vector<HostTensor> &want,
                   const std::vector<int> &beyond) {
  if (cuda) {
    std::printf("  (the judge against f64 runs CPU code, not with "
                "--backend=nccl: --rtol/--atol widen the tolerance)\n");
    return false;
  }
  absl::StatusOr<Artifact::EntryFn> wide =
      artifact.wideReferenceEntry(entry.name);
  const Artifact *judge = &artifact;
  std::unique_ptr<Artifact> recompiled;
  if (!wide.ok() && !compiledHere) {
    std::printf("  (compiled with dt-compile --wide-reference, %s would have "
                "these results judged against the program in f64)\n",
                flags.program.c_str());
    return false;
  }
  if (!wide.ok()) {
    absl::StatusOr<std::string> compiled =
        compile(flags.program, /*cuda=*/false, /*timed=*/false, flags.cacheDir,
                /*wide=*/true);
    absl::StatusOr<std::unique_ptr<Artifact>> opened =
        compiled.ok() ? Artifact::open(*compiled) : compiled.status();
    if (compiled.ok())
      removeCompiled(*compiled);
    if (opened.ok()) {
      recompiled = std::move(*opened);
      judge = recompiled.get();
      wide = recompiled->wideReferenceEntry(entry.name);
    } else {
      wide = opened.status();
    }
  }
  absl::StatusOr<bool> judged =
      wide.ok() ? judgeAgainstF64(*wide, *judge, entry, args, got, want, beyond)
                : wide.status();
  if (!judged.ok())
    std::printf("  (the judge against f64 did not run: %s)\n",
                std::string(judged.status().message()).c_str());
  return judged.value_or(false);
}

/// True when mpirun started this process.
bool underMpirun() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name))
      return true;
  return false;
}
} // namespace

int main(int argc, char **argv) {
  Flags flags = parseFlags(argc, argv);
  bool cuda = flags.backend == "nccl";
  bool mpi = flags.backend == "mpi" || (cuda && underMpirun());
  MpiWorld world;
  if (mpi) {
    absl::StatusOr<MpiWorld> w = mpiInit(&argc, &argv);
    if (!w.ok())
      die(w.status());
    world = *w;
  }
  auto fail = [&](const absl::Status &status) {
    if (mpi)
      mpiAbort(status);
    die(status);
  };
  // After MPI's initialization, which installs handlers of its own.
  reportFaults();

  // The CUDA runtime first: a CUDA artifact's kernels and matmuls resolve
  // to it when the artifact loads.
  const CudaPlugin *plugin = nullptr;
  if (cuda) {
    absl::StatusOr<const CudaPlugin *> loaded = loadCudaPlugin();
    if (!loaded.ok())
      fail(absl::Status(
          loaded.status().code(),
          absl::StrCat("--backend=nccl: ", loaded.status().message())));
    plugin = *loaded;
  }

  std::string path = flags.program;
  bool temporary = absl::EndsWith(path, ".mlir");
  if (temporary) {
    absl::StatusOr<std::string> compiled =
        mpi && world.rank != 0
            ? absl::StatusOr<std::string>(absl::UnknownError("not rank 0"))
            : compile(path, cuda, flags.profile && !cuda, flags.cacheDir);
    bool shared = false;
    if (mpi)
      compiled = shareCompiled(std::move(compiled), world, shared);
    if (shared) {
      // Every rank has rank 0's error: rank 0 reports it, and all leave
      // without aborting the job.
      if (world.rank == 0)
        std::fprintf(stderr, "dt-run: error: %s\n",
                     std::string(compiled.status().message()).c_str());
      mpiFinalize();
      std::exit(1);
    }
    if (!compiled.ok())
      fail(compiled.status());
    path = *compiled;
  }
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::open(path);
  // Loaded (or failed to load): the compiled file is no longer needed.
  if (temporary)
    removeCompiled(path);
  if (!artifact.ok()) {
    // A damaged entry of the compile cache would fail every run alike.
    if (temporary && !flags.cacheDir.empty())
      fail(absl::Status(
          artifact.status().code(),
          absl::StrCat(artifact.status().message(), " (compiled from ",
                       flags.program, " through the compile cache ",
                       flags.cacheDir,
                       ": run with --no-cache, or remove that directory)")));
    fail(artifact.status());
  }
  bool cudaArtifact = (*artifact)->spec().target == TargetKind::CUDA;
  if (cudaArtifact != cuda && !flags.describe)
    fail(absl::FailedPreconditionError(
        cudaArtifact
            ? absl::StrCat(flags.program, " is a CUDA artifact: run it with "
                                          "--backend=nccl")
            : absl::StrCat(flags.program,
                           " is a CPU artifact: --backend=nccl runs CUDA "
                           "artifacts (dt-compile --target=cuda)")));
  if (flags.describe) {
    std::fputs((*artifact)->description().c_str(), stdout);
    std::exit(0);
  }
  const EntrySpec *entry = (*artifact)->spec().find(flags.entry);
  if (!entry) {
    std::string names;
    for (const EntrySpec &e : (*artifact)->spec().entries)
      absl::StrAppend(&names, names.empty() ? "" : ", ", e.name);
    fail(absl::NotFoundError(absl::StrCat(flags.program, " has no entry '",
                                          flags.entry, "' (entries: ", names,
                                          "); choose one with --entry")));
  }
  absl::StatusOr<Artifact::EntryFn> spmd = (*artifact)->spmdEntry(entry->name);
  if (!spmd.ok())
    fail(spmd.status());
  const Mesh &mesh = entry->mesh;
  int64_t ranks = mesh.size();
  if (mpi)
    if (absl::Status s = entry->checkMpiWorld(world.size); !s.ok())
      fail(s);

  if (!mpi || world.rank == 0)
    if (absl::Status s = prepareOutputDir(flags.outputDir); !s.ok())
      fail(s);

  // Which file feeds each argument.
  std::map<int, std::string> files;
  for (const auto &[key, file] : flags.inputs) {
    absl::StatusOr<int> index = argumentIndex(*entry, key);
    if (!index.ok())
      fail(index.status());
    if (files.count(*index))
      fail(absl::InvalidArgumentError(absl::StrCat(
          "--input gives ", entry->args[*index].label("argument"), " twice")));
    files[*index] = file;
  }
  for (const TensorSpec &arg : entry->args)
    if (!files.count(arg.index) && !flags.seed)
      fail(absl::InvalidArgumentError(absl::StrCat(
          entry->args[arg.index].label("argument"), " (",
          dtypeName(arg.dtype), ", shape ", shapeString(arg.shape),
          ") has no value: pass --input ",
          arg.name.empty() ? std::to_string(arg.index) : arg.name,
          "=FILE.npy or --seed N")));
  auto fileOf = [&](int index) -> const std::string * {
    auto it = files.find(index);
    return it == files.end() ? nullptr : &it->second;
  };

  RunOptions options;
  options.repeat = flags.repeat;
  options.timeout = absl::Seconds(flags.timeoutSeconds);
  options.profile = flags.profile;
  options.blasThreads = flags.blasThreads;
  options.kernelThreads = flags.kernelThreads;

  std::vector<HostTensor> globalArgs; // Kept when --verify needs them.
  std::vector<HostTensor> results;    // Global results (rank 0).
  RunStats stats;
  if (!mpi) {
    std::vector<RankBuffers> buffers(ranks);
    for (const TensorSpec &arg : entry->args) {
      absl::StatusOr<HostTensor> global =
          globalInput(arg, fileOf(arg.index), flags.seed);
      if (!global.ok())
        fail(global.status());
      for (int64_t r = 0; r < ranks; ++r)
        buffers[r].args.push_back(extractShard(*global, arg, mesh, r));
      if (flags.verify)
        globalArgs.push_back(std::move(*global));
    }
    for (int64_t r = 0; r < ranks; ++r)
      for (const TensorSpec &result : entry->results)
        buffers[r].results.emplace_back(result.dtype, localShape(result, mesh));
    absl::StatusOr<RunStats> run;
    if (cuda) {
      GpuPlacement placement = GpuPlacement::DeviceLocal;
      if (flags.gpus == "one-per-rank") {
        placement = GpuPlacement::OnePerRank;
      } else if (flags.gpus == "auto") {
        absl::StatusOr<int> gpus = plugin->deviceCount();
        if (!gpus.ok())
          fail(gpus.status());
        if (*gpus >= ranks)
          placement = GpuPlacement::OnePerRank;
      }
      run = plugin->runThreads(*spmd, *entry, buffers, options, placement);
    } else {
      run = runThreads(*spmd, *entry, buffers, options);
    }
    if (!run.ok())
      fail(run.status());
    stats = std::move(*run);
    for (const TensorSpec &result : entry->results) {
      std::vector<const HostTensor *> locals;
      for (int64_t r = 0; r < ranks; ++r)
        locals.push_back(&buffers[r].results[result.index]);
      absl::StatusOr<HostTensor> global = assembleGlobal(locals, result, mesh);
      if (!global.ok())
        fail(global.status());
      results.push_back(std::move(*global));
    }
  } else {
    // Each rank reads (or makes) only its own shards.
    RankBuffers mine;
    for (const TensorSpec &arg : entry->args) {
      HostTensor local(arg.dtype, localShape(arg, mesh));
      if (holdsZeros(arg, mesh, world.rank)) {
        // A P(sum) input lives on the first rank of its partial axes.
      } else if (const std::string *file = fileOf(arg.index)) {
        std::vector<int64_t> offset, shape;
        shardBox(arg, mesh, world.rank, offset, shape);
        if (absl::Status s = readNpyBox(
                *file, absl::StrCat("input for ", arg.label("argument")),
                arg.dtype, arg.shape, offset, shape, local);
            !s.ok())
          fail(s);
      } else {
        fillSeeded(local, arg, mesh, world.rank, *flags.seed);
      }
      mine.args.push_back(std::move(local));
    }
    for (const TensorSpec &result : entry->results)
      mine.results.emplace_back(result.dtype, localShape(result, mesh));
    absl::StatusOr<RunStats> run =
        cuda ? plugin->runMpiRank(*spmd, *entry, mine, options)
             : runMpiRank(*spmd, *entry, mine, options);
    if (!run.ok())
      fail(run.status());
    // Every rank's timings, on rank 0.
    HostTensor times(DType::F64, {flags.repeat});
    std::memcpy(times.data(), run->seconds[0].data(), times.byteSize());
    absl::StatusOr<std::vector<HostTensor>> allTimes = mpiGather(times, world);
    if (!allTimes.ok())
      fail(allTimes.status());
    for (size_t r = 0; r < allTimes->size(); ++r) {
      const double *t = static_cast<const double *>((*allTimes)[r].data());
      stats.ranks.push_back(r);
      stats.seconds.emplace_back(t, t + flags.repeat);
    }
    if (flags.profile)
      stats.profiles = mpiGatherProfiles(run->profiles[0], world);
    for (const TensorSpec &result : entry->results) {
      absl::StatusOr<std::vector<HostTensor>> all =
          mpiGather(mine.results[result.index], world);
      if (!all.ok())
        fail(all.status());
      if (world.rank != 0)
        continue;
      std::vector<const HostTensor *> locals;
      for (const HostTensor &t : *all)
        locals.push_back(&t);
      absl::StatusOr<HostTensor> global = assembleGlobal(locals, result, mesh);
      if (!global.ok())
        fail(global.status());
      results.push_back(std::move(*global));
    }
    if (world.rank == 0 && flags.verify)
      for (const TensorSpec &arg : entry->args) {
        absl::StatusOr<HostTensor> global =
            globalInput(arg, fileOf(arg.index), flags.seed);
        if (!global.ok())
          fail(global.status());
        globalArgs.push_back(std::move(*global));
      }
  }

  if (mpi && world.rank != 0) {
    mpiFinalize();
    return 0;
  }
  std::printf("dt-run: %s on %lld rank%s (%s backend), mesh %s",
              entry->name.c_str(), static_cast<long long>(ranks),
              ranks == 1 ? "" : "s", flags.backend.c_str(), mesh.str().c_str());
  if (!cuda)
    std::printf("; matmuls on %d OpenBLAS thread%s a rank, kernels on %d "
                "thread%s",
                blasThreads(), blasThreads() == 1 ? "" : "s", kernelThreads(),
                kernelThreads() == 1 ? "" : "s");
  std::printf("\n");
  printTiming(stats, flags.backend);
  if (flags.profile)
    printProfile(stats, flags.repeat, cuda, flags.profileRows.value_or(15));
  if (absl::Status s = writeResults(flags.outputDir, results); !s.ok())
    fail(s);

  int exitCode = 0;
  if (flags.verify) {
    absl::StatusOr<Artifact::EntryFn> reference =
        (*artifact)->referenceEntry(entry->name);
    if (!reference.ok())
      fail(reference.status());
    std::vector<HostTensor> expected;
    for (const TensorSpec &result : entry->results)
      expected.emplace_back(result.dtype, result.shape);
    // The reference is one rank: it may have every CPU.
    if (!cuda)
      setThreadsPerRank(options, 1);
    if (absl::Status s =
            cuda ? plugin->runReference(*reference, globalArgs, expected)
                 : runReference(*reference, globalArgs, expected);
        !s.ok())
      fail(s);
    std::printf("verify against the single-device reference:\n");
    if (entry->results.empty())
      std::printf("  (entry %s has no results: nothing to compare)\n",
                  entry->name.c_str());
    // The float results narrower than f64 beyond tolerance, for the judge;
    // any other result beyond it fails the run.
    std::vector<int> beyond;
    bool wrong = false;
    for (const TensorSpec &result : entry->results)
      if (!compareResult(result, results[result.index], expected[result.index],
                         flags)) {
        if (isNarrowFloat(result.dtype))
          beyond.push_back(result.index);
        else
          wrong = true;
      }
    bool pass = !wrong && beyond.empty();
    bool rounding = !wrong && !beyond.empty() && !flags.strict &&
                    judgeRounding(flags, **artifact, temporary, cuda, *entry,
                                  globalArgs, results, expected, beyond);
    if (rounding)
      std::printf("verify: PASS (%zu result%s beyond tolerance, as accurate "
                  "as the reference against f64)\n",
                  beyond.size(), beyond.size() == 1 ? "" : "s");
    else
      std::printf("verify: %s\n", pass ? "PASS" : "FAIL");
    if (!pass && !rounding)
      exitCode = 1;
  }
  std::fflush(stdout);
  if (mpi)
    mpiFinalize();
  return exitCode;
}
