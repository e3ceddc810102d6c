//===- Jobs.cpp - Running CUDA artifacts: backends and jobs ---------------===//
//
// Two backends for ranks whose buffers live in device memory:
//
// - NCCL (one GPU per rank): a communicator per mesh-axis group, created the
//   first time the group meets and kept for the run; the unique id travels
//   through MPI (one process per rank) or through memory (one thread per
//   rank). All-reduce, and all-gather / reduce-scatter of whole pieces along
//   dim 0, are one NCCL call on the collective's stream. Other layouts
//   (another dim, uneven pieces) and all-to-all stay on the device too: the
//   pieces move between the tensors and staging buffers as 2-D copies
//   (PieceCopies.h) around one NCCL all-gather, reduce-scatter or group of
//   sends and receives. An exchange packs each peer's parts (unless they
//   are one run of the tensor) around one group of sends and receives.
// - Device-local (ranks sharing one GPU, for tests on a one-GPU machine):
//   the threads backend on host copies of the buffers.
//
// A step's end waits for the rank's stream while polling the job and NCCL's
// asynchronous errors; on a failure every communicator of the process is
// aborted so that no rank stays blocked in NCCL.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "PieceCopies.h"

#include "../Context.h"
#include "../ExchangeCopies.h"
#include "dt/Runtime/Cuda.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#define OMPI_SKIP_MPICXX 1 // The C API only.
#include <mpi.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

namespace dt::rt::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Staging between device and host
//===----------------------------------------------------------------------===//

absl::Status toHost(const Dense &device, HostTensor &host) {
  host = HostTensor(device.dtype, device.shape);
  if (host.byteSize() == 0)
    return absl::OkStatus();
  RankDevice *rank = currentDevice();
  DT_CU(cuMemcpyDtoHAsync(host.data(),
                          reinterpret_cast<CUdeviceptr>(device.data),
                          host.byteSize(), rank->stream()));
  DT_CU(cuStreamSynchronize(rank->stream()));
  return absl::OkStatus();
}

absl::Status toDevice(const HostTensor &host, const Dense &device) {
  if (host.byteSize() == 0)
    return absl::OkStatus();
  RankDevice *rank = currentDevice();
  DT_CU(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(device.data),
                          host.data(), host.byteSize(), rank->stream()));
  DT_CU(cuStreamSynchronize(rank->stream()));
  return absl::OkStatus();
}

Dense view(HostTensor &t) { return Dense{t.data(), t.shape(), t.dtype()}; }

CUdeviceptr devicePointer(const Dense &t) {
  return reinterpret_cast<CUdeviceptr>(t.data);
}

/// A planned 2-D copy between device buffers, on `stream`.
absl::Status copy2D(const Copy2D &plan, CUdeviceptr src, CUdeviceptr dst,
                    CUstream stream) {
  if (plan.empty())
    return absl::OkStatus();
  CUDA_MEMCPY2D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = src + plan.srcOffset;
  copy.srcPitch = plan.srcPitch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = dst + plan.dstOffset;
  copy.dstPitch = plan.dstPitch;
  copy.WidthInBytes = plan.width;
  copy.Height = plan.height;
  DT_CU(cuMemcpy2DAsync(&copy, stream));
  return absl::OkStatus();
}

/// Planned zeros in a device buffer, on `stream`.
absl::Status zero2D(const Zero2D &plan, CUdeviceptr dst, CUstream stream) {
  if (plan.empty())
    return absl::OkStatus();
  DT_CU(cuMemsetD2D8Async(dst + plan.offset, plan.pitch, 0, plan.width,
                          plan.height, stream));
  return absl::OkStatus();
}

/// The piece `at` along `dim` of a device tensor shaped `inShape` at `in`
/// into the device tensor shaped `outShape` at `out`, zero-padded when short.
absl::Status slicePieceOnDevice(const std::vector<int64_t> &inShape,
                                CUdeviceptr in,
                                const std::vector<int64_t> &outShape,
                                CUdeviceptr out, int dim, ChunkRange at,
                                size_t element, CUstream stream) {
  if (absl::Status s = copy2D(sliceCopy(inShape, outShape, dim, at, element),
                              in, out, stream);
      !s.ok())
    return s;
  return zero2D(
      tailZeros(outShape, dim, std::max<int64_t>(at.size, 0), element), out,
      stream);
}

