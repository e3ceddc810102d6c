//===- Mpi.cpp - The mpi backend ------------------------------------------===//
//
// One process per rank under mpirun. Each mesh-axis group is an MPI
// communicator (MPI_Comm_split of the world, made once per job for every
// subset of axes, in the same order on every rank). Collectives move bytes
// (MPI_BYTE) and combine locally, so every dtype and reduction kind works
// the same way; f32/f64/i32/i64 sums, maxima and minima use MPI_Allreduce.
// An exchange sends one message to each member it trades with.
//
// MPI counts are ints: a message of 2 GiB or more goes as one derived type
// of exactly its bytes, and an MPI_Allreduce of more elements than an int
// counts as several calls (DT_MPI_MESSAGE_LIMIT lowers the limit, so that
// tests take these paths with small tensors).
//
// Failure: the first error of a rank aborts the whole job (MPI_Abort) with
// its message; a watchdog thread aborts a rank stuck in one collective past
// the timeout.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "ExchangeCopies.h"
#include "dt/Sharding/ShardLayout.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

// The C API only: Open MPI's header otherwise drags in its C++ bindings.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <thread>

namespace dt::rt {

absl::StatusOr<MpiWorld> mpiInit(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(argc, argv) != MPI_SUCCESS)
    return absl::UnavailableError("MPI_Init failed");
  MpiWorld world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  return world;
}

void mpiFinalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

