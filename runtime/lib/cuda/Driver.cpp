//===- Driver.cpp - Ranks' devices, and the mgpu* functions ---------------===//
//
// Upstream's gpu-to-llvm lowering calls a small set of `mgpu*` functions;
// this file implements them on the CUDA driver API for dt's programs:
//
// - Every stream a program asks for is its rank's stream. dt-lower-to-cuda
//   gives each gpu op a fresh `gpu.wait async` token, so `mgpuStreamCreate`
//   is how generated code names "my stream": work is queued in program
//   order on one in-order stream and the host never waits inside a step.
// - Modules are loaded lazily. `mgpuModuleLoad` runs from the artifact's
//   global constructor, at dlopen, before any context exists; the module is
//   loaded into a context the first time a kernel of it is looked up there.
// - Allocation and free are stream-ordered (cuMemAllocAsync/FreeAsync on
//   the device's default pool): a temporary costs no synchronization, and
//   the pool keeps freed memory across steps (no release threshold).
// - Errors never unwind through generated code: the first one fails the
//   rank's job (Context.h), and the host reports it when the entry returns.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "../Context.h"
#include "dt/runtime.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace dt::rt::cuda {

absl::Status driverError(CUresult result, const char *what) {
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  return absl::InternalError(
      absl::StrCat("CUDA: ", what, " failed: ", name ? name : "unknown error",
                   " (", text ? text : "", ")"));
}

absl::Status initDriver() {
  static absl::Status status = [] {
    CUresult result = cuInit(0);
    if (result == CUDA_SUCCESS)
      return absl::OkStatus();
    return absl::Status(absl::StatusCode::kFailedPrecondition,
                        driverError(result, "cuInit").message());
  }();
  return status;
}

absl::StatusOr<std::unique_ptr<RankDevice>> RankDevice::create(int device) {
  if (absl::Status s = initDriver(); !s.ok())
    return s;
  std::unique_ptr<RankDevice> rank(new RankDevice());
  rank->device_ = device;
  DT_CU(cuDeviceGet(&rank->handle_, device));
  DT_CU(cuDevicePrimaryCtxRetain(&rank->context_, rank->handle_));
  DT_CU(cuCtxSetCurrent(rank->context_));
  DT_CU(cuStreamCreate(&rank->stream_, CU_STREAM_NON_BLOCKING));
  DT_CU(cuStreamCreate(&rank->commStream_, CU_STREAM_NON_BLOCKING));
  DT_CU(cuMemAlloc(&rank->workspace_, kWorkspace));
  DT_CU(cuMemAllocHost(&rank->scalarSlot_, kScalarSlot));
  // The device's pool keeps what is freed into it: by default it returns
  // memory to the OS at every synchronization, and the next step would map
  // its temporaries again (a caching allocator's job, as in PyTorch).
  CUmemoryPool pool;
  DT_CU(cuDeviceGetDefaultMemPool(&pool, rank->handle_));
  cuuint64_t keepAll = ~cuuint64_t{0};
  DT_CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                              &keepAll));
  if (cublasStatus_t s = cublasLtCreate(&rank->lt_); s != CUBLAS_STATUS_SUCCESS)
    return absl::InternalError(
        absl::StrCat("cuBLASLt: cublasLtCreate failed with status ", s));
  return rank;
}

