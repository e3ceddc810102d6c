//===- Job.h - Running an entry on every rank -------------------*- C++ -*-===//
//
// A job runs one entry of an artifact on the ranks of its mesh, through one
// backend: `threads` (one thread per rank in this process) or `mpi` (one
// process per rank). The first error of any rank ends the job: every other
// rank's collectives return at once (or after the timeout, for a rank that
// never arrives), and the job reports that first error.
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_JOB_H
#define DT_RUNTIME_JOB_H

#include "dt/Runtime/Program.h"
#include "dt/Runtime/Tensor.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include <string>
#include <vector>

namespace dt::rt {

struct RunOptions {
  /// How long a rank waits in a collective for the others.
  absl::Duration timeout = absl::Seconds(60);
  /// Calls of the entry; each is timed.
  int repeat = 1;
  /// Time every collective of the host backends by its site
  /// (RunStats::profiles).
  bool profile = false;
  /// The threads each rank's CPU matmuls run on (OpenBLAS); 0:
  /// $OPENBLAS_NUM_THREADS when set, else the CPUs this process may use,
  /// shared out among the ranks that run on this machine (at least one
  /// each).
  int blasThreads = 0;
  /// The threads each rank's large CPU kernels are shared out among (the
  /// rank's own and helpers; dt-parallel-kernels); 0: the CPUs this process
  /// may use, shared out among the ranks that run on this machine.
  int kernelThreads = 0;
};

/// One rank's buffers: local shards of the arguments, room for the results.
struct RankBuffers {
  std::vector<HostTensor> args, results;
  /// What an entry takes: the arguments' data, then the results'.
  std::vector<void *> pointers();
};

/// One collective of the program on one rank, or one of its kernels or
/// matmuls (an artifact compiled with --profile-kernels), over every time it
/// ran (in a loop, once per iteration) in every call of the entry.
struct SiteProfile {
  /// How the artifact names it: "all_gather on [dp] dim 0 (m.mlir:12:8)",
  /// "generic (m.mlir:20:8)".
  std::string site;
  /// A kernel or a matmul (the program's own work), not a collective.
  bool compute = false;
  int64_t runs = 0;
  /// Seconds from entering the collective to leaving it: the transfer, and
  /// the wait for the group's last rank to arrive.
  double seconds = 0;
  /// The rank's input and output buffers, per run.
  int64_t bytesIn = 0, bytesOut = 0;
  /// The compiler's alpha-beta estimate of one run (negative: none).
  double modelSeconds = -1;
};

/// Seconds per call of the entry, for each rank this process ran.
struct RunStats {
  std::vector<int64_t> ranks;
  std::vector<std::vector<double>> seconds;
  /// With RunOptions::profile: each rank's collectives, in the order they
  /// first ran, over every call of the entry but the first when there were
  /// several (it warms up: first touches, threads starting apart).
  std::vector<std::vector<SiteProfile>> profiles;
};

//===----------------------------------------------------------------------===//
// Layout: global tensors <-> the shards of each rank
//===----------------------------------------------------------------------===//

/// The local shape a rank allocates for `spec` (shards padded to the chunk
/// size; equal to every rank's shard when the sharding is even).
std::vector<int64_t> localShape(const TensorSpec &spec, const Mesh &mesh);
/// The box of the global tensor that `rank` holds.
void shardBox(const TensorSpec &spec, const Mesh &mesh, int64_t rank,
              std::vector<int64_t> &offset, std::vector<int64_t> &shape);
/// True when `rank` holds zeros for a global value: a P(sum) input is
/// given to the first rank of each partial axis, the others hold zeros (so
/// the sum is the value). P(avg), P(max), P(min) inputs are on every rank.
bool holdsZeros(const TensorSpec &spec, const Mesh &mesh, int64_t rank);
/// Rank `rank`'s shard of `global` (zeros where `holdsZeros`).
HostTensor extractShard(const HostTensor &global, const TensorSpec &spec,
                        const Mesh &mesh, int64_t rank);
/// The global value of a result from every rank's local value (one per rank,
/// in rank order): shards are placed, partial values reduced.
absl::StatusOr<HostTensor> assembleGlobal(absl::Span<const HostTensor *const> locals,
                                          const TensorSpec &spec,
                                          const Mesh &mesh);

/// Deterministic input values for `--seed`: element i of argument `arg` is a
/// function of (seed, arg, i) alone, so each rank can make just its shard.
/// Floats are uniform in [-1, 1), integers in [-8, 8].
void fillSeeded(HostTensor &local, const TensorSpec &spec, const Mesh &mesh,
                int64_t rank, uint64_t seed);

//===----------------------------------------------------------------------===//
// Backends
//===----------------------------------------------------------------------===//

/// Runs `entry` on every rank of `spec.mesh` in this process, one thread per
/// rank; `ranks` holds one RankBuffers per rank.
absl::StatusOr<RunStats> runThreads(Artifact::EntryFn entry,
                                    const EntrySpec &spec,
                                    std::vector<RankBuffers> &ranks,
                                    const RunOptions &options);
/// The same on raw buffers: `buffers[r]` is what rank r's entry takes.
absl::StatusOr<RunStats> runThreads(Artifact::EntryFn entry,
                                    const EntrySpec &spec,
                                    std::vector<std::vector<void *>> &buffers,
                                    const RunOptions &options);

/// The BLAS that CPU matmuls run in this process, for --profile:
/// "OpenBLAS 0.3.21, its Haswell kernels (OPENBLAS_CORETYPE=Haswell)".
/// OpenBLAS picks its kernels for the CPU when it loads, unless
/// OPENBLAS_CORETYPE names them; the runtime takes them as they are.
std::string blasKernels();

/// Sets the threads OpenBLAS runs each matmul on, for the whole process
/// (the runtime loads with one). OpenBLAS starts the threads it lacks on the
/// calling thread, whose CPU affinity they inherit: call it where no rank
/// has pinned itself. A matmul's bits depend on how it is split, so on the
/// count: the same count gives the same bits on any machine.
void setBlasThreads(int threads);
/// The threads OpenBLAS runs each matmul on now.
int blasThreads();
/// `requested` when positive; else $OPENBLAS_NUM_THREADS when it is a
/// positive count; else the CPUs this process may use shared out among
/// `ranksHere` ranks, at least one each.
int blasThreadsFor(int requested, int64_t ranksHere);

/// Sets the threads (the rank's own and helpers) each rank shares the
/// chunks of its large kernels among, for the whole process (1 when the
/// runtime loads). The chunks write disjoint elements: the bits do not
/// depend on the count.
void setKernelThreads(int threads);
/// The threads each rank's kernels are shared out among now.
int kernelThreads();
/// `requested` when positive; else the CPUs this process may use shared
/// out among `ranksHere` ranks, at least one each.
int kernelThreadsFor(int requested, int64_t ranksHere);
/// Sets both counts from `options` for `ranksHere` ranks on this machine.
void setThreadsPerRank(const RunOptions &options, int64_t ranksHere);

/// Runs the reference entry (the whole program on this thread).
absl::Status runReference(Artifact::EntryFn entry,
                          std::vector<HostTensor> &args,
                          std::vector<HostTensor> &results);

/// The MPI world of this process (MPI_Init on first use).
struct MpiWorld {
  int rank = 0;
  int size = 1;
};
absl::StatusOr<MpiWorld> mpiInit(int *argc, char ***argv);
void mpiFinalize();
/// Aborts every process of the job with `status`'s message (MPI_Abort).
[[noreturn]] void mpiAbort(const absl::Status &status);
/// Runs `entry` as rank `world.rank` of `spec.mesh`.
absl::StatusOr<RunStats> runMpiRank(Artifact::EntryFn entry,
                                    const EntrySpec &spec, RankBuffers &mine,
                                    const RunOptions &options);
/// Rank 0's `bytes`, or its error, on every rank of the job (`bytes` is
/// read on rank 0 only). The other ranks wait asleep, not spinning.
absl::StatusOr<std::string>
mpiBroadcast(const absl::StatusOr<std::string> &bytes, const MpiWorld &world);
/// Gathers every rank's `local` on rank 0 (empty elsewhere).
absl::StatusOr<std::vector<HostTensor>> mpiGather(const HostTensor &local,
                                                  const MpiWorld &world);
/// Gathers every rank's profile on rank 0, in rank order (empty elsewhere).
std::vector<std::vector<SiteProfile>>
mpiGatherProfiles(const std::vector<SiteProfile> &local, const MpiWorld &world);

} // namespace dt::rt

#endif // DT_RUNTIME_JOB_H