void mpiAbort(const absl::Status &status) {
  std::fprintf(stderr, "dt-run: error: %s\n", std::string(status.message()).c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

namespace {
/// The most one count of an MPI call may say: an int's largest, or less
/// from DT_MPI_MESSAGE_LIMIT (a test knob; a value out of range is ignored).
size_t messageLimit() {
  static const size_t limit = [] {
    int64_t value = envInt("DT_MPI_MESSAGE_LIMIT", INT_MAX);
    return static_cast<size_t>(value >= 1 && value <= INT_MAX ? value
                                                              : INT_MAX);
  }();
  return limit;
}

/// `bytes` bytes as the count and datatype of one MPI call: that many
/// MPI_BYTEs while the count fits messageLimit(); past it, one element of a
/// derived type of exactly `bytes` bytes (whole blocks of up to 1 MiB, then
/// the rest), freed with this object. Its extent is `bytes`, so member j's
/// part of an Allgather or Alltoall buffer still starts at j * bytes.
class ByteCount {
public:
  explicit ByteCount(size_t bytes) {
    size_t limit = messageLimit();
    if (bytes <= limit) {
      count = static_cast<int>(bytes);
      return;
    }
    size_t block = std::min<size_t>(limit, 1 << 20);
    MPI_Datatype blocks, parts;
    MPI_Type_contiguous(static_cast<int>(block), MPI_BYTE, &blocks);
    int lengths[] = {static_cast<int>(bytes / block),
                     static_cast<int>(bytes % block)};
    MPI_Aint displacements[] = {0,
                                static_cast<MPI_Aint>(bytes - bytes % block)};
    MPI_Datatype types[] = {blocks, MPI_BYTE};
    MPI_Type_create_struct(2, lengths, displacements, types, &parts);
    MPI_Type_create_resized(parts, 0, static_cast<MPI_Aint>(bytes), &type);
    MPI_Type_commit(&type);
    MPI_Type_free(&parts);
    MPI_Type_free(&blocks);
    count = 1;
  }
  ~ByteCount() {
    if (type != MPI_BYTE)
      MPI_Type_free(&type);
  }
  ByteCount(const ByteCount &) = delete;
  ByteCount &operator=(const ByteCount &) = delete;

  int count = 0;
  MPI_Datatype type = MPI_BYTE;
};

/// The tag of an exchange's messages. A pair's messages on one communicator
/// arrive in the order they were sent, and each exchange waits for all of
/// its own, so consecutive exchanges cannot mix.
constexpr int kExchangeTag = 1;

class MpiBackend : public Backend {
public:
  MpiBackend(const Mesh &mesh, int64_t rank, absl::Duration timeout);
  ~MpiBackend() override;

  absl::Status allReduce(RankContext &rank, const Group &group,
                         const Dense &in, Dense &out,
                         ReductionKind kind) override;
  absl::Status allGather(RankContext &rank, const Group &group,
                         const Dense &in, Dense &out, int dim,
                         const Pieces &pieces) override;
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
  /// Marks the time a collective started, for the watchdog.
  struct Watch {
    explicit Watch(MpiBackend &b, absl::string_view what) : backend(b) {
      backend.what_ = what;
      backend.since_.store(absl::ToUnixNanos(absl::Now()));
    }
    ~Watch() { backend.since_.store(0); }
    MpiBackend &backend;
  };

  MPI_Comm comm(const Group &group) { return comms_.at(group.mask); }
  /// Every member's `bytes` bytes, member j at j * bytes of the result.
  HostBlock gather(const Group &group, const void *data, size_t bytes);

  absl::flat_hash_map<int32_t, MPI_Comm> comms_;
  int64_t rank_;
  absl::Duration timeout_;
  std::atomic<int64_t> since_{0};
  absl::string_view what_;
  std::atomic<bool> stop_{false};
  std::thread watchdog_;
};

MpiBackend::MpiBackend(const Mesh &mesh, int64_t rank, absl::Duration timeout)
    : rank_(rank), timeout_(timeout) {
  // One split per non-empty subset of axes, in the same order everywhere.
  std::vector<int64_t> coords =
      mesh.shape.empty() ? std::vector<int64_t>{} : meshCoords(mesh.shape, rank);
  for (int32_t mask = 1; mask < (1 << mesh.shape.size()); ++mask) {
    std::vector<int64_t> key = coords, position;
    int64_t index = 0;
    for (size_t axis = 0; axis < coords.size(); ++axis)
      if (mask & (1 << axis)) {
        key[axis] = 0;
        index = index * mesh.shape[axis] + coords[axis];
      }
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(linearRank(mesh.shape, key)),
                   static_cast<int>(index), &comm);
    comms_[mask] = comm;
  }
  watchdog_ = std::thread([this] {
    while (!stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      int64_t since = since_.load();
      if (since && absl::Now() - absl::FromUnixNanos(since) > timeout_)
        mpiAbort(absl::DeadlineExceededError(absl::StrCat(
            "rank ", rank_, ": timed out after ", absl::FormatDuration(timeout_),
            " in ", what_, " waiting for the other ranks of its group")));
    }
  });
}

MpiBackend::~MpiBackend() {
  stop_.store(true);
  watchdog_.join();
  for (auto &[mask, comm] : comms_)
    MPI_Comm_free(&comm);
}

HostBlock MpiBackend::gather(const Group &group, const void *data,
                             size_t bytes) {
  HostBlock all = hostBlock(bytes * group.size());
  ByteCount each(bytes);
  MPI_Allgather(data, each.count, each.type, all.get(), each.count, each.type,
                comm(group));
  return all;
}

absl::Status MpiBackend::allReduce(RankContext &, const Group &group,
                                   const Dense &in, Dense &out,
                                   ReductionKind kind) {
  Watch watch(*this, "all_reduce");
  MPI_Datatype type = MPI_DATATYPE_NULL;
  switch (in.dtype) {
  case DType::F32: type = MPI_FLOAT; break;
  case DType::F64: type = MPI_DOUBLE; break;
  case DType::I32: type = MPI_INT32_T; break;
  case DType::I64: type = MPI_INT64_T; break;
  default: break;
  }
  if (type != MPI_DATATYPE_NULL && kind != ReductionKind::Avg) {
    MPI_Op op = kind == ReductionKind::Sum   ? MPI_SUM
                : kind == ReductionKind::Max ? MPI_MAX
                                             : MPI_MIN;
    // As many elements per call as a count may say; in place when the
    // output is the input (MPI forbids the same buffer twice).
    size_t element = dtypeSize(in.dtype);
    int64_t step = std::max<int64_t>(1, messageLimit() / element);
    for (int64_t at = 0; at < in.count(); at += step) {
      const char *from = static_cast<const char *>(in.data) + at * element;
      char *to = static_cast<char *>(out.data) + at * element;
      MPI_Allreduce(from == to ? MPI_IN_PLACE : from, to,
                    static_cast<int>(std::min(step, in.count() - at)), type, op,
                    comm(group));
    }
    return absl::OkStatus();
  }
  HostBlock all = gather(group, in.data, in.bytes());
  std::vector<const void *> inputs;
  for (int64_t j = 0; j < group.size(); ++j)
    inputs.push_back(all.get() + j * in.bytes());
  reduceArrays(in.dtype, out.data, inputs, in.count(), kind);
  return absl::OkStatus();
}

absl::Status MpiBackend::allGather(RankContext &, const Group &group,
                                   const Dense &in, Dense &out, int dim,
                                   const Pieces &pieces) {
  Watch watch(*this, "all_gather");
  HostBlock all = gather(group, in.data, in.bytes());
  for (int64_t j = 0; j < group.size(); ++j)
    placePiece(in, all.get() + j * in.bytes(), out, dim, pieces.member[j]);
  zeroTail(out, dim, pieces.region);
  return absl::OkStatus();
}

absl::Status MpiBackend::reduceScatter(RankContext &, const Group &group,
                                       const Dense &in, Dense &out,
                                       ReductionKind kind, int dim,
                                       const Pieces &pieces) {
  Watch watch(*this, "reduce_scatter");
  // Piece j of the input goes to member j; each reduces what it receives.
  int64_t n = group.size();
  size_t piece = out.bytes();
  HostBlock send = hostBlock(piece * n), receive = hostBlock(piece * n);
  for (int64_t j = 0; j < n; ++j) {
    Dense part{send.get() + j * piece, out.shape, in.dtype};
    slicePiece(in, in.data, part, dim, pieces.member[j]);
  }
  ByteCount each(piece);
  MPI_Alltoall(send.get(), each.count, each.type, receive.get(), each.count,
               each.type, comm(group));
  std::vector<const void *> inputs;
  for (int64_t j = 0; j < n; ++j)
    inputs.push_back(receive.get() + j * piece);
  reduceArrays(in.dtype, out.data, inputs, out.count(), kind);
  return absl::OkStatus();
}

absl::Status MpiBackend::allToAll(RankContext &, const Group &group,
                                  const Dense &in, Dense &out, int split,
                                  int concat, const Pieces &splitPieces,
                                  const Pieces &concatPieces) {
  Watch watch(*this, "all_to_all");
  // Send member j its torch.chunk piece along `split`; place what member j
  // sends where its piece goes along `concat`.
  int64_t n = group.size();
  std::vector<int64_t> part = in.shape;
  part[split] = out.shape[split];
  size_t bytes = numElements(part) * dtypeSize(in.dtype);
  HostBlock send = hostBlock(bytes * n), receive = hostBlock(bytes * n);
  for (int64_t j = 0; j < n; ++j) {
    Dense piece{send.get() + j * bytes, part, in.dtype};
    slicePiece(in, in.data, piece, split, splitPieces.member[j]);
  }
  ByteCount each(bytes);
  MPI_Alltoall(send.get(), each.count, each.type, receive.get(), each.count,
               each.type, comm(group));
  for (int64_t j = 0; j < n; ++j) {
    Dense piece{receive.get() + j * bytes, part, in.dtype};
    placePiece(piece, piece.data, out, concat, concatPieces.member[j]);
  }
  zeroTail(out, concat, concatPieces.region);
  return absl::OkStatus();
}

absl::Status MpiBackend::exchange(RankContext &, const Group &group,
                                  const Dense &in, Dense &out,
                                  const ExchangeRoutes &routes) {
  Watch watch(*this, "exchange");
  // ExchangeCopies.h's plan: one message each way per member that trades
  // with this rank (point to point rather than MPI_Alltoallv, whose
  // pairwise algorithms spend a round on every member of the group, trading
  // or not), the rank's own parts and the padding written while they fly.
  ExchangeCopies plan =
      planExchangeCopies(routes, group.index, dtypeSize(in.dtype));
  HostBlock send = hostBlock(std::max<size_t>(1, plan.sendStaging));
  HostBlock receive = hostBlock(std::max<size_t>(1, plan.receiveStaging));
  for (const ExchangeTransfer &t : plan.sends)
    for (const Copy2D &copy : t.copies)
      copyRows(copy, in.data, send.get());
  // Padding is zeroed before anything may arrive in the output itself.
  if (routes.leavesPadding)
    std::memset(out.data, 0, out.bytes());
  std::vector<MPI_Request> requests;
  std::deque<ByteCount> counts; // Kept until the messages are done.
  for (const ExchangeTransfer &t : plan.receives) {
    const ByteCount &each = counts.emplace_back(t.bytes);
    MPI_Irecv((t.inPlace ? static_cast<char *>(out.data) : receive.get()) +
                  t.offset,
              each.count, each.type, static_cast<int>(t.member), kExchangeTag,
              comm(group), &requests.emplace_back());
  }
  for (const ExchangeTransfer &t : plan.sends) {
    const ByteCount &each = counts.emplace_back(t.bytes);
    MPI_Isend((t.inPlace ? static_cast<const char *>(in.data) : send.get()) +
                  t.offset,
              each.count, each.type, static_cast<int>(t.member), kExchangeTag,
              comm(group), &requests.emplace_back());
  }
  for (const Copy2D &copy : plan.own)
    copyRows(copy, in.data, out.data);
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
              MPI_STATUSES_IGNORE);
  for (const ExchangeTransfer &t : plan.receives)
    for (const Copy2D &copy : t.copies)
      copyRows(copy, receive.get(), out.data);
  return absl::OkStatus();
}
} // namespace