absl::Status RankDevice::beginCollectives() {
  if (!ready_)
    DT_CU(cuEventCreate(&ready_, CU_EVENT_DISABLE_TIMING));
  DT_CU(cuEventRecord(ready_, stream_));
  DT_CU(cuStreamWaitEvent(commStream_, ready_, 0));
  inCollectives_ = true;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RankDevice::endCollectives() {
  inCollectives_ = false;
  if (nextEvent_ == events_.size()) {
    CUevent event;
    DT_CU(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    events_.push_back(event);
  }
  DT_CU(cuEventRecord(events_[nextEvent_], commStream_));
  return static_cast<int64_t>(nextEvent_++);
}

absl::Status RankDevice::waitCollectives(int64_t handle) {
  if (handle < 0 || handle >= static_cast<int64_t>(nextEvent_))
    return absl::InternalError(
        absl::StrCat("collectives wait on an unknown handle ", handle));
  DT_CU(cuStreamWaitEvent(stream_, events_[handle], 0));
  return absl::OkStatus();
}

RankDevice::~RankDevice() {
  if (!context_)
    return;
  cuCtxSetCurrent(context_);
  if (stream_)
    cuStreamSynchronize(stream_);
  if (commStream_)
    cuStreamSynchronize(commStream_);
  for (CUevent event : events_)
    cuEventDestroy(event);
  for (const TimedRun &timed : timed_)
    freeMarks_.insert(freeMarks_.end(), {timed.start, timed.stop});
  for (CUevent event : freeMarks_)
    cuEventDestroy(event);
  if (ready_)
    cuEventDestroy(ready_);
  if (lt_)
    cublasLtDestroy(lt_);
  if (workspace_)
    cuMemFree(workspace_);
  if (scalarSlot_)
    cuMemFreeHost(scalarSlot_);
  if (commStream_)
    cuStreamDestroy(commStream_);
  if (stream_)
    cuStreamDestroy(stream_);
  cuDevicePrimaryCtxRelease(handle_);
}

absl::Status RankDevice::wait(absl::Duration timeout,
                              const std::function<absl::Status()> &poll) {
  // While the work is young the host spins, yielding its core: every sleep
  // costs the timer's slack (some 50 us on Linux), as long as a whole short
  // step, and a backoff of sleeps once measured a 130 us kernel at 260 us.
  // Past kSpin it naps, each nap a 32nd of the time waited so far, so a long
  // step is overshot by a few percent at most and an idle wait costs no core.
  constexpr absl::Duration kSpin = absl::Milliseconds(20);
  constexpr absl::Duration kPollEvery = absl::Microseconds(100);
  absl::Time start = absl::Now();
  absl::Time deadline = start + timeout, nextPoll = start + kPollEvery;
  while (true) {
    CUresult result = cuStreamQuery(stream_);
    if (result == CUDA_SUCCESS)
      return absl::OkStatus();
    if (result != CUDA_ERROR_NOT_READY)
      return driverError(result, "the rank's stream");
    absl::Time now = absl::Now();
    if (now >= nextPoll) {
      if (poll)
        if (absl::Status s = poll(); !s.ok())
          return s;
      if (now > deadline)
        return absl::DeadlineExceededError(
            absl::StrCat("the GPU work of a step did not finish within ",
                         absl::FormatDuration(timeout)));
      nextPoll = now + kPollEvery;
    }
    absl::Duration waited = now - start;
    if (waited < kSpin)
      std::this_thread::yield();
    else
      absl::SleepFor(std::min(waited / 32, absl::Milliseconds(1)));
  }
}

namespace {
thread_local RankDevice *boundDevice = nullptr;

absl::Mutex unboundMutex;
absl::Status unboundError ABSL_GUARDED_BY(unboundMutex);
} // namespace

RankDevice *currentDevice() { return boundDevice; }

DeviceBinding::DeviceBinding(RankDevice *device) : previous_(boundDevice) {
  boundDevice = device;
  if (device)
    cuCtxSetCurrent(device->context());
}
DeviceBinding::~DeviceBinding() { boundDevice = previous_; }

void reportError(absl::Status status) {
  if (RankContext *rank = currentRank()) {
    (void)rank->job().fail(
        absl::Status(status.code(), absl::StrCat("rank ", rank->rank(), ": ",
                                                 status.message())));
    return;
  }
  absl::MutexLock lock(&unboundMutex);
  if (unboundError.ok())
    unboundError = std::move(status);
}

absl::Status takeUnboundError() {
  absl::MutexLock lock(&unboundMutex);
  absl::Status s = unboundError;
  unboundError = absl::OkStatus();
  return s;
}

namespace {
/// A module the artifact embeds, loaded per context on first use.
struct LazyModule {
  const void *image;
  absl::Mutex mu;
  absl::flat_hash_map<CUcontext, CUmodule> loaded ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<std::pair<CUcontext, const char *>, CUfunction>
      functions ABSL_GUARDED_BY(mu);
};

bool failedCall(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return false;
  reportError(driverError(result, what));
  return true;
}

CUstream rankStream(void *stream) {
  if (stream)
    return static_cast<CUstream>(stream);
  RankDevice *device = currentDevice();
  return device ? device->stream() : nullptr;
}
} // namespace

void *RankDevice::mark() {
  CUevent event = nullptr;
  if (!freeMarks_.empty()) {
    event = freeMarks_.back();
    freeMarks_.pop_back();
  } else if (failedCall(cuEventCreate(&event, CU_EVENT_DEFAULT),
                        "cuEventCreate")) {
    return nullptr;
  }
  if (failedCall(cuEventRecord(event, stream()), "cuEventRecord")) {
    freeMarks_.push_back(event);
    return nullptr;
  }
  return event;
}

void RankDevice::measured(void *start, const SiteRun &run) {
  auto stop = static_cast<CUevent>(mark());
  if (!stop) {
    freeMarks_.push_back(static_cast<CUevent>(start));
    return;
  }
  timed_.push_back({static_cast<CUevent>(start), stop, run});
}

absl::Status RankDevice::takeTimings(RankContext &rank) {
  absl::Status status;
  for (const TimedRun &timed : timed_) {
    float ms = 0;
    CUresult result = cuEventSynchronize(timed.stop);
    if (result == CUDA_SUCCESS)
      result = cuEventElapsedTime(&ms, timed.start, timed.stop);
    if (result == CUDA_SUCCESS)
      rank.record(timed.run, ms * 1e-3);
    else if (status.ok())
      status = driverError(result, "timing a profiled run");
    freeMarks_.push_back(timed.start);
    freeMarks_.push_back(timed.stop);
  }
  timed_.clear();
  return status;
}

} // namespace dt::rt::cuda

using namespace dt::rt;
using namespace dt::rt::cuda;

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  auto *module = new LazyModule();
  module->image = data;
  return module;
}

