//===- Context.h - Ranks, groups and backends (internals) ---*- C++ -*-===//

#ifndef DT_RUNTIME_LIB_CONTEXT_H
#define DT_RUNTIME_LIB_CONTEXT_H

#include "dt/Runtime/Job.h"
#include "dt/Sharding/Placement.h"
#include "dt/Sharding/ShardLayout.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dt::rt {

/// A dense row-major array the generated code passed in.
struct Dense {
  void *data = nullptr;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  int64_t count() const { return numElements(shape); }
  size_t bytes() const { return count() * dtypeSize(dtype); }
};

/// The ranks that agree with a rank on every mesh axis outside `mask`,
/// ordered row-major over the axes in `mask`.
struct Group {
  int32_t mask = 0;
  int64_t key = 0;   ///< The members' common coordinates, as a linear rank.
  int64_t index = 0; ///< This rank's position in `members`.
  std::vector<int64_t> members;
  int64_t size() const { return members.size(); }
};

/// The first error of a job in this process; every waiter watches it.
class JobState {
public:
  /// Records `status` if it is the first error. Returns the first error.
  absl::Status fail(absl::Status status);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  absl::Status status() const;
  /// The mutex a backend's waits use, so that `fail` wakes them.
  absl::Mutex &mutex() { return mu_; }
  /// Called once, with the first error, by the thread that records it.
  void setOnFailure(std::function<void(const absl::Status &)> fn) {
    onFailure_ = std::move(fn);
  }

private:
  std::function<void(const absl::Status &)> onFailure_;
  mutable absl::Mutex mu_;
  std::atomic<bool> failed_{false};
  absl::Status first_;
};

class RankContext;

/// The pieces of one dim among a group's members: where each member's piece
/// lies relative to the region the group holds together (member order),
/// and how many valid elements that region has.
struct Pieces {
  std::vector<ChunkRange> member;
  int64_t region = 0;
};

/// Full pieces of `piece` elements, one per member, back to back.
Pieces fullPieces(int64_t piece, int64_t members);
/// torch.chunk pieces of a region of `extent` elements.
Pieces chunkPieces(int64_t extent, int64_t members);

/// One part of a dt.exchange as one rank sees it: a box that `member` (an
/// index in the group) sends or receives, where it lies in the sender's
/// input piece and where in the receiver's output piece.
struct ExchangeCopy {
  int64_t member = 0;
  std::vector<int64_t> from, to, shape;
  int64_t count() const { return numElements(shape); }
};

/// What one rank does in a dt.exchange: the parts it receives (its own
/// included, as a copy from itself) and those it sends to others.
struct ExchangeRoutes {
  std::vector<ExchangeCopy> receives, sends;
  /// The local shapes of every member's input and output (padded pieces).
  std::vector<int64_t> inShape, outShape;
  /// Whether the parts received leave some of the output (padding) unset.
  bool leavesPadding = false;
};

/// A backend's collectives, run by the calling rank on local buffers.
class Backend {
public:
  virtual ~Backend() = default;
  virtual absl::Status allReduce(RankContext &rank, const Group &group,
                                 const Dense &in, Dense &out,
                                 ReductionKind kind) = 0;
  /// `pieces`: where each member's piece goes along `dim`.
  virtual absl::Status allGather(RankContext &rank, const Group &group,
                                 const Dense &in, Dense &out, int dim,
                                 const Pieces &pieces) = 0;
  /// `pieces`: each member's piece of the input along `dim`.
  virtual absl::Status reduceScatter(RankContext &rank, const Group &group,
                                     const Dense &in, Dense &out,
                                     ReductionKind kind, int dim,
                                     const Pieces &pieces) = 0;
  virtual absl::Status allToAll(RankContext &rank, const Group &group,
                                const Dense &in, Dense &out, int split,
                                int concat, const Pieces &splitPieces,
                                const Pieces &concatPieces) = 0;
  /// Moves the parts of `routes` (ExchangeRoutes); every member's input is
  /// shaped like `in`.
  virtual absl::Status exchange(RankContext &rank, const Group &group,
                                const Dense &in, Dense &out,
                                const ExchangeRoutes &routes) = 0;
  /// This rank's piece of `in` along `dim` (no communication; it is the
  /// backend's because the backend knows where buffers live). The default
  /// copies host memory.
  virtual absl::Status localSlice(RankContext &rank, const Group &group,
                                  const Dense &in, Dense &out, int dim,
                                  const Pieces &pieces);
};

