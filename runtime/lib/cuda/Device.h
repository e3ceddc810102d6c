//===- Device.h - A rank's GPU (CUDA runtime internals) ---------*- C++ -*-===//

#ifndef DT_RUNTIME_LIB_CUDA_DEVICE_H
#define DT_RUNTIME_LIB_CUDA_DEVICE_H

#include "../Context.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include <cublasLt.h>
#include <cuda.h>

#include <functional>
#include <vector>

namespace dt::rt::cuda {

/// `what` failed with `result`, as a status naming both.
absl::Status driverError(CUresult result, const char *what);
#define DT_CU(call)                                                            \
  do {                                                                         \
    CUresult dtResult = (call);                                                \
    if (dtResult != CUDA_SUCCESS)                                              \
      return ::dt::rt::cuda::driverError(dtResult, #call);                     \
  } while (0)

/// The GPU state of one rank: its context (the device's primary context),
/// the one stream all of its work goes to, and its cuBLASLt handle. Its
/// clock times the rank's kernels, matmuls and collectives under --profile
/// with events on the stream they run on.
class RankDevice : public DeviceClock {
public:
  static absl::StatusOr<std::unique_ptr<RankDevice>> create(int device);
  ~RankDevice() override;

  int device() const { return device_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_; }
  /// The stream collectives run on: the communication stream between
  /// beginCollectives() and endCollectives(), else the rank's stream.
  CUstream collectiveStream() const {
    return inCollectives_ ? commStream_ : stream_;
  }
  /// Collectives from now on run on the communication stream, after the
  /// work queued on the rank's stream so far.
  absl::Status beginCollectives();
  /// Ends the bracket; the handle names the point the rank's stream will
  /// wait for (waitCollectives).
  absl::StatusOr<int64_t> endCollectives();
  absl::Status waitCollectives(int64_t handle);
  /// A step is over (its stream waited for): events may be reused.
  void resetCollectives() { nextEvent_ = 0; }
  cublasLtHandle_t lt() const { return lt_; }
  CUdeviceptr workspace() const { return workspace_; }
  size_t workspaceSize() const { return kWorkspace; }

  /// Waits for the rank stream, polling `poll` (NCCL's async errors, the
  /// job's failure) meanwhile; gives up after `timeout`.
  absl::Status wait(absl::Duration timeout,
                    const std::function<absl::Status()> &poll);

  /// How the host waits for the rank's stream inside a step (to read a
  /// value the program needs): set by the job, which knows what to watch
  /// and what to abort if the wait fails.
  void setHostWait(std::function<absl::Status()> hostWait) {
    hostWait_ = std::move(hostWait);
  }
  const std::function<absl::Status()> &hostWait() const { return hostWait_; }
  /// --profile: an event recorded on stream() now; null if that failed
  /// (reported).
  void *mark() override;
  void measured(void *start, const SiteRun &run) override;
  /// Adds what the step's marks timed to `rank`'s profile and frees the
  /// marks for the next step; called once the step's work is done.
  absl::Status takeTimings(RankContext &rank);

  /// Pinned host memory the rank's stream copies a scalar into.
  void *scalarSlot() const { return scalarSlot_; }
  static constexpr size_t kScalarSlot = 64;

private:
  static constexpr size_t kWorkspace = 32 << 20;
  RankDevice() = default;
  int device_ = 0;
  CUdevice handle_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr, commStream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  CUdeviceptr workspace_ = 0;
  bool inCollectives_ = false;
  /// Events of this step's brackets, reused step after step.
  std::vector<CUevent> events_;
  size_t nextEvent_ = 0;
  CUevent ready_ = nullptr; ///< The rank stream's point at a bracket's start.
  std::function<absl::Status()> hostWait_;
  void *scalarSlot_ = nullptr;
  /// --profile's marks: the runs of this step awaiting their times, and
  /// events free for the next marks.
  struct TimedRun {
    CUevent start, stop;
    SiteRun run;
  };
  std::vector<TimedRun> timed_;
  std::vector<CUevent> freeMarks_;
};

/// The device the calling thread runs a rank on (null when none).
RankDevice *currentDevice();
/// Binds the calling thread to `device` (and makes its context current).
class DeviceBinding {
public:
  explicit DeviceBinding(RankDevice *device);
  ~DeviceBinding();

private:
  RankDevice *previous_;
};

/// Records an error of code the generated code called: it fails the job of
/// the calling rank, or is kept for the host when no rank is bound.
void reportError(absl::Status status);
/// The error kept by reportError outside any job, cleared.
absl::Status takeUnboundError();

/// cuInit once; the error names the driver.
absl::Status initDriver();

} // namespace dt::rt::cuda

#endif // DT_RUNTIME_LIB_CUDA_DEVICE_H