absl::StatusOr<RunStats> runMpiRank(Artifact::EntryFn entry,
                                    const EntrySpec &spec, RankBuffers &mine,
                                    const RunOptions &options) {
  MpiWorld world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  if (absl::Status s = spec.checkMpiWorld(world.size); !s.ok())
    return s;
  // The ranks on this machine share its CPUs (those this process may use:
  // one, when mpirun binds each rank to a core).
  MPI_Comm node;
  int ranksHere = 1, localRank = 0;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world.rank,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &ranksHere);
    MPI_Comm_rank(node, &localRank);
    MPI_Comm_free(&node);
  }
  setThreadsPerRank(options, ranksHere);
  JobState job;
  job.setOnFailure([](const absl::Status &status) { mpiAbort(status); });
  MpiBackend backend(spec.mesh, world.rank, options.timeout);
  RankContext context(world.rank, spec.mesh, backend, job, options.timeout);
  context.setProfiling(options.profile);
  // Ranks that mpirun did not bind apart (--bind-to none or socket) each
  // keep to a share of the CPUs they may all use, as the threads backend's
  // ranks do, and so do their kernel helpers.
  context.setCpus(shareOfCpus(usableCpuList(), localRank, ranksHere));
  keepToCpus(context.cpus());
  RunStats stats;
  stats.ranks.push_back(world.rank);
  stats.seconds.emplace_back();
  if (absl::Status s =
          callEntry(entry, context, mine.pointers().data(), options.repeat,
                    stats.seconds[0]);
      !s.ok())
    mpiAbort(s);
  if (options.profile)
    stats.profiles.push_back(context.profile());
  return stats;
}

