//===- pair.cpp - Two artifacts timed call by call, side by side ----------===//
//
// dt-bench-pair A.so B.so [turns] [calls] [seed]
//
// Loads two CPU artifacts of the same program (compiled with different
// options), gives both the same seeded inputs, and calls them in turns in
// one process: A B, B A, A B, ... (the order flips every turn so that
// neither is always the one that runs after the other), `calls` calls each
// per turn, of which the turn keeps the best (the ranks' threads start
// apart in a turn's first call). Each turn sees the same machine: this
// machine's memory bandwidth wanders by tens of percent between processes, far
// more than the difference a compiler option makes, so separate dt-run
// processes cannot tell the two apart. Prints one line:
//
//   <best A s> <best B s> <median over turns of A/B> <elements that differ>
//
// The last field counts the elements of the global results (assembled from
// the ranks as dt-run assembles them) whose bits differ between one call of
// A and one of B: options that should not change what a program computes
// can be held to it.
//
// Both run on the same buffers: where a buffer lands in memory (huge pages
// or not, which cache sets) moves a memory-bound program's time by several
// percent, as much as the options being compared.
//
// The step of a call is its slowest rank's time, as dt-run reports it.
// Each rank's matmuls and kernels run on one thread (dt-run --blas-threads=1
// --kernel-threads=1), or as $DT_PAIR_THREADS_A and $DT_PAIR_THREADS_B say
// for each side: "B,K", B OpenBLAS threads and K kernel threads a rank (the
// same artifact twice then compares two thread counts).
//
//===----------------------------------------------------------------------===//

#include "dt/Runtime/Job.h"
#include "dt/Runtime/Program.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace dt::rt;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "dt-bench-pair: %s\n", message.c_str());
  std::exit(1);
}

template <typename T> T check(absl::StatusOr<T> value) {
  if (!value.ok())
    die(std::string(value.status().message()));
  return *std::move(value);
}

bool sameTensors(const std::vector<TensorSpec> &a,
                 const std::vector<TensorSpec> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dtype != b[i].dtype || a[i].shape != b[i].shape ||
        a[i].placements != b[i].placements)
      return false;
  return true;
}

/// One artifact ready to call.
struct Side {
  std::unique_ptr<Artifact> artifact;
  const EntrySpec *entry = nullptr;
  Artifact::EntryFn fn = nullptr;
  /// The OpenBLAS and kernel threads each rank runs on.
  int blasThreads = 1, kernelThreads = 1;

  /// Seconds of the best of `calls` calls on `ranks`; a call takes as long
  /// as its slowest rank.
  double best(std::vector<RankBuffers> &ranks, int calls) const {
    RunOptions options;
    options.repeat = calls;
    // By default one thread a rank for matmuls and kernels, as the
    // hand-written baselines have (the bits of a matmul depend on the
    // count, and so would the last field).
    options.blasThreads = blasThreads;
    options.kernelThreads = kernelThreads;
    RunStats stats = check(runThreads(fn, *entry, ranks, options));
    double best = 1e30;
    for (int i = 0; i < calls; ++i) {
      double slowest = 0;
      for (const std::vector<double> &seconds : stats.seconds)
        slowest = std::max(slowest, seconds.at(i));
      best = std::min(best, slowest);
    }
    return best;
  }
};

Side load(const std::string &path, const char *threadsVariable) {
  Side side;
  if (const char *threads = std::getenv(threadsVariable)) {
    std::vector<std::string> counts = absl::StrSplit(threads, ',');
    if (counts.size() != 2 || !absl::SimpleAtoi(counts[0], &side.blasThreads) ||
        !absl::SimpleAtoi(counts[1], &side.kernelThreads) ||
        side.blasThreads < 1 || side.kernelThreads < 1)
      die(absl::StrCat("$", threadsVariable,
                       " must be two positive counts, B,K; got '", threads,
                       "'"));
  }
  side.artifact = check(Artifact::open(path));
  if (side.artifact->spec().target != TargetKind::CPU)
    die(path + " is not a CPU artifact");
  if (side.artifact->spec().entries.empty())
    die(path + " has no entry");
  side.entry = &side.artifact->spec().entries.front();
  side.fn = check(side.artifact->spmdEntry(side.entry->name));
  return side;
}