void mgpuModuleUnload(void *handle) {
  auto *module = static_cast<LazyModule *>(handle);
  {
    absl::MutexLock lock(&module->mu);
    for (auto &[context, loaded] : module->loaded)
      cuModuleUnload(loaded); // At exit the context may be gone: no check.
  }
  delete module;
}

void *mgpuModuleGetFunction(void *handle, const char *name) {
  auto *module = static_cast<LazyModule *>(handle);
  CUcontext context = nullptr;
  if (failedCall(cuCtxGetCurrent(&context), "cuCtxGetCurrent"))
    return nullptr;
  if (!context) {
    reportError(absl::FailedPreconditionError(
        "a kernel was launched on a thread with no CUDA context: CUDA "
        "artifacts run through dt-run --backend=nccl"));
    return nullptr;
  }
  absl::MutexLock lock(&module->mu);
  auto key = std::make_pair(context, name);
  if (auto it = module->functions.find(key); it != module->functions.end())
    return it->second;
  CUmodule &loaded = module->loaded[context];
  if (!loaded &&
      failedCall(cuModuleLoadData(&loaded, module->image), "cuModuleLoadData"))
    return nullptr;
  CUfunction function = nullptr;
  if (failedCall(cuModuleGetFunction(&function, loaded, name),
                 "cuModuleGetFunction"))
    return nullptr;
  module->functions[key] = function;
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  if (!function)
    return; // Its lookup failed and was reported.
  auto kernel = static_cast<CUfunction>(function);
  SiteTimer timer(currentRank()); // --profile: by the kernel's name.
  failedCall(cuLaunchKernel(kernel, gridX, gridY, gridZ, blockX, blockY, blockZ,
                            smem, rankStream(stream), params, extra),
             "cuLaunchKernel");
  if (timer.active()) {
    const char *name = nullptr;
    if (cuFuncGetName(&name, kernel) != CUDA_SUCCESS)
      name = nullptr;
    timer.done(SiteRun{name, /*compute=*/true});
  }
}