/// What --profile records of one run of a site (RankContext::record).
struct SiteRun {
  const char *site = nullptr; ///< Null: unnamed.
  bool compute = false;       ///< A kernel or matmul, not a collective.
  double model = -1;          ///< A collective's modelled seconds.
  int64_t bytesIn = 0, bytesOut = 0;
};

/// Times the work a device runs after the host queued it (a GPU rank's
/// stream): --profile brackets each kernel, matmul and collective with two
/// marks, and the device's rank reads them once the step's work is done.
class DeviceClock {
public:
  virtual ~DeviceClock() = default;
  /// A mark on the stream work is queued on now (null: none was made).
  virtual void *mark() = 0;
  /// The work queued between `start` and now is one run of `run`.
  virtual void measured(void *start, const SiteRun &run) = 0;
};

/// A kernel's chunks `first` to `end` on its arguments `args`
/// (dt-kernel-tasks).
using KernelTask = void (*)(void *args, int64_t first, int64_t end);
class KernelThreads;
/// Stops and frees a rank's KernelThreads (defined where they are).
struct KernelThreadsDeleter {
  void operator()(KernelThreads *threads) const;
};

/// One rank of a running job.
class RankContext {
public:
  RankContext(int64_t rank, const Mesh &mesh, Backend &backend, JobState &job,
              absl::Duration timeout);

  int64_t rank() const { return rank_; }
  /// Marks the context that runs the reference entry.
  void setReference() { reference_ = true; }
  /// Who the rank's errors name: "rank R" or "the single-device reference".
  std::string who() const;
  const std::vector<int64_t> &coords() const { return coords_; }
  const Mesh &mesh() const { return mesh_; }
  Backend &backend() { return backend_; }
  JobState &job() { return job_; }
  absl::Duration timeout() const { return timeout_; }
  /// The group of mesh axes `mask` this rank belongs to.
  const Group &group(int32_t mask);
  /// This rank's routes of the exchange `layout` describes (the text a
  /// dt.exchange passes, a constant of the artifact: computed once).
  absl::StatusOr<const ExchangeRoutes *> exchangeRoutes(const Group &group,
                                                        const char *layout);

  /// Whether collectives (and the kernels of an artifact compiled with
  /// --profile-kernels) are timed into `profile()` (RunOptions::profile).
  void setProfiling(bool on) { profiling_ = on; }
  bool profiling() const { return profiling_; }
  /// Adds one run that took `seconds`: a collective's, which the
  /// compiler's model expects to take `run.model` seconds (negative: none),
  /// or a kernel's or matmul's (dt_rt_kernel_done).
  void record(const SiteRun &run, double seconds);
  /// Where the rank's work runs after the host queued it, on a device
  /// whose clock times it (null: the host's work, timed as it runs).
  void setDeviceClock(DeviceClock *clock) { deviceClock_ = clock; }
  DeviceClock *deviceClock() const { return deviceClock_; }
  /// The collectives and kernels timed so far, in the order they first ran.
  const std::vector<SiteProfile> &profile() const { return profile_; }
  /// Forgets what was timed so far (the first, warm-up call of several).
  void clearProfile() {
    profile_.clear();
    siteIndex_.clear();
  }

  /// Counts a collective; fails the job when DT_FAULT_RANK/DT_FAULT_AT
  /// inject a fault here (docs/Runtime.md, "Fault injection").
  absl::Status enterCollective(absl::string_view name);
  /// After the entry returns: an injected fault that never met a
  /// collective fires now.
  absl::Status leaveEntry();
  /// Called after each call of the entry, before it is timed: a device
  /// backend waits there for the work the entry queued.
  void setAfterEntry(std::function<absl::Status()> fn) {
    afterEntry_ = std::move(fn);
  }
  absl::Status afterEntry() {
    return afterEntry_ ? afterEntry_() : absl::OkStatus();
  }