/// Every rank's seeded arguments and room for its results.
std::vector<RankBuffers> buffersFor(const EntrySpec &entry, uint64_t seed) {
  const Mesh &mesh = entry.mesh;
  std::vector<RankBuffers> ranks(mesh.size());
  for (const TensorSpec &arg : entry.args) {
    HostTensor global(arg.dtype, arg.shape);
    fillSeeded(global, arg, Mesh{}, 0, seed);
    for (int64_t r = 0; r < mesh.size(); ++r)
      ranks[r].args.push_back(extractShard(global, arg, mesh, r));
  }
  for (int64_t r = 0; r < mesh.size(); ++r)
    for (const TensorSpec &result : entry.results)
      ranks[r].results.emplace_back(result.dtype, localShape(result, mesh));
  return ranks;
}

/// The global results of the last call on `ranks`.
std::vector<HostTensor> globalResults(const EntrySpec &entry,
                                      std::vector<RankBuffers> &ranks) {
  std::vector<HostTensor> results;
  for (const TensorSpec &result : entry.results) {
    std::vector<const HostTensor *> locals;
    for (RankBuffers &rank : ranks)
      locals.push_back(&rank.results[result.index]);
    results.push_back(check(assembleGlobal(locals, result, entry.mesh)));
  }
  return results;
}

/// How many elements of `a` and `b` (the same shapes) differ in their bits.
int64_t differing(const std::vector<HostTensor> &a,
                  const std::vector<HostTensor> &b) {
  int64_t count = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    size_t element = dtypeSize(a[i].dtype());
    const char *x = static_cast<const char *>(a[i].data());
    const char *y = static_cast<const char *>(b[i].data());
    for (int64_t k = 0; k < a[i].numElements(); ++k)
      count += std::memcmp(x + k * element, y + k * element, element) != 0;
  }
  return count;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3 || argc > 6)
    die("usage: dt-bench-pair A.so B.so [turns=40] [calls=1] [seed=1]");
  int turns = 40, calls = 1;
  uint64_t seed = 1;
  if (argc > 3 && (!absl::SimpleAtoi(argv[3], &turns) || turns < 1))
    die(absl::StrCat("turns must be a positive integer, got '", argv[3], "'"));
  if (argc > 4 && (!absl::SimpleAtoi(argv[4], &calls) || calls < 1))
    die(absl::StrCat("calls must be a positive integer, got '", argv[4], "'"));
  if (argc > 5 && !absl::SimpleAtoi(argv[5], &seed))
    die(absl::StrCat("seed must be an integer, got '", argv[5], "'"));

  Side a = load(argv[1], "DT_PAIR_THREADS_A"),
       b = load(argv[2], "DT_PAIR_THREADS_B");
  if (a.entry->mesh.shape != b.entry->mesh.shape ||
      !sameTensors(a.entry->args, b.entry->args) ||
      !sameTensors(a.entry->results, b.entry->results))
    die(absl::StrCat(argv[1], " and ", argv[2],
                     " are not the same program: their first entries differ "
                     "in mesh, arguments or results"));

  std::vector<RankBuffers> ranks = buffersFor(*a.entry, seed);
  // One turn each first (first touches of the results, caches), keeping
  // what each computed.
  a.best(ranks, calls);
  std::vector<HostTensor> fromA = globalResults(*a.entry, ranks);
  b.best(ranks, calls);
  int64_t differ = differing(fromA, globalResults(*b.entry, ranks));
  double bestA = 1e30, bestB = 1e30;
  std::vector<double> ratios;
  for (int turn = 0; turn < turns; ++turn) {
    double ta, tb;
    if (turn % 2) {
      tb = b.best(ranks, calls);
      ta = a.best(ranks, calls);
    } else {
      ta = a.best(ranks, calls);
      tb = b.best(ranks, calls);
    }
    bestA = std::min(bestA, ta);
    bestB = std::min(bestB, tb);
    ratios.push_back(ta / tb);
  }
  std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2,
                   ratios.end());
  std::printf("%.9g %.9g %.6f %lld\n", bestA, bestB, ratios[ratios.size() / 2],
              static_cast<long long>(differ));
  return 0;
}