/// A stream-ordered device buffer, freed (in stream order) when it goes.
class StagingBuffer {
public:
  explicit StagingBuffer(CUstream stream) : stream_(stream) {}
  StagingBuffer(const StagingBuffer &) = delete;
  StagingBuffer &operator=(const StagingBuffer &) = delete;
  ~StagingBuffer() {
    if (ptr_)
      cuMemFreeAsync(ptr_, stream_);
  }
  absl::Status allocate(size_t bytes) {
    if (bytes > 0)
      DT_CU(cuMemAllocAsync(&ptr_, bytes, stream_));
    return absl::OkStatus();
  }
  CUdeviceptr get() const { return ptr_; }

private:
  CUstream stream_;
  CUdeviceptr ptr_ = 0;
};

/// What both CUDA backends share: buffers in device memory.
class DeviceBackend : public Backend {
public:
  absl::Status localSlice(RankContext &rank, const Group &group,
                          const Dense &in, Dense &out, int dim,
                          const Pieces &pieces) override {
    return slicePieceOnDevice(in.shape, devicePointer(in), out.shape,
                              devicePointer(out), dim,
                              pieces.member[group.index], dtypeSize(in.dtype),
                              currentDevice()->stream());
  }
};

/// A backend on host copies of device buffers.
class StagedBackend : public DeviceBackend {
public:
  explicit StagedBackend(std::unique_ptr<Backend> host)
      : host_(std::move(host)) {}

  absl::Status allReduce(RankContext &rank, const Group &group, const Dense &in,
                         Dense &out, ReductionKind kind) override {
    return staged(in, out, [&](const Dense &hin, Dense &hout) {
      return host_->allReduce(rank, group, hin, hout, kind);
    });
  }
  absl::Status allGather(RankContext &rank, const Group &group, const Dense &in,
                         Dense &out, int dim, const Pieces &pieces) override {
    return staged(in, out, [&](const Dense &hin, Dense &hout) {
      return host_->allGather(rank, group, hin, hout, dim, pieces);
    });
  }
  absl::Status reduceScatter(RankContext &rank, const Group &group,
                             const Dense &in, Dense &out, ReductionKind kind,
                             int dim, const Pieces &pieces) override {
    return staged(in, out, [&](const Dense &hin, Dense &hout) {
      return host_->reduceScatter(rank, group, hin, hout, kind, dim, pieces);
    });
  }
  absl::Status allToAll(RankContext &rank, const Group &group, const Dense &in,
                        Dense &out, int split, int concat,
                        const Pieces &splitPieces,
                        const Pieces &concatPieces) override {
    return staged(in, out, [&](const Dense &hin, Dense &hout) {
      return host_->allToAll(rank, group, hin, hout, split, concat, splitPieces,
                             concatPieces);
    });
  }
  absl::Status exchange(RankContext &rank, const Group &group, const Dense &in,
                        Dense &out, const ExchangeRoutes &routes) override {
    return staged(in, out, [&](const Dense &hin, Dense &hout) {
      return host_->exchange(rank, group, hin, hout, routes);
    });
  }

private:
  template <typename Fn>
  absl::Status staged(const Dense &in, Dense &out, Fn &&collective) {
    HostTensor hin, hout(out.dtype, out.shape);
    if (absl::Status s = toHost(in, hin); !s.ok())
      return s;
    Dense hinView = view(hin), houtView = view(hout);
    if (absl::Status s = collective(hinView, houtView); !s.ok())
      return s;
    return toDevice(hout, out);
  }

  std::unique_ptr<Backend> host_;
};

//===----------------------------------------------------------------------===//
// NCCL
//===----------------------------------------------------------------------===//

