//===- Threads.cpp - The threads backend ----------------------------------===//
//
// One thread per rank; a collective's members publish their buffers in the
// group's slot and each does its share of the work on the others' memory.
// Only the barriers take a lock (the job's mutex, which is also where a
// failure wakes every waiter); data moves with no lock held.
//
// Failure: a rank waiting at a collective's first barrier leaves as soon as
// the job fails (the missing member may never come). Once every member has
// passed that barrier, all of them are inside the collective, reading each
// other's buffers, so the later barriers wait for all of them: no rank can
// free a buffer another still reads. The timeout bounds every wait.
//
// A waiter first watches the slot's generation a while (spinning, or
// yielding its CPU when the job has more ranks than this process has CPUs),
// then sleeps on the mutex: waking a sleeping thread took 20-40 us on the
// machine dt is developed on, twice per collective, so a 128-byte all_gather
// between two ranks cost ~40 us.
//
// With a CPU for every rank, a rank that is about to wait for one on its own
// CPU moves to a free one and keeps to it. The scheduler puts a woken thread
// on the CPU of the thread that woke it, so two ranks can start out, or end
// up, sharing a CPU while the other one idles; there a spinning waiter keeps
// the rank it waits for from running until it gives up and sleeps, each
// wakes the other onto the same CPU again, and no balancing ever parts them:
// on the machine dt is developed on, about half the runs of two ranks
// began so, and many stayed so: eight all_gathers of 4 KiB took 890 us a
// call instead of 21 (bench/runtime.py item 12).
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <pthread.h>
#include <sched.h>
#include <system_error>
#include <thread>

namespace dt::rt {

namespace {
class ThreadsBackend : public Backend {
public:
  explicit ThreadsBackend(JobState &job) : job_(job) {}

  absl::Status allReduce(RankContext &rank, const Group &group, const Dense &in,
                         Dense &out, ReductionKind kind) override;
  absl::Status allGather(RankContext &rank, const Group &group, const Dense &in,
                         Dense &out, int dim, const Pieces &pieces) override;
  absl::Status reduceScatter(RankContext &rank, const Group &group,
                             const Dense &in, Dense &out, ReductionKind kind,
                             int dim, const Pieces &pieces) override;
  absl::Status allToAll(RankContext &rank, const Group &group, const Dense &in,
                        Dense &out, int split, int concat,
                        const Pieces &splitPieces,
                        const Pieces &concatPieces) override;
  absl::Status exchange(RankContext &rank, const Group &group, const Dense &in,
                        Dense &out, const ExchangeRoutes &routes) override;

private:
  /// Where one group's members meet.
  struct Slot {
    /// Written under the job's mutex; read without it by spinning waiters.
    std::atomic<uint64_t> generation{0};
    int64_t arrived = 0;
    std::vector<const void *> in;
    std::vector<void *> out;
  };

  /// Publishes this rank's buffers and waits for the group (abortable).
  absl::Status publish(RankContext &rank, const Group &group, Slot *&slot,
                       const void *in, void *out, absl::string_view what);
  /// Waits for every member (not abortable: all of them are inside).
  absl::Status barrier(RankContext &rank, const Group &group, Slot &slot,
                       absl::string_view what, bool abortable);

  /// Moves this rank to a CPU no rank was last seen on, if it shares its
  /// CPU with a member of `group` it is about to wait for (see the file
  /// comment).
  void leaveSharedCpu(RankContext &rank, const Group &group);

