//===- HostMemory.cpp - Where generated CPU code's buffers come from ------===//
//
// CPU artifacts allocate their temporaries through MLIR's generic
// allocation functions (finalize-memref-to-llvm{use-generic-functions}),
// defined here. A step allocates the same temporaries at every call, and a
// large block fresh from malloc is a new mapping that the kernel faults in
// page by page at first touch: on the 2-core machine dt is developed on, a
// 64 MiB temporary cost ~190 ms a call that way, five times the matmul that
// filled it. So blocks of kCachedBytes or more are kept when freed and
// handed out again to a request they fit (at most twice its size). Smaller
// ones are rounded up to a power of two and kept, per thread, in a free
// list of their size: a chain of small ops allocates and frees a buffer or
// two per op, and malloc's bookkeeping for them (aligned allocation, frees
// that consolidate the heap) cost more than the ops themselves. The MPI
// backend's staging buffers come from here too (allocateHost), and so does
// memrefCopy, the copy between strided views such code calls.
//
// Large blocks ask for transparent huge pages (adviseHugePages): a fault
// and a TLB entry per 2 MiB instead of per 4 KiB.
//
// A step asks for the same sizes in the same order at every call, so the
// blocks are those its first call made (at most the sum of its large
// temporaries), as with a framework's caching allocator. The cache never
// holds more than a quarter of the machine's memory: a block that would
// pass that is freed instead.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "dt/Runtime/Tensor.h"
#include "dt/runtime.h"

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unistd.h>
#include <vector>

namespace {
constexpr size_t kCachedBytes = size_t{1} << 20;
constexpr size_t kPage = 4096;

/// What precedes every block handed out: where its allocation starts and
/// how many usable bytes follow the header.
struct alignas(64) Header {
  void *base;
  size_t capacity;
};

/// The smallest block a thread keeps (smaller requests round up to it),
/// and how much it keeps in all.
constexpr size_t kSmallestBlock = 64;
constexpr size_t kThreadCachedBytes = size_t{16} << 20;

/// A thread's free lists of small blocks, one per power-of-two size from
/// kSmallestBlock up to kLargestSmall. (Requests between kLargestSmall and
/// kCachedBytes go to malloc as they are.)
class SmallBlocks {
public:
  static constexpr int kClasses = 14;
  static constexpr size_t kLargestSmall = kSmallestBlock << (kClasses - 1);
  static_assert(kLargestSmall == kCachedBytes / 2);

  /// Whether a block of `capacity` bytes is one of a class.
  static bool isClassSize(size_t capacity) {
    return capacity >= kSmallestBlock && capacity <= kLargestSmall &&
           (capacity & (capacity - 1)) == 0;
  }

  /// The class of a request of `size` bytes and the capacity it gets.
  static int classOf(size_t size) {
    int k = 0;
    while ((kSmallestBlock << k) < size)
      ++k;
    return k;
  }

  Header *take(int k) {
    std::vector<Header *> &list = free_[k];
    if (list.empty())
      return nullptr;
    Header *header = list.back();
    list.pop_back();
    bytes_ -= header->capacity;
    return header;
  }

  bool keep(Header *header) {
    if (bytes_ + header->capacity > kThreadCachedBytes)
      return false;
    bytes_ += header->capacity;
    free_[classOf(header->capacity)].push_back(header);
    return true;
  }

  size_t bytes() const { return bytes_; }

  void trim() {
    for (std::vector<Header *> &list : free_) {
      for (Header *header : list)
        std::free(header->base);
      list.clear();
    }
    bytes_ = 0;
  }

  ~SmallBlocks() { trim(); }

private:
  std::vector<Header *> free_[kClasses];
  size_t bytes_ = 0;
};

/// The calling thread's small blocks; null once its thread is exiting
/// (an artifact may free a buffer after the thread's destructors ran).
SmallBlocks *threadBlocks() {
  // The pointer is trivially destructible, so it stays readable to the
  // end of the thread; the owner frees the blocks and clears it.
  static thread_local SmallBlocks *blocks = nullptr;
  struct Owner {
    SmallBlocks lists;
    Owner() { blocks = &lists; }
    ~Owner() { blocks = nullptr; }
  };
  static thread_local bool started = false;
  if (!started) {
    started = true;
    static thread_local Owner owner;
  }
  return blocks;
}

class HostMemory {
public:
  void *allocate(size_t size, size_t alignment) {
    alignment = std::max(alignment, alignof(Header));
    if (size <= SmallBlocks::kLargestSmall && alignment == alignof(Header)) {
      int k = SmallBlocks::classOf(size);
      if (SmallBlocks *blocks = threadBlocks())
        if (Header *header = blocks->take(k))
          return header + 1;
      size = kSmallestBlock << k;
    }
    if (size >= kCachedBytes && alignment == alignof(Header)) {
      absl::MutexLock lock(&mu_);
      auto it = free_.lower_bound(size);
      if (it != free_.end() && it->first <= 2 * size) {
        Header *header = it->second;
        cachedBytes_ -= it->first;
        free_.erase(it);
        return header + 1;
      }
    }
    // The header sits just before the block, which starts at `alignment`.
    size_t capacity =
        size < kCachedBytes ? size : (size + kPage - 1) / kPage * kPage;
    size_t front = (sizeof(Header) + alignment - 1) / alignment * alignment;
    size_t total = (front + capacity + alignment - 1) / alignment * alignment;
    char *base = static_cast<char *>(std::aligned_alloc(alignment, total));
    if (!base) {
      // The cached blocks may be what stands in the way.
      trim();
      base = static_cast<char *>(std::aligned_alloc(alignment, total));
    }
    if (!base)
      return nullptr;
    if (capacity >= kCachedBytes)
      dt::rt::adviseHugePages(base + front, capacity);
    Header *header = reinterpret_cast<Header *>(base + front) - 1;
    header->base = base;
    header->capacity = alignment == alignof(Header) ? capacity : 0;
    return base + front;
  }