absl::Status ncclError(ncclResult_t result, const char *what) {
  return absl::InternalError(
      absl::StrCat("NCCL: ", what, " failed: ", ncclGetErrorString(result)));
}
#define DT_NCCL(call)                                                          \
  do {                                                                         \
    ncclResult_t dtResult = (call);                                            \
    if (dtResult != ncclSuccess)                                               \
      return ncclError(dtResult, #call);                                       \
  } while (0)

/// Runs `calls` (sends and receives, returning the first result that is not
/// ncclSuccess) as one NCCL group, which ends even when a call fails.
template <typename Fn> absl::Status ncclGroup(Fn &&calls) {
  DT_NCCL(ncclGroupStart());
  ncclResult_t result = calls();
  ncclResult_t end = ncclGroupEnd();
  if (result != ncclSuccess)
    return ncclError(result, "a send or receive");
  if (end != ncclSuccess)
    return ncclError(end, "ncclGroupEnd");
  return absl::OkStatus();
}

ncclDataType_t ncclType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  case DType::I1:
    return ncclUint8;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return ncclSum;
  case ReductionKind::Avg:
    return ncclAvg;
  case ReductionKind::Max:
    return ncclMax;
  case ReductionKind::Min:
    return ncclMin;
  }
  return ncclSum;
}

/// How the members of a group agree on a communicator's unique id.
class Bootstrap {
public:
  virtual ~Bootstrap() = default;
  virtual absl::StatusOr<ncclUniqueId> share(RankContext &rank,
                                             const Group &group) = 0;
};

/// One process per rank: the group's MPI communicator broadcasts it.
class MpiBootstrap : public Bootstrap {
public:
  absl::StatusOr<ncclUniqueId> share(RankContext &rank,
                                     const Group &group) override {
    // Every rank reaches a group of the same axes at the same point of the
    // program, so the split is collective over the world as MPI needs.
    MPI_Comm comm;
    if (MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(group.key),
                       static_cast<int>(group.index), &comm) != MPI_SUCCESS)
      return absl::InternalError("MPI_Comm_split failed");
    ncclUniqueId id;
    if (group.index == 0)
      DT_NCCL(ncclGetUniqueId(&id));
    int rc = MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm);
    MPI_Comm_free(&comm);
    if (rc != MPI_SUCCESS)
      return absl::InternalError("MPI_Bcast of the NCCL id failed");
    return id;
  }
};

/// One thread per rank: the first member publishes it in memory.
class ThreadBootstrap : public Bootstrap {
public:
  explicit ThreadBootstrap(JobState &job) : job_(job) {}
  absl::StatusOr<ncclUniqueId> share(RankContext &rank,
                                     const Group &group) override {
    std::pair<int32_t, int64_t> key{group.mask, group.key};
    absl::MutexLock lock(&job_.mutex());
    if (group.index == 0) {
      ncclUniqueId id;
      DT_NCCL(ncclGetUniqueId(&id));
      ids_[key] = id;
      return id;
    }
    auto ready = [&] { return ids_.contains(key) || job_.failed(); };
    if (!job_.mutex().AwaitWithTimeout(absl::Condition(&ready), rank.timeout()))
      return absl::DeadlineExceededError(
          "timed out waiting for a group's NCCL id");
    if (job_.failed())
      return job_.status();
    return ids_[key];
  }

private:
  JobState &job_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, ncclUniqueId> ids_;
};

class NcclBackend : public DeviceBackend {
public:
  NcclBackend(std::unique_ptr<Bootstrap> bootstrap)
      : bootstrap_(std::move(bootstrap)) {}
  ~NcclBackend() override {
    absl::MutexLock lock(&mu_);
    for (auto &[key, comm] : comms_)
      ncclCommDestroy(comm);
  }

  /// Aborts every communicator (a rank failed: nobody may stay blocked).
  void abortAll() {
    absl::MutexLock lock(&mu_);
    for (auto &[key, comm] : comms_)
      ncclCommAbort(comm);
    comms_.clear();
  }

  /// The first asynchronous error of `rank`'s communicators.
  absl::Status asyncError(int64_t rank) {
    absl::MutexLock lock(&mu_);
    for (auto &[key, comm] : comms_) {
      if (key.first != rank)
        continue;
      ncclResult_t result;
      if (ncclCommGetAsyncError(comm, &result) == ncclSuccess &&
          result != ncclSuccess && result != ncclInProgress)
        return ncclError(result, "a collective");
    }
    return absl::OkStatus();
  }