  JobState &job_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, std::unique_ptr<Slot>>
      slots_;
  /// The CPU each rank last arrived at a barrier on (-1: none yet); made
  /// under the mutex by the first publish, read without it after.
  std::unique_ptr<std::atomic<int>[]> cpus_;
};

absl::Status ThreadsBackend::publish(RankContext &rank, const Group &group,
                                     Slot *&slot, const void *in, void *out,
                                     absl::string_view what) {
  {
    absl::MutexLock lock(&job_.mutex());
    std::unique_ptr<Slot> &entry = slots_[{group.mask, group.key}];
    if (!entry) {
      entry = std::make_unique<Slot>();
      entry->in.resize(group.size());
      entry->out.resize(group.size());
    }
    if (!cpus_) {
      cpus_ = std::make_unique<std::atomic<int>[]>(rank.mesh().size());
      for (int64_t r = 0; r < rank.mesh().size(); ++r)
        cpus_[r].store(-1, std::memory_order_relaxed);
    }
    slot = entry.get();
    slot->in[group.index] = in;
    slot->out[group.index] = out;
  }
  return barrier(rank, group, *slot, what, /*abortable=*/true);
}

} // namespace

/// The CPUs this process may run on (as it started: a rank may keep to one
/// of them later), or none if the system does not say.
static const std::optional<cpu_set_t> &usableCpuSet() {
  static const std::optional<cpu_set_t> cpus =
      []() -> std::optional<cpu_set_t> {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
      return set;
    return std::nullopt;
  }();
  return cpus;
}

int64_t usableCpus() {
  static const int64_t cpus =
      usableCpuSet()
          ? CPU_COUNT(&*usableCpuSet())
          : static_cast<int64_t>(std::thread::hardware_concurrency());
  return cpus;
}

int cpusPerRank(int64_t ranksHere) {
  return static_cast<int>(
      std::max<int64_t>(1, usableCpus() / std::max<int64_t>(ranksHere, 1)));
}

std::vector<int> usableCpuList() {
  std::vector<int> cpus;
  if (usableCpuSet())
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &*usableCpuSet()))
        cpus.push_back(cpu);
  return cpus;
}

std::vector<int> shareOfCpus(const std::vector<int> &cpus, int64_t localRank,
                             int64_t ranksHere) {
  int64_t n = static_cast<int64_t>(cpus.size());
  if (ranksHere < 2 || n / ranksHere < 2 || localRank < 0 ||
      localRank >= ranksHere)
    return {};
  return std::vector<int>(cpus.begin() + localRank * n / ranksHere,
                          cpus.begin() + (localRank + 1) * n / ranksHere);
}

int helperCpu(const std::vector<int> &cpus, int here, int index) {
  auto at = std::find(cpus.begin(), cpus.end(), here);
  size_t from = at == cpus.end() ? 0 : at - cpus.begin();
  size_t others = cpus.size() - 1;
  return cpus[(from + 1 + index % others) % cpus.size()];
}

void keepToCpus(const std::vector<int> &cpus) {
  if (cpus.empty())
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus)
    CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

namespace {

/// Waits up to a bound, without sleeping, until `generation` leaves `from`
/// (or the job fails, when `abortable`); whether it did. With a CPU for
/// every rank the waiter spins; with more ranks than CPUs it yields its CPU
/// at each look instead, to a rank that may be the one it waits for.
static bool waitAwake(const std::atomic<uint64_t> &generation, uint64_t from,
                      const JobState &job, bool abortable, int64_t ranks) {
  constexpr auto kBound = std::chrono::microseconds(50);
  bool yield = ranks > usableCpus();
  auto until = std::chrono::steady_clock::now() + kBound;
  for (;;) {
    for (int i = 0; i < (yield ? 1 : 64); ++i) {
      if (generation.load(std::memory_order_acquire) != from ||
          (abortable && job.failed()))
        return true;
      if (yield)
        sched_yield();
      else
        cpuRelax();
    }
    if (std::chrono::steady_clock::now() > until)
      return false;
  }
}

void ThreadsBackend::leaveSharedCpu(RankContext &rank, const Group &group) {
  int64_t ranks = rank.mesh().size();
  if (!cpus_ || !usableCpuSet() || ranks > usableCpus())
    return;
  // Of the ranks that share a CPU, the lower ones stay: two that shared
  // one never both move (to the same free CPU).
  int mine = cpus_[rank.rank()].load(std::memory_order_relaxed);
  bool shared = false;
  for (int64_t member : group.members)
    shared |= member < rank.rank() &&
              cpus_[member].load(std::memory_order_relaxed) == mine;
  if (mine < 0 || !shared)
    return;
  // With a CPU for every rank, one is free.
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &*usableCpuSet()))
      continue;
    bool taken = false;
    for (int64_t r = 0; r < ranks && !taken; ++r)
      taken = cpus_[r].load(std::memory_order_relaxed) == cpu;
    if (taken)
      continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    // Claimed before moving: a rank still on the old CPU must not see
    // this one there.
    cpus_[rank.rank()].store(cpu, std::memory_order_relaxed);
    (void)pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    return;
  }
}

