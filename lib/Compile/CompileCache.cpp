//===- CompileCache.cpp - Artifacts kept by their inputs -----------------===//

#include "dt/Compile/CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <vector>

using namespace mlir;
using namespace mlir::dt;
namespace fs = llvm::sys::fs;

void CacheKey::add(StringRef part) {
  uint8_t length[8];
  llvm::support::endian::write64le(length, part.size());
  hasher.update(ArrayRef<uint8_t>(length));
  hasher.update(part);
}

bool CacheKey::addFileContents(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> contents =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!contents)
    return false;
  add((*contents)->getBuffer());
  return true;
}

bool CacheKey::addFileIdentity(StringRef path) {
  fs::file_status status;
  if (fs::status(path, status))
    return false;
  add(path);
  add(std::to_string(status.getSize()));
  add(std::to_string(
      status.getLastModificationTime().time_since_epoch().count()));
  return true;
}

std::string CacheKey::str() {
  return llvm::toHex(hasher.final(), /*LowerCase=*/true);
}

std::string CompileCache::entryPath(StringRef key) const {
  return (directory + "/" + key + ".so").str();
}

LogicalResult CompileCache::open(std::string &error) {
  if (std::error_code ec = fs::create_directories(directory)) {
    error = "cannot create " + directory + ": " + ec.message();
    return failure();
  }
  // Permissions do not stop root, a read-only file system does: try a file.
  llvm::SmallString<256> probe;
  int fd;
  if (std::error_code ec =
          fs::createUniqueFile(directory + "/probe.tmp-%%%%%%", fd, probe)) {
    error = "cannot write in " + directory + ": " + ec.message();
    return failure();
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  fs::remove(probe);
  return success();
}

bool mlir::dt::isWrittenThrough(StringRef path) {
  return fs::exists(path) && !fs::is_regular_file(path);
}

/// Copies `from` to `path` through a temporary file in `path`'s directory
/// renamed at the end, keeping `from`'s permissions (a shared object's x
/// bits), or through `path` (isWrittenThrough).
static LogicalResult copyAtomically(StringRef from, StringRef path,
                                    std::string &error) {
  if (isWrittenThrough(path)) {
    if (std::error_code ec = fs::copy_file(from, path)) {
      error = ("cannot write " + path + ": " + ec.message()).str();
      return failure();
    }
    return success();
  }
  llvm::SmallString<256> temporary;
  int fd;
  if (std::error_code ec =
          fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temporary)) {
    error =
        ("cannot create a file next to " + path + ": " + ec.message()).str();
    return failure();
  }
  std::error_code ec = fs::copy_file(from, fd);
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  if (llvm::ErrorOr<fs::perms> perms = fs::getPermissions(from); !ec && perms)
    ec = fs::setPermissions(temporary, *perms);
  if (!ec)
    ec = fs::rename(temporary, path);
  if (ec) {
    fs::remove(temporary);
    error = ("cannot write " + path + ": " + ec.message()).str();
    return failure();
  }
  return success();
}

bool CompileCache::fetch(StringRef key, StringRef output) {
  std::string artifact = entryPath(key);
  fs::file_status status;
  std::string error;
  if (fs::status(artifact, status) || status.getSize() == 0 ||
      failed(copyAtomically(artifact, output, error)))
    return false;
  // Used now: the last to be evicted.
  ::utimensat(AT_FDCWD, artifact.c_str(), nullptr, 0);
  return true;
}

LogicalResult CompileCache::store(StringRef key, StringRef artifact,
                                  std::string &error) {
  if (failed(copyAtomically(artifact, entryPath(key), error)))
    return failure();
  evict();
  return success();
}

void CompileCache::evict() const {
  struct Entry {
    std::string key;
    llvm::sys::TimePoint<> used;
    uint64_t size;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  // Temporary files left by a compile killed while it wrote them.
  auto stale = [](const fs::file_status &status) {
    return std::chrono::system_clock::now() - status.getLastModificationTime() >
           std::chrono::hours(1);
  };
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    StringRef path = it->path();
    StringRef name = llvm::sys::path::filename(path);
    fs::file_status status;
    if (fs::status(path, status))
      continue;
    if (name.contains(".tmp-")) {
      if (stale(status))
        fs::remove(path);
    } else if (name.ends_with(".so")) {
      entries.push_back({name.drop_back(3).str(),
                         status.getLastModificationTime(), status.getSize()});
      total += status.getSize();
    }
  }
  if (total <= limitBytes)
    return;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : entries) {
    if (total <= limitBytes / 4 * 3)
      break;
    fs::remove(entryPath(entry.key));
    total -= entry.size;
  }
}