  absl::Status allReduce(RankContext &rank, const Group &group, const Dense &in,
                         Dense &out, ReductionKind kind) override {
    absl::StatusOr<ncclComm_t> comm = communicator(rank, group);
    if (!comm.ok())
      return comm.status();
    DT_NCCL(ncclAllReduce(in.data, out.data, in.count(), ncclType(in.dtype),
                          ncclOp(kind), *comm,
                          currentDevice()->collectiveStream()));
    return absl::OkStatus();
  }

  absl::Status allGather(RankContext &rank, const Group &group, const Dense &in,
                         Dense &out, int dim, const Pieces &pieces) override {
    absl::StatusOr<ncclComm_t> comm = communicator(rank, group);
    if (!comm.ok())
      return comm.status();
    if (dim == 0 && wholePieces(pieces, in.shape.empty() ? 0 : in.shape[0],
                                out.shape.empty() ? 0 : out.shape[0])) {
      DT_NCCL(ncclAllGather(in.data, out.data, in.count(), ncclType(in.dtype),
                            *comm, currentDevice()->collectiveStream()));
      return absl::OkStatus();
    }
    // Every member's input, stacked, then each placed at its piece.
    CUstream stream = currentDevice()->collectiveStream();
    size_t bytes = in.bytes(), element = dtypeSize(in.dtype);
    StagingBuffer all(stream);
    if (absl::Status s = all.allocate(bytes * group.size()); !s.ok())
      return s;
    if (bytes > 0) {
      DT_NCCL(ncclAllGather(in.data, reinterpret_cast<void *>(all.get()), bytes,
                            ncclUint8, *comm, stream));
      for (int64_t j = 0; j < group.size(); ++j)
        if (absl::Status s = copy2D(
                placeCopy(in.shape, out.shape, dim, pieces.member[j], element),
                all.get() + j * bytes, devicePointer(out), stream);
            !s.ok())
          return s;
    }
    return zero2D(tailZeros(out.shape, dim, pieces.region, element),
                  devicePointer(out), stream);
  }

  absl::Status reduceScatter(RankContext &rank, const Group &group,
                             const Dense &in, Dense &out, ReductionKind kind,
                             int dim, const Pieces &mine) override {
    absl::StatusOr<ncclComm_t> comm = communicator(rank, group);
    if (!comm.ok())
      return comm.status();
    if (dim == 0 && wholePieces(mine, out.shape.empty() ? 0 : out.shape[0],
                                in.shape.empty() ? 0 : in.shape[0])) {
      DT_NCCL(ncclReduceScatter(in.data, out.data, out.count(),
                                ncclType(in.dtype), ncclOp(kind), *comm,
                                currentDevice()->collectiveStream()));
      return absl::OkStatus();
    }
    // This rank's input cut into every member's piece (zero-padded to the
    // output's shape), reduced and scattered by NCCL.
    CUstream stream = currentDevice()->collectiveStream();
    size_t piece = out.bytes(), element = dtypeSize(in.dtype);
    StagingBuffer staged(stream);
    if (absl::Status s = staged.allocate(piece * group.size()); !s.ok())
      return s;
    if (piece == 0)
      return absl::OkStatus();
    for (int64_t j = 0; j < group.size(); ++j)
      if (absl::Status s = slicePieceOnDevice(
              in.shape, devicePointer(in), out.shape, staged.get() + j * piece,
              dim, mine.member[j], element, stream);
          !s.ok())
        return s;
    DT_NCCL(ncclReduceScatter(reinterpret_cast<void *>(staged.get()), out.data,
                              out.count(), ncclType(in.dtype), ncclOp(kind),
                              *comm, stream));
    return absl::OkStatus();
  }

