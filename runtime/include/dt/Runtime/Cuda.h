//===- Cuda.h - Running CUDA artifacts --------------------------*- C++ -*-===//
//
// The CUDA side of the runtime lives in its own library,
// libdt_runtime_cuda.so, which needs the CUDA driver (libcuda.so.1),
// cuBLASLt and NCCL. Hosts load it only for a CUDA artifact, so that dt-run
// and libdt_runtime.so start on machines with no GPU driver at all.
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_CUDA_H
#define DT_RUNTIME_CUDA_H

#include "dt/Runtime/Job.h"

#include <string>

namespace dt::rt {

/// How the ranks of a job in one process use the GPUs.
enum class GpuPlacement {
  /// One GPU per rank, NCCL between them (needs as many GPUs as ranks).
  OnePerRank,
  /// Every rank on GPU 0, collectives staged through host memory: for
  /// testing multi-rank programs on a one-GPU machine (NCCL refuses two
  /// ranks on one GPU).
  DeviceLocal,
};

/// What libdt_runtime_cuda.so offers its host. Buffers are host tensors:
/// the library copies arguments to the device, runs, and copies results
/// back; each call of the entry is timed up to the end of its device work.
struct CudaPlugin {
  /// Visible GPUs (an error when the driver is missing or fails).
  absl::StatusOr<int> (*deviceCount)();
  /// Every rank of `spec.mesh` in this process, one thread per rank.
  absl::StatusOr<RunStats> (*runThreads)(Artifact::EntryFn entry,
                                         const EntrySpec &spec,
                                         std::vector<RankBuffers> &ranks,
                                         const RunOptions &options,
                                         GpuPlacement placement);
  /// This process's rank under MPI: local rank -> GPU, NCCL communicators
  /// bootstrapped through MPI.
  absl::StatusOr<RunStats> (*runMpiRank)(Artifact::EntryFn entry,
                                         const EntrySpec &spec,
                                         RankBuffers &mine,
                                         const RunOptions &options);
  /// The reference entry on GPU 0.
  absl::Status (*runReference)(Artifact::EntryFn entry,
                               std::vector<HostTensor> &args,
                               std::vector<HostTensor> &results);
};

/// Loads libdt_runtime_cuda.so (next to libdt_runtime.so, else from the
/// library path) with its symbols global, so that CUDA artifacts loaded
/// afterwards resolve the mgpu* and dt_rt_gpu_* functions. Loads once.
absl::StatusOr<const CudaPlugin *> loadCudaPlugin();

} // namespace dt::rt

extern "C" const dt::rt::CudaPlugin *dt_cuda_plugin(void);

#endif // DT_RUNTIME_CUDA_H