absl::Status ThreadsBackend::barrier(RankContext &rank, const Group &group,
                                     Slot &slot, absl::string_view what,
                                     bool abortable) {
  uint64_t generation;
  bool failed;
  if (cpus_)
    cpus_[rank.rank()].store(sched_getcpu(), std::memory_order_relaxed);
  {
    absl::MutexLock lock(&job_.mutex());
    failed = abortable && job_.failed();
    generation = slot.generation.load(std::memory_order_relaxed);
    if (!failed && ++slot.arrived == group.size()) {
      slot.arrived = 0;
      slot.generation.store(generation + 1, std::memory_order_release);
      return absl::OkStatus();
    }
  }
  // A failed job's status takes the mutex: read with it released.
  if (failed)
    return job_.status();
  leaveSharedCpu(rank, group);
  if (waitAwake(slot.generation, generation, job_, abortable,
                rank.mesh().size()) &&
      slot.generation.load(std::memory_order_acquire) != generation)
    return absl::OkStatus();
  bool arrived;
  {
    absl::MutexLock lock(&job_.mutex());
    auto done = [&] {
      return slot.generation.load(std::memory_order_relaxed) != generation ||
             (abortable && job_.failed());
    };
    job_.mutex().AwaitWithTimeout(absl::Condition(&done), rank.timeout());
    arrived = slot.generation.load(std::memory_order_relaxed) != generation;
    if (!arrived && !job_.failed()) {
      // Timed out: withdraw, so the count stays right for nobody.
      --slot.arrived;
    }
  }
  if (arrived)
    return absl::OkStatus();
  if (job_.failed())
    return job_.status();
  std::vector<std::string> axes;
  for (size_t axis = 0; axis < rank.mesh().axisNames.size(); ++axis)
    if (group.mask & (1 << axis))
      axes.push_back(rank.mesh().axisNames[axis]);
  return job_.fail(absl::DeadlineExceededError(absl::StrCat(
      "rank ", rank.rank(), ": timed out after ",
      absl::FormatDuration(rank.timeout()), " in ", what, " on mesh axes [",
      absl::StrJoin(axes, ", "), "] waiting for ranks {",
      absl::StrJoin(group.members, ", "), "}")));
}

absl::Status ThreadsBackend::allReduce(RankContext &rank, const Group &group,
                                       const Dense &in, Dense &out,
                                       ReductionKind kind) {
  Slot *slot;
  if (absl::Status s =
          publish(rank, group, slot, in.data, out.data, "all_reduce");
      !s.ok())
    return s;
  // Each member combines one chunk of every input and writes it to every
  // member's output: each input element is read once and each output
  // element written once, by one member (an output may be its input: a
  // chunk is read before it is written, and chunks are disjoint).
  int64_t n = group.size(), count = in.count();
  size_t element = dtypeSize(in.dtype);
  int64_t chunk = (count + n - 1) / n;
  int64_t lo = std::min(count, group.index * chunk);
  int64_t hi = std::min(count, lo + chunk);
  std::vector<const void *> inputs(n);
  std::vector<void *> outputs(n);
  for (int64_t j = 0; j < n; ++j) {
    inputs[j] = static_cast<const char *>(slot->in[j]) + lo * element;
    outputs[j] = static_cast<char *>(slot->out[j]) + lo * element;
  }
  if (hi > lo)
    reduceArrays(in.dtype, outputs, inputs, hi - lo, kind);
  return barrier(rank, group, *slot, "all_reduce", false);
}

absl::Status ThreadsBackend::allGather(RankContext &rank, const Group &group,
                                       const Dense &in, Dense &out, int dim,
                                       const Pieces &pieces) {
  Slot *slot;
  if (absl::Status s =
          publish(rank, group, slot, in.data, out.data, "all_gather");
      !s.ok())
    return s;
  for (int64_t j = 0; j < group.size(); ++j)
    placePiece(in, slot->in[j], out, dim, pieces.member[j]);
  zeroTail(out, dim, pieces.region);
  return barrier(rank, group, *slot, "all_gather", false);
}