  absl::Status allToAll(RankContext &rank, const Group &group, const Dense &in,
                        Dense &out, int split, int concat,
                        const Pieces &splitPieces,
                        const Pieces &concatPieces) override {
    absl::StatusOr<ncclComm_t> comm = communicator(rank, group);
    if (!comm.ok())
      return comm.status();
    // Each member's part of this rank's input goes to it (a group of sends
    // and receives; every part is shaped like the input, but along `split`
    // like the output), and each part received goes to its place along
    // `concat`.
    CUstream stream = currentDevice()->collectiveStream();
    size_t element = dtypeSize(in.dtype);
    std::vector<int64_t> partShape = in.shape;
    partShape[split] = out.shape[split];
    size_t part = numElements(partShape) * element;
    StagingBuffer sent(stream), received(stream);
    if (absl::Status s = sent.allocate(part * group.size()); !s.ok())
      return s;
    if (absl::Status s = received.allocate(part * group.size()); !s.ok())
      return s;
    if (part > 0) {
      for (int64_t j = 0; j < group.size(); ++j)
        if (absl::Status s = slicePieceOnDevice(
                in.shape, devicePointer(in), partShape, sent.get() + j * part,
                split, splitPieces.member[j], element, stream);
            !s.ok())
          return s;
      if (absl::Status s = ncclGroup([&] {
            ncclResult_t r = ncclSuccess;
            for (int64_t j = 0; j < group.size() && r == ncclSuccess; ++j) {
              int peer = static_cast<int>(j);
              r = ncclSend(reinterpret_cast<void *>(sent.get() + j * part),
                           part, ncclUint8, peer, *comm, stream);
              if (r == ncclSuccess)
                r = ncclRecv(
                    reinterpret_cast<void *>(received.get() + j * part), part,
                    ncclUint8, peer, *comm, stream);
            }
            return r;
          });
          !s.ok())
        return s;
      for (int64_t j = 0; j < group.size(); ++j)
        if (absl::Status s =
                copy2D(placeCopy(partShape, out.shape, concat,
                                 concatPieces.member[j], element),
                       received.get() + j * part, devicePointer(out), stream);
            !s.ok())
          return s;
    }
    return zero2D(tailZeros(out.shape, concat, concatPieces.region, element),
                  devicePointer(out), stream);
  }

  absl::Status exchange(RankContext &rank, const Group &group, const Dense &in,
                        Dense &out, const ExchangeRoutes &routes) override {
    absl::StatusOr<ncclComm_t> comm = communicator(rank, group);
    if (!comm.ok())
      return comm.status();
    // The rank's own parts copied on the device; for each other member, the
    // parts packed into one send (or sent in place when they are one run of
    // the input) and received likewise, all in one group of sends and
    // receives.
    CUstream stream = currentDevice()->collectiveStream();
    const ExchangeCopies &plan = copiesOf(routes, group, in.dtype);
    CUdeviceptr input = devicePointer(in), output = devicePointer(out);
    StagingBuffer sent(stream), received(stream);
    if (absl::Status s = sent.allocate(plan.sendStaging); !s.ok())
      return s;
    if (absl::Status s = received.allocate(plan.receiveStaging); !s.ok())
      return s;
    if (routes.leavesPadding && out.bytes() > 0)
      DT_CU(cuMemsetD8Async(output, 0, out.bytes(), stream));
    for (const Copy2D &copy : plan.own)
      if (absl::Status s = copy2D(copy, input, output, stream); !s.ok())
        return s;
    for (const ExchangeTransfer &t : plan.sends)
      for (const Copy2D &copy : t.copies)
        if (absl::Status s = copy2D(copy, input, sent.get(), stream); !s.ok())
          return s;
    auto at = [](const ExchangeTransfer &t, CUdeviceptr tensor,
                 CUdeviceptr staging) {
      return reinterpret_cast<void *>((t.inPlace ? tensor : staging) +
                                      t.offset);
    };
    if (absl::Status s = ncclGroup([&] {
          ncclResult_t r = ncclSuccess;
          for (const ExchangeTransfer &t : plan.sends)
            if (r == ncclSuccess)
              r = ncclSend(at(t, input, sent.get()), t.bytes, ncclUint8,
                           static_cast<int>(t.member), *comm, stream);
          for (const ExchangeTransfer &t : plan.receives)
            if (r == ncclSuccess)
              r = ncclRecv(at(t, output, received.get()), t.bytes, ncclUint8,
                           static_cast<int>(t.member), *comm, stream);
          return r;
        });
        !s.ok())
      return s;
    for (const ExchangeTransfer &t : plan.receives)
      for (const Copy2D &copy : t.copies)
        if (absl::Status s = copy2D(copy, received.get(), output, stream);
            !s.ok())
          return s;
    return absl::OkStatus();
  }

private:
  /// The device copies of a rank's exchange routes for elements of
  /// `dtype`, planned on the first call (the routes are the rank's, kept
  /// for the run; call sites of two dtypes may share them).
  const ExchangeCopies &copiesOf(const ExchangeRoutes &routes,
                                 const Group &group, DType dtype) {
    size_t element = dtypeSize(dtype);
    absl::MutexLock lock(&mu_);
    std::unique_ptr<ExchangeCopies> &plan = exchangeCopies_[{&routes, element}];
    if (!plan)
      plan = std::make_unique<ExchangeCopies>(
          planExchangeCopies(routes, group.index, element));
    return *plan;
  }