  /// Runs `task` on chunks [0, chunks) of a kernel of `work` operations
  /// (its iterations times the operations of one), on this rank's thread
  /// and as many of its kernel threads (kernelThreads()) as the work keeps
  /// busy; returns when all are done.
  void parallelFor(KernelTask task, void *args, int64_t chunks, int64_t work);
  /// The CPUs the rank's thread and kernel helpers keep to: its share of
  /// the machine's when several ranks share it (shareOfCpus); none: any
  /// the process may use.
  void setCpus(std::vector<int> cpus) { cpus_ = std::move(cpus); }
  const std::vector<int> &cpus() const { return cpus_; }

private:
  /// The profile of `site`, added (a collective's, or a kernel's when
  /// `compute`) the first time it runs.
  SiteProfile &siteProfile(const char *site, bool compute);

  int64_t rank_;
  std::vector<int64_t> coords_;
  const Mesh &mesh_;
  Backend &backend_;
  JobState &job_;
  absl::Duration timeout_;
  absl::flat_hash_map<int32_t, Group> groups_;
  absl::flat_hash_map<const char *, std::unique_ptr<ExchangeRoutes>> exchanges_;
  std::function<absl::Status()> afterEntry_;
  DeviceClock *deviceClock_ = nullptr;
  int64_t collectives_ = 0;
  int64_t faultRank_ = -1, faultAt_ = 0;
  bool faulted_ = false;
  bool profiling_ = false;
  bool reference_ = false;
  std::vector<SiteProfile> profile_;
  absl::flat_hash_map<const char *, size_t> siteIndex_;
  std::vector<int> cpus_;
  /// The helpers of parallelFor, started when first needed.
  std::unique_ptr<KernelThreads, KernelThreadsDeleter> kernelThreads_;
};

/// The whole number in the environment variable `name`, or `fallback` when
/// it is unset or not one (the runtime's test knobs, docs/Runtime.md).
int64_t envInt(const char *name, int64_t fallback);

/// The rank the calling thread runs (null outside an entry).
RankContext *currentRank();
/// One run of a site that --profile times (a collective, kernel or
/// matmul): on the rank's device clock when it has one (the host only
/// queues the work), else on the host's clock as it runs. Nothing when the
/// rank is not profiled.
class SiteTimer {
public:
  explicit SiteTimer(RankContext *rank);
  /// Whether the run is timed.
  bool active() const { return rank_ != nullptr; }
  /// The run is over (queued, on a device): it is one of `run`.
  void done(const SiteRun &run);

private:
  RankContext *rank_ = nullptr; ///< Null: not profiled.
  void *mark_ = nullptr;        ///< The device clock's mark at the start.
  absl::Time start_;            ///< The host's clock at the start (no mark).
};

/// Binds the calling thread to `rank` for the lifetime of the binding.
class RankBinding {
public:
  explicit RankBinding(RankContext *rank);
  ~RankBinding();

private:
  RankContext *previous_;
};

/// The threads backend (one thread per rank, buffers in host memory).
std::unique_ptr<Backend> makeThreadsBackend(JobState &job);

/// How many CPUs this process may run on (its affinity as it started).
int64_t usableCpus();
/// A spinning thread's pause between looks (x86's `pause`).
inline void cpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}
/// The usable CPUs shared out among `ranksHere` ranks, at least one each.
int cpusPerRank(int64_t ranksHere);
/// The CPUs this process may run on (as it started), in order; none if the
/// system does not say.
std::vector<int> usableCpuList();
/// Rank `localRank`'s share of `cpus` when `ranksHere` ranks on this
/// machine share them out: consecutive pieces of the list, whose sizes
/// differ by one at most. None when each rank would get fewer than two (no
/// CPU to spare for its kernel threads: the ranks go where the scheduler
/// and the threads backend's collectives put them) or when one rank has
/// them all.
std::vector<int> shareOfCpus(const std::vector<int> &cpus, int64_t localRank,
                             int64_t ranksHere);