absl::StatusOr<std::vector<HostTensor>> mpiGather(const HostTensor &local,
                                                  const MpiWorld &world) {
  std::vector<char> all(world.rank == 0 ? local.byteSize() * world.size : 0);
  ByteCount each(local.byteSize());
  MPI_Gather(local.data(), each.count, each.type, all.data(), each.count,
             each.type, 0, MPI_COMM_WORLD);
  std::vector<HostTensor> result;
  if (world.rank != 0)
    return result;
  for (int r = 0; r < world.size; ++r) {
    result.emplace_back(local.dtype(), local.shape());
    std::memcpy(result.back().data(), all.data() + r * local.byteSize(),
                local.byteSize());
  }
  return result;
}

absl::StatusOr<std::string>
mpiBroadcast(const absl::StatusOr<std::string> &bytes, const MpiWorld &world) {
  // A header (rank 0's status code, then the payload's length), then the
  // payload: the bytes, or the error's message.
  const std::string &payload =
      bytes.ok() ? *bytes : std::string(bytes.status().message());
  int64_t header[2] = {static_cast<int64_t>(bytes.status().raw_code()),
                       static_cast<int64_t>(payload.size())};
  // The others wait for the header asleep: a blocking MPI call spins, and
  // on a machine with more ranks than cores the spinning ranks would take
  // the cores from rank 0's work (compiling the program, with a thread per
  // core).
  MPI_Request request;
  MPI_Ibcast(header, 2, MPI_INT64_T, 0, MPI_COMM_WORLD, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string received =
      world.rank == 0 ? payload : std::string(header[1], '\0');
  ByteCount count(received.size());
  MPI_Bcast(received.data(), count.count, count.type, 0, MPI_COMM_WORLD);
  if (header[0] != 0)
    return absl::Status(static_cast<absl::StatusCode>(header[0]), received);
  return received;
}

namespace {
template <typename T> void put(std::string &bytes, const T &value) {
  bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
}
template <typename T> T take(const char *&at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  at += sizeof(T);
  return value;
}
} // namespace

std::vector<std::vector<SiteProfile>>
mpiGatherProfiles(const std::vector<SiteProfile> &local,
                  const MpiWorld &world) {
  // Each rank's sites as bytes: (name length, name, runs, seconds, bytes in,
  // bytes out, model, compute) back to back; the lengths first, then the
  // bytes.
  std::string bytes;
  for (const SiteProfile &site : local) {
    put(bytes, static_cast<uint64_t>(site.site.size()));
    bytes += site.site;
    put(bytes, site.runs);
    put(bytes, site.seconds);
    put(bytes, site.bytesIn);
    put(bytes, site.bytesOut);
    put(bytes, site.modelSeconds);
    put(bytes, static_cast<int64_t>(site.compute));
  }
  int size = static_cast<int>(bytes.size());
  std::vector<int> sizes(world.rank == 0 ? world.size : 0),
      offsets(sizes.size());
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = total;
    total += sizes[r];
  }
  std::vector<char> all(total);
  MPI_Gatherv(bytes.data(), size, MPI_BYTE, all.data(), sizes.data(),
              offsets.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  std::vector<std::vector<SiteProfile>> profiles;
  for (size_t r = 0; r < sizes.size(); ++r) {
    std::vector<SiteProfile> &sites = profiles.emplace_back();
    const char *at = all.data() + offsets[r], *end = at + sizes[r];
    while (at < end) {
      SiteProfile &site = sites.emplace_back();
      auto length = take<uint64_t>(at);
      site.site.assign(at, length);
      at += length;
      site.runs = take<int64_t>(at);
      site.seconds = take<double>(at);
      site.bytesIn = take<int64_t>(at);
      site.bytesOut = take<int64_t>(at);
      site.modelSeconds = take<double>(at);
      site.compute = take<int64_t>(at) != 0;
    }
  }
  return profiles;
}

} // namespace dt::rt
