//===- KernelThreads.cpp - A rank's threads for its kernels' chunks -------===//
//
// dt-parallel-kernels cuts a large kernel into chunks; dt_rt_parallel_for
// runs them on the rank's thread and its helpers, each taking the next
// chunk until none is left, and returns when every chunk is done. Each rank
// has its own helpers, started the first time it needs them, so two ranks
// of the threads backend never wait on each other's kernels.
//
// A helper that finishes watches a while for the next kernel (a step's
// kernels often come back to back) and then sleeps: waking it takes tens
// of microseconds on the machine dt is developed on, where OpenBLAS's own
// threads, idle between matmuls, spin on the same CPUs. So the rank's
// thread never waits for a helper to start: it takes chunks from the
// start, and once none is left it takes back the work it posted to a
// helper that has not begun, and waits only for those running their last
// chunk. A kernel's work (its iterations times what one costs, from the
// compiler) decides how many threads it is posted to: each gets at least
// kMinShare of it, so a small kernel stays on the rank's thread.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "dt/Runtime/Job.h"

#include "absl/synchronization/mutex.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

using namespace dt::rt;

namespace {
/// The least work (iterations times operations) a thread is posted.
constexpr int64_t kMinShare = 524288;
/// How long a helper watches for work before it sleeps.
constexpr auto kWatch = std::chrono::microseconds(20);

std::atomic<int> kernelThreadCount{1};
} // namespace

namespace dt::rt {

class KernelThreads {
public:
  /// Starts `helpers` helpers on `cpus`, or as many as the system gives.
  KernelThreads(int helpers, std::vector<int> cpus)
      : requested_(helpers), cpus_(std::move(cpus)) {
    for (int i = 0; i < helpers; ++i) {
      Helper *helper = helpers_.emplace_back(std::make_unique<Helper>()).get();
      try {
        helper->thread = std::thread([this, helper] { serve(*helper); });
      } catch (const std::system_error &) {
        helpers_.pop_back(); // Never started; nor will those after.
        break;
      }
    }
  }

  ~KernelThreads() {
    for (std::unique_ptr<Helper> &helper : helpers_) {
      absl::MutexLock lock(&helper->mutex);
      helper->stop = true;
      helper->wake.Signal();
    }
    for (std::unique_ptr<Helper> &helper : helpers_)
      helper->thread.join();
  }

  /// The helpers asked for, and the threads there are (with the caller's).
  int requested() const { return requested_; }
  int size() const { return static_cast<int>(helpers_.size()) + 1; }

  /// Runs `task` on each of chunks [0, chunks), on the calling thread and
  /// `helpers` helpers, each taking the next chunk until none is left.
  void run(KernelTask task, void *args, int64_t chunks, int helpers) {
    task_ = task;
    args_ = args;
    chunks_ = chunks;
    next_.store(0, std::memory_order_relaxed);
    int here = sched_getcpu();
    for (int i = 0; i < helpers; ++i) {
      keepOffCpu(*helpers_[i], i, here);
      post(*helpers_[i]);
    }
    work();
    // A helper that has not started yet never will: its post is taken
    // back. One that has is finishing its last chunk.
    for (int i = 0; i < helpers; ++i) {
      Helper &helper = *helpers_[i];
      int posted = kPosted;
      if (helper.state.compare_exchange_strong(posted, kIdle,
                                               std::memory_order_acq_rel))
        continue;
      for (int spins = 0; helper.state.load(std::memory_order_acquire) != kIdle;
           ++spins) {
        if (spins % 256 == 255)
          sched_yield();
        else
          cpuRelax();
      }
    }
  }

private:
  /// A helper's state: idle, posted work (which it may take, or the caller
  /// take back), or running it.
  enum : int { kIdle, kPosted, kRunning };

  struct Helper {
    std::atomic<int> state{kIdle};
    /// The CPU it keeps to (-1: any the process may use).
    int cpu = -1;
    bool stop = false;     ///< Guarded by `mutex`.
    bool sleeping = false; ///< Guarded by `mutex`.
    absl::Mutex mutex;
    absl::CondVar wake;
    std::thread thread;
  };

  /// The current run's chunks, one at a time, until none is left.
  void work() {
    for (;;) {
      int64_t chunk = next_.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= chunks_)
        return;
      task_(args_, chunk, chunk + 1);
    }
  }