absl::Status ThreadsBackend::reduceScatter(RankContext &rank,
                                           const Group &group, const Dense &in,
                                           Dense &out, ReductionKind kind,
                                           int dim, const Pieces &pieces) {
  Slot *slot;
  if (absl::Status s =
          publish(rank, group, slot, in.data, out.data, "reduce_scatter");
      !s.ok())
    return s;
  // The work is one run per (index o of the dims before `dim`, member j):
  // member j's piece of row o of every input, reduced into row o of member
  // j's output, whose tail past a short piece is zeros. The runs, in that
  // order, are dealt out in equal consecutive spans: with one row each
  // member reduces its own piece; with many rows each member reads whole
  // rows of the inputs, front to back. (Each member reducing its own piece
  // of every row reads the inputs in runs a row apart, which the hardware
  // prefetchers follow badly: 1.8x slower for 2 members at dim 1.)
  absl::Span<const int64_t> shape = in.shape;
  int64_t outer = numElements(shape.first(dim)),
          inner = numElements(shape.subspan(dim + 1));
  int64_t n = group.size(), runs = outer * n;
  int64_t first = group.index * runs / n, last = (group.index + 1) * runs / n;
  int64_t pieceRow = out.shape[dim] * inner;
  size_t element = dtypeSize(in.dtype);
  std::vector<const void *> inputs(n);
  std::vector<void *> to(1);
  // The runs stream past the cache when this member's share would.
  size_t share = static_cast<size_t>((last - first) * pieceRow) * element;
  for (int64_t r = first; r < last; ++r) {
    int64_t o = r / n, j = r % n;
    ChunkRange at = pieces.member[j];
    int64_t run = at.size * inner;
    for (int64_t k = 0; k < n; ++k)
      inputs[k] = static_cast<const char *>(slot->in[k]) +
                  ((o * in.shape[dim] + at.offset) * inner) * element;
    to[0] = static_cast<char *>(slot->out[j]) + o * pieceRow * element;
    if (run > 0)
      reduceArrays(in.dtype, to, inputs, run, kind, share);
    std::memset(static_cast<char *>(to[0]) + run * element, 0,
                (pieceRow - run) * element);
  }
  fenceStreams();
  return barrier(rank, group, *slot, "reduce_scatter", false);
}

absl::Status ThreadsBackend::allToAll(RankContext &rank, const Group &group,
                                      const Dense &in, Dense &out, int split,
                                      int concat, const Pieces &splitPieces,
                                      const Pieces &concatPieces) {
  Slot *slot;
  if (absl::Status s =
          publish(rank, group, slot, in.data, out.data, "all_to_all");
      !s.ok())
    return s;
  // Member j's part for this rank, placed where member j's piece goes.
  for (int64_t j = 0; j < group.size(); ++j)
    exchangePart(in, slot->in[j], out, split, concat, splitPieces, concatPieces,
                 group.index, j);
  zeroTail(out, concat, concatPieces.region);
  return barrier(rank, group, *slot, "all_to_all", false);
}

absl::Status ThreadsBackend::exchange(RankContext &rank, const Group &group,
                                      const Dense &in, Dense &out,
                                      const ExchangeRoutes &routes) {
  // Each rank copies the parts it receives straight out of the senders'
  // inputs (every member's is shaped like this rank's).
  if (routes.leavesPadding)
    std::memset(out.data, 0, out.bytes());
  Slot *slot;
  if (absl::Status s =
          publish(rank, group, slot, in.data, out.data, "exchange");
      !s.ok())
    return s;
  size_t element = dtypeSize(in.dtype);
  for (const ExchangeCopy &part : routes.receives)
    copyBox(slot->in[part.member], in.shape, part.from, out.data, out.shape,
            part.to, part.shape, element);
  return barrier(rank, group, *slot, "exchange", false);
}
} // namespace

absl::StatusOr<RunStats> runThreads(Artifact::EntryFn entry,
                                    const EntrySpec &spec,
                                    std::vector<RankBuffers> &ranks,
                                    const RunOptions &options) {
  std::vector<std::vector<void *>> buffers;
  for (RankBuffers &rank : ranks)
    buffers.push_back(rank.pointers());
  return runThreads(entry, spec, buffers, options);
}

std::unique_ptr<Backend> makeThreadsBackend(JobState &job) {
  return std::make_unique<ThreadsBackend>(job);
}

absl::StatusOr<RunStats> runThreads(Artifact::EntryFn entry,
                                    const EntrySpec &spec,
                                    std::vector<std::vector<void *>> &ranks,
                                    const RunOptions &options) {
  setThreadsPerRank(options, spec.mesh.size());
  return runThreadsWith(entry, spec, ranks, options, ThreadJobHooks());
}