/// The CPU of `cpus` (two or more) kernel helper `index` keeps to while the
/// rank's thread runs on `here`: the ones after `here` in the list, in
/// turn, never `here` itself (after the first when `here` is not there).
int helperCpu(const std::vector<int> &cpus, int here, int index);
/// Keeps the calling thread to `cpus` (none: leaves it as it is).
void keepToCpus(const std::vector<int> &cpus);

/// How runThreadsWith sets up a job and its rank threads.
struct ThreadJobHooks {
  /// The job's backend (default: the threads backend).
  std::function<std::unique_ptr<Backend>(JobState &)> makeBackend;
  /// On the rank's thread, before its first call (default: nothing).
  std::function<absl::Status(RankContext &)> enter;
  /// On the rank's thread, after its last call (default: nothing).
  std::function<void(RankContext &)> leave;
};

/// runThreads with the backend and per-thread setup of `hooks`.
absl::StatusOr<RunStats>
runThreadsWith(Artifact::EntryFn entry, const EntrySpec &spec,
               std::vector<std::vector<void *>> &buffers,
               const RunOptions &options, const ThreadJobHooks &hooks);

/// Binds the calling thread to `rank` and calls `entry` on `buffers`
/// (arguments, then results) `repeat` times, timing each call.
absl::Status callEntry(Artifact::EntryFn entry, RankContext &rank,
                       void **buffers, int repeat,
                       std::vector<double> &seconds);

/// The pieces of a dim of global `extent` split first over the axes in
/// `outer`, then over the group's (torch.chunk at each level), as `rank`'s
/// group sees them.
Pieces unevenPieces(RankContext &rank, const Group &group, int64_t extent,
                    int32_t outer);

/// Copies the first `at.size` elements along `dim` of `piece` (shaped like
/// `in`) to `at.offset` along `dim` of `out`.
void placePiece(const Dense &in, const void *piece, Dense &out, int dim,
                ChunkRange at);
/// Zeros `out` from `from` to the end along `dim`.
void zeroTail(Dense &out, int dim, int64_t from);
/// The piece `at` of `in` (data `data`) along `dim` into `out`, zero-padded
/// when short.
void slicePiece(const Dense &in, const void *data, Dense &out, int dim,
                ChunkRange at);
/// Member `index`'s part of `data` (shaped like `in`) for an all_to_all,
/// placed as member `from` sent it into `out`.
void exchangePart(const Dense &in, const void *data, Dense &out, int split,
                  int concat, const Pieces &splitPieces,
                  const Pieces &concatPieces, int64_t index, int64_t from);

/// Host memory from the cache behind CPU artifacts' buffers
/// (HostMemory.cpp): a large block freed is kept for the next request it
/// fits, so a buffer a collective stages every call is not faulted in
/// afresh each time.
void *allocateHost(size_t bytes);
void releaseHost(void *block);
struct ReleaseHost {
  void operator()(char *block) const { releaseHost(block); }
};
/// `bytes` of uninitialized host memory, released to the cache.
using HostBlock = std::unique_ptr<char[], ReleaseHost>;
inline HostBlock hostBlock(size_t bytes) {
  return HostBlock(static_cast<char *>(allocateHost(bytes)));
}

/// out = in combined over `count` elements of `inputs` (one per member).
void reduceArrays(DType dtype, void *out,
                  const std::vector<const void *> &inputs, int64_t count,
                  ReductionKind kind);
/// The same written to every one of `outs`, in one pass over the inputs
/// (an output may be one of the inputs). `partOf` is the bytes of the
/// outputs this call is one piece of (0: this call's alone, all outputs
/// together): large outputs stream past the cache, whether they come in one
/// call or as the runs of a strided piece. With `partOf`, the caller calls
/// fenceStreams() after the last piece, before another rank may read them.
void reduceArrays(DType dtype, const std::vector<void *> &outs,
                  const std::vector<const void *> &inputs, int64_t count,
                  ReductionKind kind, size_t partOf = 0);
/// Orders the streaming stores of this thread before its later stores.
void fenceStreams();

} // namespace dt::rt

#endif // DT_RUNTIME_LIB_CONTEXT_H