  /// Keeps helper `index` to a CPU of its own other than `here`, the
  /// caller's: the scheduler puts a woken thread on its waker's CPU, behind
  /// the caller working through the chunks, while the other CPUs look busy
  /// (OpenBLAS's idle threads spin there, yielding).
  void keepOffCpu(Helper &helper, int index, int here) {
    if (cpus_.size() < 2)
      return;
    int cpu = helperCpu(cpus_, here, index);
    if (cpu == helper.cpu)
      return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(helper.thread.native_handle(), sizeof(one),
                               &one) == 0)
      helper.cpu = cpu;
  }

  static void post(Helper &helper) {
    helper.state.store(kPosted, std::memory_order_release);
    absl::MutexLock lock(&helper.mutex);
    if (helper.sleeping)
      helper.wake.Signal();
  }

  /// A helper's loop: each run posted to it, its chunks.
  void serve(Helper &helper) {
    // A rank may have kept to one CPU (the threads backend's collectives),
    // which its helpers inherit: they may use every CPU of the rank's (its
    // share of the machine's, or all the process's), until keepOffCpu
    // gives each one of its own.
    keepToCpus(cpus_);
    for (;;) {
      if (!awaitPost(helper))
        return;
      int posted = kPosted;
      if (!helper.state.compare_exchange_strong(posted, kRunning,
                                                std::memory_order_acq_rel))
        continue; // Taken back.
      work();
      helper.state.store(kIdle, std::memory_order_release);
    }
  }

  /// Waits until work is posted to `helper`: watched a while, then slept
  /// for. False when the threads stop.
  static bool awaitPost(Helper &helper) {
    auto until = std::chrono::steady_clock::now() + kWatch;
    for (;;) {
      for (int i = 0; i < 64; ++i) {
        if (helper.state.load(std::memory_order_acquire) == kPosted)
          return true;
        cpuRelax();
      }
      if (std::chrono::steady_clock::now() > until)
        break;
    }
    absl::MutexLock lock(&helper.mutex);
    helper.sleeping = true;
    while (helper.state.load(std::memory_order_acquire) != kPosted &&
           !helper.stop)
      helper.wake.Wait(&helper.mutex);
    helper.sleeping = false;
    return !helper.stop;
  }

  int requested_;
  std::vector<std::unique_ptr<Helper>> helpers_;
  /// The CPUs the helpers keep to: the rank's, or all the process's.
  std::vector<int> cpus_;
  // The current run, written before its posts.
  KernelTask task_ = nullptr;
  void *args_ = nullptr;
  int64_t chunks_ = 0;
  std::atomic<int64_t> next_{0};
};

void setKernelThreads(int threads) {
  kernelThreadCount.store(std::max(threads, 1), std::memory_order_relaxed);
}

int kernelThreads() {
  return kernelThreadCount.load(std::memory_order_relaxed);
}

int kernelThreadsFor(int requested, int64_t ranksHere) {
  return requested > 0 ? requested : cpusPerRank(ranksHere);
}

void setThreadsPerRank(const RunOptions &options, int64_t ranksHere) {
  setBlasThreads(blasThreadsFor(options.blasThreads, ranksHere));
  setKernelThreads(kernelThreadsFor(options.kernelThreads, ranksHere));
}

void RankContext::parallelFor(KernelTask task, void *args, int64_t chunks,
                              int64_t work) {
  // DT_KERNEL_SHARE (tests): another least work a thread is posted.
  static const int64_t minShare =
      std::max<int64_t>(envInt("DT_KERNEL_SHARE", kMinShare), 1);
  int threads = static_cast<int>(std::min<int64_t>(
      {kernelThreads(), chunks, std::max<int64_t>(work / minShare, 1)}));
  if (threads > 1) {
    if (!kernelThreads_ || kernelThreads_->requested() != kernelThreads() - 1)
      kernelThreads_.reset(new KernelThreads(
          kernelThreads() - 1, cpus_.empty() ? usableCpuList() : cpus_));
    // (Fewer when the system refused some.)
    threads = std::min(threads, kernelThreads_->size());
  }
  if (threads <= 1) {
    task(args, 0, chunks);
    return;
  }
  kernelThreads_->run(task, args, chunks, threads - 1);
}

void KernelThreadsDeleter::operator()(KernelThreads *threads) const {
  delete threads;
}

} // namespace dt::rt

/// Runs `task(args, first, end)` on chunks [0, chunks) of a kernel whose
/// work is `work` iterations, shared out among the calling rank's kernel
/// threads (dt-kernel-tasks).
extern "C" void dt_rt_parallel_for(KernelTask task, void *args, int64_t chunks,
                                   int64_t work) {
  RankContext *rank = currentRank();
  if (!rank) {
    task(args, 0, chunks);
    return;
  }
  rank->parallelFor(task, args, chunks, work);
}