  void release(void *block) {
    if (!block)
      return;
    Header *header = static_cast<Header *>(block) - 1;
    // Aligned blocks are never cached (capacity 0).
    if (SmallBlocks::isClassSize(header->capacity)) {
      SmallBlocks *blocks = threadBlocks();
      if (blocks && blocks->keep(header))
        return;
    }
    if (header->capacity >= kCachedBytes) {
      absl::MutexLock lock(&mu_);
      if (cachedBytes_ + header->capacity <= limit()) {
        cachedBytes_ += header->capacity;
        free_.emplace(header->capacity, header);
        return;
      }
    }
    std::free(header->base);
  }

  /// The bytes cached for everyone and those the calling thread keeps.
  size_t cached() {
    SmallBlocks *blocks = threadBlocks();
    absl::MutexLock lock(&mu_);
    return cachedBytes_ + (blocks ? blocks->bytes() : 0);
  }

  void trim() {
    if (SmallBlocks *blocks = threadBlocks())
      blocks->trim();
    std::multimap<size_t, Header *> blocks;
    {
      absl::MutexLock lock(&mu_);
      blocks.swap(free_);
      cachedBytes_ = 0;
    }
    for (auto &[capacity, header] : blocks)
      std::free(header->base);
  }

private:
  static size_t limit() {
    static const size_t bytes = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) *
                                sysconf(_SC_PAGESIZE) / 4;
    return bytes;
  }

  absl::Mutex mu_;
  std::multimap<size_t, Header *> free_ ABSL_GUARDED_BY(mu_);
  size_t cachedBytes_ ABSL_GUARDED_BY(mu_) = 0;
};

HostMemory &hostMemory() {
  // Never destroyed: artifacts may free after static destructors ran.
  static HostMemory *memory = new HostMemory;
  return *memory;
}

/// `block`, unless the allocation of `bytes` for `what` failed. The
/// compiled program has no way to fail an allocation, so none returns.
void *checked(void *block, size_t bytes, absl::string_view what) {
  if (!block)
    dt::rt::outOfHostMemory(bytes, what);
  return block;
}
} // namespace

void dt::rt::outOfHostMemory(size_t bytes, absl::string_view what) {
  // The first rank to run out reports; any other waits for the exit.
  static std::atomic<bool> reported{false};
  if (reported.exchange(true))
    for (;;)
      ::pause();
  std::string who;
  if (RankContext *rank = currentRank())
    who = absl::StrCat(rank->who(), ": ");
  double gigabytes = 1e-9 * static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                     static_cast<double>(sysconf(_SC_PAGESIZE));
  std::string message = absl::StrFormat(
      "%s: error: %sout of host memory: %.1f GB for %s could not be "
      "allocated (this machine has %.1f GB)\n",
      program_invocation_short_name, who, 1e-9 * bytes, what, gigabytes);
  std::fflush(nullptr);
  (void)!::write(STDERR_FILENO, message.data(), message.size());
  // Other ranks may be running: no exit handlers.
  ::_exit(1);
}

void *dt::rt::allocateHost(size_t bytes) {
  return checked(hostMemory().allocate(bytes, alignof(Header)), bytes,
                 "a runtime buffer");
}
void dt::rt::releaseHost(void *block) { hostMemory().release(block); }

extern "C" {
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return checked(hostMemory().allocate(size, alignment), size,
                 "a buffer of the compiled program");
}
void *_mlir_memref_to_llvm_alloc(size_t size) {
  return _mlir_memref_to_llvm_aligned_alloc(alignof(Header), size);
}
void _mlir_memref_to_llvm_free(void *block) { dt::rt::releaseHost(block); }

void memrefCopy(int64_t elementSize, DtUnrankedMemRef *source,
                DtUnrankedMemRef *target) {
  int64_t rank = source->rank;
  const DtMemRef &src = *source->ranked;
  const DtMemRef &dst = *target->ranked;
  const int64_t *sizes = src.sizesAndStrides;
  const int64_t *srcStrides = sizes + rank;
  const int64_t *dstStrides = dst.sizesAndStrides + rank;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;
  auto *from =
      static_cast<const char *>(src.aligned) + src.offset * elementSize;
  auto *to = static_cast<char *>(dst.aligned) + dst.offset * elementSize;
  // The innermost dims that are contiguous in both move as one block.
  int64_t block = 1, inner = rank;
  while (inner > 0 && srcStrides[inner - 1] == block &&
         dstStrides[inner - 1] == block)
    block *= sizes[--inner];
  size_t bytes = static_cast<size_t>(block * elementSize);
  std::vector<int64_t> index(static_cast<size_t>(inner), 0);
  for (;;) {
    int64_t srcAt = 0, dstAt = 0;
    for (int64_t d = 0; d < inner; ++d) {
      srcAt += index[d] * srcStrides[d];
      dstAt += index[d] * dstStrides[d];
    }
    std::memmove(to + dstAt * elementSize, from + srcAt * elementSize, bytes);
    int64_t d = inner - 1;
    for (; d >= 0 && ++index[d] == sizes[d]; --d)
      index[d] = 0;
    if (d < 0)
      return;
  }
}

size_t dt_host_memory_cached(void) { return hostMemory().cached(); }
void dt_host_memory_trim(void) { hostMemory().trim(); }
}