  /// Member j's piece is rows [j * piece, (j + 1) * piece) of `whole` rows.
  static bool wholePieces(const Pieces &pieces, int64_t piece, int64_t whole) {
    int64_t n = pieces.member.size();
    if (whole != n * piece || pieces.region != whole)
      return false;
    for (int64_t j = 0; j < n; ++j)
      if (!(pieces.member[j] == ChunkRange{j * piece, piece}))
        return false;
    return true;
  }

  absl::StatusOr<ncclComm_t> communicator(RankContext &rank,
                                          const Group &group) {
    std::pair<int64_t, int32_t> key{rank.rank(), group.mask};
    {
      absl::MutexLock lock(&mu_);
      if (auto it = comms_.find(key); it != comms_.end())
        return it->second;
    }
    absl::StatusOr<ncclUniqueId> id = bootstrap_->share(rank, group);
    if (!id.ok())
      return id.status();
    ncclComm_t comm;
    DT_NCCL(ncclCommInitRank(&comm, static_cast<int>(group.size()), *id,
                             static_cast<int>(group.index)));
    absl::MutexLock lock(&mu_);
    comms_[key] = comm;
    return comm;
  }

  std::unique_ptr<Bootstrap> bootstrap_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::pair<int64_t, int32_t>, ncclComm_t>
      comms_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::pair<const ExchangeRoutes *, size_t>,
                      std::unique_ptr<ExchangeCopies>>
      exchangeCopies_ ABSL_GUARDED_BY(mu_);
};

//===----------------------------------------------------------------------===//
// Device buffers and jobs
//===----------------------------------------------------------------------===//

absl::StatusOr<int> deviceCount() {
  if (absl::Status s = initDriver(); !s.ok())
    return s;
  int count = 0;
  DT_CU(cuDeviceGetCount(&count));
  return count;
}

/// One rank's device and its copies of the rank's buffers.
struct DeviceRank {
  std::unique_ptr<RankDevice> device;
  std::vector<CUdeviceptr> buffers;
  std::vector<void *> pointers;

  ~DeviceRank() {
    if (!device)
      return;
    cuCtxSetCurrent(device->context());
    for (CUdeviceptr b : buffers)
      if (b)
        cuMemFree(b);
  }
};

/// `host`'s buffers copied to (arguments) or zeroed on (results) the device
/// `deviceIndex`, in `rank`. Every copy and fill is queued on the rank's own
/// stream and waited for: on the legacy default stream they would not be
/// ordered with that stream (CU_STREAM_NON_BLOCKING), and a result's zeros
/// once landed after the kernels that wrote it.
absl::Status upload(int deviceIndex, RankBuffers &host, DeviceRank &rank) {
  absl::StatusOr<std::unique_ptr<RankDevice>> device =
      RankDevice::create(deviceIndex);
  if (!device.ok())
    return device.status();
  rank.device = std::move(*device);
  CUstream stream = rank.device->stream();
  auto add = [&](HostTensor &t, bool copy) -> absl::Status {
    CUdeviceptr ptr = 0;
    if (t.byteSize() > 0) {
      DT_CU(cuMemAlloc(&ptr, t.byteSize()));
      rank.buffers.push_back(ptr);
      if (copy)
        DT_CU(cuMemcpyHtoDAsync(ptr, t.data(), t.byteSize(), stream));
      else
        DT_CU(cuMemsetD8Async(ptr, 0, t.byteSize(), stream));
    }
    rank.pointers.push_back(reinterpret_cast<void *>(ptr));
    return absl::OkStatus();
  };
  for (HostTensor &t : host.args)
    if (absl::Status s = add(t, true); !s.ok())
      return s;
  for (HostTensor &t : host.results)
    if (absl::Status s = add(t, false); !s.ok())
      return s;
  DT_CU(cuStreamSynchronize(stream));
  return absl::OkStatus();
}

