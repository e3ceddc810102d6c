//===- CompileCacheTest.cpp - dt-compile --cache-dir's directory ----------===//
//
// The key's parts, the entries' round trip and eviction, on files of known
// sizes (test/Tools/compile-cache.test covers dt-compile and dt-run).
//
//===----------------------------------------------------------------------===//

#include "dt/Compile/CompileCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

using namespace mlir;
using namespace mlir::dt;
namespace fs = llvm::sys::fs;

namespace {

class CompileCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(fs::createUniqueDirectory("dt-compile-cache-test", root));
    cacheDir = (root + "/cache").str();
  }
  void TearDown() override { fs::remove_directories(root); }

  /// A file of `size` bytes, all `fill`, under the test's directory.
  std::string file(StringRef name, size_t size, char fill) {
    std::string path = (root + "/" + name).str();
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    EXPECT_FALSE(ec);
    os << std::string(size, fill);
    return path;
  }

  static std::string contents(StringRef path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : "<missing>";
  }

  /// The names in `directory`, sorted, each followed by a space.
  static std::string names(StringRef directory) {
    std::vector<std::string> list;
    std::error_code ec;
    for (fs::directory_iterator it(directory, ec), end; !ec && it != end;
         it.increment(ec))
      list.push_back(llvm::sys::path::filename(it->path()).str());
    llvm::sort(list);
    std::string text;
    for (const std::string &name : list)
      text += name + " ";
    return text;
  }

  /// Entries written within one tick of the file system's clock would have
  /// the same modification time: steps whose order eviction reads wait.
  static void nextTick() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  llvm::SmallString<128> root;
  std::string cacheDir;
};

std::string keyOf(std::initializer_list<StringRef> parts) {
  CacheKey key;
  for (StringRef part : parts)
    key.add(part);
  return key.str();
}

TEST_F(CompileCacheTest, KeySeparatesItsParts) {
  EXPECT_EQ(keyOf({"ab", "c"}), keyOf({"ab", "c"}));
  EXPECT_NE(keyOf({"ab", "c"}), keyOf({"a", "bc"}));
  EXPECT_NE(keyOf({"ab", ""}), keyOf({"ab"}));
  EXPECT_EQ(keyOf({"x"}).size(), 64u);
}

TEST_F(CompileCacheTest, KeyReadsFiles) {
  std::string a = file("a", 10, 'a');
  CacheKey byContents, byText;
  ASSERT_TRUE(byContents.addFileContents(a));
  byText.add(std::string(10, 'a'));
  EXPECT_EQ(byContents.str(), byText.str());
  CacheKey missing;
  EXPECT_FALSE(missing.addFileContents((root + "/none").str()));
  EXPECT_FALSE(missing.addFileIdentity((root + "/none").str()));
  CacheKey before, after;
  ASSERT_TRUE(before.addFileIdentity(a));
  file("a", 11, 'a');
  ASSERT_TRUE(after.addFileIdentity(a));
  EXPECT_NE(before.str(), after.str());
}

TEST_F(CompileCacheTest, StoresAndFetches) {
  CompileCache cache(cacheDir);
  std::string error;
  ASSERT_TRUE(succeeded(cache.open(error))) << error;
  std::string artifact = file("artifact.so", 100, 'x');
  ASSERT_FALSE(fs::setPermissions(artifact, fs::perms(0755)));
  std::string output = (root + "/out.so").str();
  EXPECT_FALSE(cache.fetch("k", output));
  EXPECT_FALSE(fs::exists(output));

  ASSERT_TRUE(succeeded(cache.store("k", artifact, error))) << error;
  file("out.so", 5, 'o');
  ASSERT_TRUE(cache.fetch("k", output));
  EXPECT_EQ(contents(output), std::string(100, 'x'));
  EXPECT_EQ(*fs::getPermissions(output), fs::perms(0755));
  // No temporary file is left in the cache or next to the output.
  EXPECT_EQ(names(cacheDir), "k.so ");
  EXPECT_EQ(names(root), "artifact.so cache out.so ");
}

TEST_F(CompileCacheTest, EmptyEntryIsAMiss) {
  CompileCache cache(cacheDir);
  std::string error;
  ASSERT_TRUE(succeeded(cache.open(error))) << error;
  file("cache/k.so", 0, ' ');
  EXPECT_FALSE(cache.fetch("k", (root + "/out.so").str()));
}

TEST_F(CompileCacheTest, EvictsTheLeastRecentlyUsed) {
  // Three entries of 100 bytes do not fit in 280: the store of the third
  // evicts down to 210, the least recently used first. `a`, stored first
  // but fetched since, stays; `b` goes.
  CompileCache cache(cacheDir, 280);
  std::string error;
  ASSERT_TRUE(succeeded(cache.open(error))) << error;
  std::string output = (root + "/out.so").str();
  ASSERT_TRUE(succeeded(cache.store("a", file("a", 100, 'a'), error)));
  nextTick();
  ASSERT_TRUE(succeeded(cache.store("b", file("b", 100, 'b'), error)));
  nextTick();
  ASSERT_TRUE(cache.fetch("a", output));
  nextTick();
  ASSERT_TRUE(succeeded(cache.store("c", file("c", 100, 'c'), error)));
  EXPECT_TRUE(cache.fetch("a", output));
  EXPECT_FALSE(cache.fetch("b", output));
  EXPECT_TRUE(cache.fetch("c", output));
  EXPECT_EQ(contents(output), std::string(100, 'c'));
}

TEST_F(CompileCacheTest, RemovesStaleTemporaryFiles) {
  // A compile killed while it wrote an entry leaves its temporary file; the
  // next store removes it once it is an hour old, not before (another
  // compile may be writing it).
  CompileCache cache(cacheDir);
  std::string error;
  ASSERT_TRUE(succeeded(cache.open(error))) << error;
  std::string stale = file("cache/k.so.tmp-aaaaaa", 10, 's');
  std::string fresh = file("cache/k.so.tmp-bbbbbb", 10, 'f');
  int fd;
  ASSERT_FALSE(fs::openFileForWrite(stale, fd, fs::CD_OpenExisting));
  ASSERT_FALSE(fs::setLastAccessAndModificationTime(
      fd, std::chrono::system_clock::now() - std::chrono::hours(2)));
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  ASSERT_TRUE(succeeded(cache.store("k", file("k", 10, 'k'), error)));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
}

TEST_F(CompileCacheTest, SaysWhyADirectoryIsUnusable) {
  file("plain", 1, 'p');
  CompileCache cache((root + "/plain/cache").str());
  std::string error;
  EXPECT_TRUE(failed(cache.open(error)));
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
  EXPECT_NE(error.find("plain/cache"), std::string::npos) << error;
}

} // namespace
