//===- CompileCache.h - Artifacts kept by their inputs ---------*- C++ -*-===//
//
// dt-compile --cache-dir=DIR (which dt-run passes by default): a shared
// object is kept in DIR under a key that hashes everything it was made from
// (the source, its path, the options, the target CPU, the compiler and the
// tools it runs). A compile with the same key copies it instead of
// compiling. docs/Runtime.md, "The compile cache", says what the key holds.
//
//===----------------------------------------------------------------------===//

#ifndef DT_COMPILE_COMPILECACHE_H
#define DT_COMPILE_COMPILECACHE_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/BLAKE3.h"

#include <cstdint>
#include <string>

namespace mlir::dt {

/// The key of one compile: a BLAKE3 hash of its parts, each added with its
/// length, so that no two different lists of parts hash alike.
class CacheKey {
public:
  void add(StringRef part);
  /// Adds the contents of the file at `path`; false when it cannot be read.
  bool addFileContents(StringRef path);
  /// Adds the path, size and modification time of an installed file (a
  /// tool too big to read at every compile); false when it does not exist.
  bool addFileIdentity(StringRef path);
  /// The key, in hex.
  std::string str();

private:
  llvm::BLAKE3 hasher;
};

/// Whether an output at `path` is written through rather than replaced: a
/// device or a pipe (-o /dev/null) is there already and is not a file.
bool isWrittenThrough(StringRef path);

/// A directory of artifacts, each `KEY.so`. Every file is written under a
/// temporary name and renamed into place, so that compiles running at once
/// (the tests of a suite, two users' dt-runs) see an entry whole or not at
/// all.
class CompileCache {
public:
  /// Past this many bytes of artifacts, a store evicts the least recently
  /// used down to three quarters of it.
  static constexpr uint64_t kDefaultLimitBytes = uint64_t(1) << 30;

  explicit CompileCache(StringRef directory,
                        uint64_t limitBytes = kDefaultLimitBytes)
      : directory(directory.str()), limitBytes(limitBytes) {}

  /// Creates the directory if needed and checks that entries can be written
  /// there; `error` says why not.
  LogicalResult open(std::string &error);

  /// On a hit, writes the artifact for `key` at `output` (atomically, as a
  /// compile would) and returns true; false on a miss, or when the entry
  /// cannot be copied.
  bool fetch(StringRef key, StringRef output);

  /// Keeps a copy of `artifact` under `key`, then evicts past the limit;
  /// `error` says why nothing was kept.
  LogicalResult store(StringRef key, StringRef artifact, std::string &error);

private:
  std::string entryPath(StringRef key) const;
  void evict() const;

  std::string directory;
  uint64_t limitBytes;
};

} // namespace mlir::dt

#endif // DT_COMPILE_COMPILECACHE_H