absl::StatusOr<RunStats> runThreadsWith(Artifact::EntryFn entry,
                                        const EntrySpec &spec,
                                        std::vector<std::vector<void *>> &ranks,
                                        const RunOptions &options,
                                        const ThreadJobHooks &hooks) {
  int64_t n = spec.mesh.size();
  if (static_cast<int64_t>(ranks.size()) != n)
    return absl::InvalidArgumentError(
        absl::StrCat("the mesh ", spec.mesh.str(), " has ", n, " ranks but ",
                     ranks.size(), " sets of buffers were given"));
  // Shared with the rank threads, which may outlive this call (below).
  struct State {
    JobState job;
    std::unique_ptr<Backend> backend;
    ThreadJobHooks hooks;
    std::vector<std::unique_ptr<RankContext>> contexts;
    RunStats stats;
    absl::Mutex doneMutex;
    int64_t done = 0;
  };
  auto state = std::make_shared<State>();
  state->hooks = hooks;
  state->backend = hooks.makeBackend ? hooks.makeBackend(state->job)
                                     : makeThreadsBackend(state->job);
  state->stats.seconds.resize(n);
  std::vector<int> cpus = usableCpuList();
  for (int64_t r = 0; r < n; ++r) {
    state->contexts.push_back(std::make_unique<RankContext>(
        r, spec.mesh, *state->backend, state->job, options.timeout));
    state->contexts.back()->setProfiling(options.profile);
    state->contexts.back()->setCpus(shareOfCpus(cpus, r, n));
    state->stats.ranks.push_back(r);
  }
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) {
    // The system may refuse a thread (too many ranks for its limits): the
    // ranks already started see the job fail and return.
    try {
      threads.emplace_back(
          [state, entry, &buffers = ranks[r], r, repeat = options.repeat] {
            RankContext &context = *state->contexts[r];
            keepToCpus(context.cpus());
            absl::Status s = state->hooks.enter ? state->hooks.enter(context)
                                                : absl::OkStatus();
            if (s.ok())
              s = callEntry(entry, context, buffers.data(), repeat,
                            state->stats.seconds[r]);
            if (state->hooks.leave)
              state->hooks.leave(context);
            if (!s.ok())
              (void)state->job.fail(s);
            absl::MutexLock lock(&state->doneMutex);
            ++state->done;
          });
    } catch (const std::system_error &e) {
      (void)state->job.fail(absl::ResourceExhaustedError(absl::StrCat(
          "cannot start the thread of rank ", r, " of ", n, " (", e.what(),
          "): the threads backend runs one thread per rank; run fewer ranks "
          "on it, or use --backend=mpi")));
      break;
    }
  }
  // Wait for every rank; once the job has failed, give the others one
  // timeout to return. A rank that never returns (stuck outside any
  // collective) is abandoned: the job is over, and the caller is expected
  // to exit.
  bool allDone;
  int64_t started = static_cast<int64_t>(threads.size());
  {
    absl::MutexLock lock(&state->doneMutex);
    auto finished = [&] { return state->done == started; };
    auto finishedOrFailed = [&] {
      return state->done == started || state->job.failed();
    };
    state->doneMutex.Await(absl::Condition(&finishedOrFailed));
    if (state->done != started)
      state->doneMutex.AwaitWithTimeout(absl::Condition(&finished),
                                        options.timeout);
    allDone = state->done == started;
  }
  for (std::thread &t : threads) {
    if (allDone)
      t.join();
    else
      t.detach();
  }
  if (!allDone)
    return absl::DeadlineExceededError(absl::StrCat(
        state->job.status().message(),
        " (and some ranks did not return within ",
        absl::FormatDuration(options.timeout), " after the failure)"));
  if (state->job.failed())
    return state->job.status();
  if (options.profile)
    for (const std::unique_ptr<RankContext> &context : state->contexts)
      state->stats.profiles.push_back(context->profile());
  return std::move(state->stats);
}

absl::Status runReference(Artifact::EntryFn entry,
                          std::vector<HostTensor> &args,
                          std::vector<HostTensor> &results) {
  JobState job;
  ThreadsBackend backend(job);
  Mesh single;
  RankContext context(0, single, backend, job, absl::Seconds(1));
  context.setReference();
  RankBuffers buffers{std::move(args), std::move(results)};
  std::vector<double> seconds;
  absl::Status status =
      callEntry(entry, context, buffers.pointers().data(), 1, seconds);
  args = std::move(buffers.args);
  results = std::move(buffers.results);
  return status;
}

} // namespace dt::rt