/// The rank's results copied back to `host`, on the rank's stream after its
/// work.
absl::Status download(DeviceRank &rank, RankBuffers &host) {
  DT_CU(cuCtxSetCurrent(rank.device->context()));
  CUstream stream = rank.device->stream();
  size_t first = host.args.size();
  for (size_t i = 0; i < host.results.size(); ++i) {
    HostTensor &t = host.results[i];
    if (t.byteSize() > 0)
      DT_CU(cuMemcpyDtoHAsync(
          t.data(), reinterpret_cast<CUdeviceptr>(rank.pointers[first + i]),
          t.byteSize(), stream));
  }
  DT_CU(cuStreamSynchronize(stream));
  return absl::OkStatus();
}

/// Waits for the rank's stream, watching the job and the communicators. A
/// failed wait aborts the communicators, so that no rank is left waiting on
/// this one, and fails the job.
absl::Status waitForStream(RankContext &rank, RankDevice &device,
                           NcclBackend *nccl) {
  absl::Status status = device.wait(rank.timeout(), [&]() -> absl::Status {
    if (rank.job().failed())
      return rank.job().status();
    return nccl ? nccl->asyncError(rank.rank()) : absl::OkStatus();
  });
  if (status.ok())
    return status;
  if (nccl)
    nccl->abortAll();
  return rank.job().fail(status);
}

/// How `rank` waits for its device: inside a step, where the host needs a
/// value (dt_rt_gpu_read_scalar), and at the step's end, where --profile's
/// marks are read.
void watchDevice(RankContext &rank, RankDevice &device, NcclBackend *nccl) {
  device.setHostWait(
      [&rank, &device, nccl] { return waitForStream(rank, device, nccl); });
  rank.setDeviceClock(&device);
  rank.setAfterEntry([&rank, &device, nccl]() -> absl::Status {
    if (absl::Status s = waitForStream(rank, device, nccl); !s.ok())
      return s;
    device.resetCollectives();
    if (absl::Status s = device.takeTimings(rank); !s.ok())
      return rank.job().fail(s);
    if (rank.job().failed())
      return rank.job().status();
    return absl::OkStatus();
  });
}