void *mgpuStreamCreate() {
  RankDevice *device = currentDevice();
  if (device)
    return device->stream();
  CUstream stream = nullptr;
  failedCall(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  RankDevice *device = currentDevice();
  if (device && stream == device->stream())
    return; // The rank's stream outlives the step.
  failedCall(cuStreamDestroy(static_cast<CUstream>(stream)), "cuStreamDestroy");
}

void mgpuStreamSynchronize(void *stream) {
  failedCall(cuStreamSynchronize(static_cast<CUstream>(stream)),
             "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  failedCall(cuStreamWaitEvent(static_cast<CUstream>(stream),
                               static_cast<CUevent>(event), 0),
             "cuStreamWaitEvent");
}

void *mgpuEventCreate() {
  CUevent event = nullptr;
  failedCall(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  failedCall(cuEventDestroy(static_cast<CUevent>(event)), "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  failedCall(cuEventSynchronize(static_cast<CUevent>(event)),
             "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  failedCall(
      cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)),
      "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared) {
  if (bytes == 0)
    return nullptr;
  CUdeviceptr ptr = 0;
  if (hostShared)
    failedCall(cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL),
               "cuMemAllocManaged");
  else
    failedCall(cuMemAllocAsync(&ptr, bytes, rankStream(stream)),
               "cuMemAllocAsync");
  return reinterpret_cast<void *>(ptr);
}

void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  failedCall(
      cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), rankStream(stream)),
      "cuMemFreeAsync");
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (bytes == 0)
    return;
  failedCall(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), bytes,
                           rankStream(stream)),
             "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  failedCall(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              rankStream(stream)),
             "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  failedCall(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              rankStream(stream)),
             "cuMemsetD16Async");
}

void dt_rt_gpu_collectives_begin() {
  RankDevice *device = currentDevice();
  if (!device)
    return reportError(absl::FailedPreconditionError(
        "dt_rt_gpu_collectives_begin on a thread bound to no device"));
  if (absl::Status s = device->beginCollectives(); !s.ok())
    reportError(std::move(s));
}

int64_t dt_rt_gpu_collectives_end() {
  RankDevice *device = currentDevice();
  if (!device)
    return -1;
  absl::StatusOr<int64_t> handle = device->endCollectives();
  if (!handle.ok()) {
    reportError(handle.status());
    return -1;
  }
  return *handle;
}

void dt_rt_gpu_collectives_wait(int64_t handle) {
  RankDevice *device = currentDevice();
  if (!device || handle < 0)
    return; // The failure was reported by the bracket.
  if (absl::Status s = device->waitCollectives(handle); !s.ok())
    reportError(std::move(s));
}

void dt_rt_gpu_read_scalar(int64_t, DtMemRef *host, int64_t, DtMemRef *device) {
  // A read that fails leaves zeros (a loop of no trips, a false condition):
  // the job has failed, and the host must not wander on a stale value
  // until its step ends.
  int64_t bytes = host->sizesAndStrides[0];
  char *to = static_cast<char *>(host->aligned) + host->offset;
  std::memset(to, 0, bytes);
  RankDevice *rank = currentDevice();
  if (!rank)
    return reportError(absl::FailedPreconditionError(
        "dt_rt_gpu_read_scalar on a thread bound to no device"));
  if (bytes > static_cast<int64_t>(RankDevice::kScalarSlot) ||
      device->sizesAndStrides[0] != bytes)
    return reportError(absl::InternalError(
        absl::StrCat("dt_rt_gpu_read_scalar reads ", device->sizesAndStrides[0],
                     " bytes into ", bytes)));
  auto from = reinterpret_cast<CUdeviceptr>(device->aligned) + device->offset;
  // Pinned memory: the copy is queued, and the wait below is the host's
  // only block (a pageable copy would block inside the driver, blind to a
  // failing job).
  if (failedCall(
          cuMemcpyDtoHAsync(rank->scalarSlot(), from, bytes, rank->stream()),
          "cuMemcpyDtoHAsync"))
    return;
  if (!rank->hostWait()) {
    if (failedCall(cuStreamSynchronize(rank->stream()), "cuStreamSynchronize"))
      return;
  } else if (absl::Status waited = rank->hostWait()(); !waited.ok()) {
    return reportError(std::move(waited));
  }
  std::memcpy(to, rank->scalarSlot(), bytes);
}

void mgpuSetDefaultDevice(int32_t /*device*/) {
  // The runtime binds each rank's thread to its device before the entry.
}

} // extern "C"