absl::StatusOr<RunStats> runThreadsOnGpus(Artifact::EntryFn entry,
                                          const EntrySpec &spec,
                                          std::vector<RankBuffers> &ranks,
                                          const RunOptions &options,
                                          GpuPlacement placement) {
  absl::StatusOr<int> count = deviceCount();
  if (!count.ok())
    return count.status();
  int64_t n = spec.mesh.size();
  if (*count == 0)
    return absl::FailedPreconditionError("no CUDA device is visible");
  if (placement == GpuPlacement::OnePerRank && *count < n)
    return absl::FailedPreconditionError(absl::StrCat(
        "entry ", spec.name, " runs on the mesh ", spec.mesh.str(), " of ", n,
        " ranks, one GPU each, but ", *count,
        " GPUs are visible (NCCL refuses two ranks on one GPU): use "
        "--gpus=device-local to run every rank on GPU 0"));
  std::vector<DeviceRank> devices(n);
  for (int64_t r = 0; r < n; ++r)
    if (absl::Status s = upload(placement == GpuPlacement::OnePerRank ? r : 0,
                                ranks[r], devices[r]);
        !s.ok())
      return s;
  std::vector<std::vector<void *>> pointers;
  for (DeviceRank &d : devices)
    pointers.push_back(d.pointers);

  NcclBackend *nccl = nullptr;
  std::vector<std::unique_ptr<DeviceBinding>> bindings(n);
  ThreadJobHooks hooks;
  hooks.makeBackend = [&](JobState &job) -> std::unique_ptr<Backend> {
    if (placement == GpuPlacement::DeviceLocal)
      return std::make_unique<StagedBackend>(makeThreadsBackend(job));
    auto backend =
        std::make_unique<NcclBackend>(std::make_unique<ThreadBootstrap>(job));
    nccl = backend.get();
    return backend;
  };
  hooks.enter = [&](RankContext &rank) {
    RankDevice &device = *devices[rank.rank()].device;
    bindings[rank.rank()] = std::make_unique<DeviceBinding>(&device);
    watchDevice(rank, device, nccl);
    return absl::OkStatus();
  };
  hooks.leave = [&](RankContext &rank) { bindings[rank.rank()].reset(); };
  absl::StatusOr<RunStats> stats =
      runThreadsWith(entry, spec, pointers, options, hooks);
  if (!stats.ok())
    return stats;
  for (int64_t r = 0; r < n; ++r)
    if (absl::Status s = download(devices[r], ranks[r]); !s.ok())
      return s;
  return stats;
}

int localRank() {
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 0;
}

absl::StatusOr<RunStats> runMpiRankOnGpu(Artifact::EntryFn entry,
                                         const EntrySpec &spec,
                                         RankBuffers &mine,
                                         const RunOptions &options) {
  int worldRank = 0, worldSize = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (absl::Status s = spec.checkMpiWorld(worldSize); !s.ok())
    return s;
  absl::StatusOr<int> count = deviceCount();
  if (!count.ok())
    return count.status();
  int local = localRank();
  if (local >= *count)
    return absl::FailedPreconditionError(absl::StrCat(
        "local rank ", local, " has no GPU of its own (", *count,
        " visible; NCCL refuses two ranks on one GPU): run one process per "
        "GPU, or every rank in one process with --gpus=device-local"));
  DeviceRank device;
  if (absl::Status s = upload(local, mine, device); !s.ok())
    return s;
  JobState job;
  job.setOnFailure([](const absl::Status &status) { mpiAbort(status); });
  NcclBackend backend(std::make_unique<MpiBootstrap>());
  RankContext context(worldRank, spec.mesh, backend, job, options.timeout);
  DeviceBinding binding(device.device.get());
  watchDevice(context, *device.device, &backend);
  RunStats stats;
  stats.ranks.push_back(worldRank);
  stats.seconds.emplace_back();
  if (absl::Status s = callEntry(entry, context, device.pointers.data(),
                                 options.repeat, stats.seconds[0]);
      !s.ok())
    mpiAbort(s);
  if (absl::Status s = download(device, mine); !s.ok())
    mpiAbort(s);
  return stats;
}

absl::Status runReferenceOnGpu(Artifact::EntryFn entry,
                               std::vector<HostTensor> &args,
                               std::vector<HostTensor> &results) {
  RankBuffers buffers{std::move(args), std::move(results)};
  DeviceRank device;
  absl::Status status = upload(0, buffers, device);
  if (status.ok()) {
    JobState job;
    std::unique_ptr<Backend> backend = makeThreadsBackend(job);
    Mesh single;
    RankContext context(0, single, *backend, job, absl::Seconds(600));
    context.setReference();
    DeviceBinding binding(device.device.get());
    watchDevice(context, *device.device, nullptr);
    std::vector<double> seconds;
    status = callEntry(entry, context, device.pointers.data(), 1, seconds);
    if (status.ok())
      status = download(device, buffers);
  }
  args = std::move(buffers.args);
  results = std::move(buffers.results);
  return status;
}

const CudaPlugin kPlugin{&deviceCount, &runThreadsOnGpus, &runMpiRankOnGpu,
                         &runReferenceOnGpu};
} // namespace
} // namespace dt::rt::cuda

extern "C" const dt::rt::CudaPlugin *dt_cuda_plugin(void) {
  return &dt::rt::cuda::kPlugin;
}
