//===- ModuleCacheTest.cpp - Cubins shared per process and device ---------===//
//
// runtime/ModuleCache.h with a fake ModuleLoader (no GPU): modules are
// counted tokens, so the tests see every load, lookup and unload, and the
// fake's failures carry driver statuses, which the cache must hand back
// with their messages.
//
//===----------------------------------------------------------------------===//
#include "runtime/ModuleCache.h"
#include "runtime/format/Checksum.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace dmrt;

namespace {

struct FakeLoader : ModuleLoader {
  explicit FakeLoader(int dev) : dev_(dev) {}
  int device() const override { return dev_; }
  CUresult loadModule(const std::vector<char> &image, CUmodule &out,
                      std::string &error) override {
    if (failLoad != CUDA_SUCCESS) {
      error = "cuModuleLoadData failed: fake status " + std::to_string(int(failLoad));
      return failLoad;
    }
    ++loads;
    lastImage = std::string(image.begin(), image.end());
    out = reinterpret_cast<CUmodule>(uintptr_t(++next));
    return CUDA_SUCCESS;
  }
  CUresult getFunction(CUmodule m, const std::string &name, CUfunction &out,
                       std::string &error) override {
    if (name == "missing") {
      error = "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (named symbol not found)";
      return CUDA_ERROR_NOT_FOUND;
    }
    ++lookups;
    out = reinterpret_cast<CUfunction>(reinterpret_cast<uintptr_t>(m) * 1000 + name.size());
    return CUDA_SUCCESS;
  }
  CUresult setMaxDynamicShared(CUfunction, int bytes, std::string &error) override {
    if (failShared) {
      error = "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) failed: CUDA_ERROR_INVALID_VALUE "
              "(invalid argument)";
      return CUDA_ERROR_INVALID_VALUE;
    }
    sharedSets.push_back(bytes);
    return CUDA_SUCCESS;
  }
  void unloadModule(CUmodule) override { ++unloads; }
  int dev_;
  CUresult failLoad = CUDA_SUCCESS;
  bool failShared = false;
  int loads = 0, lookups = 0, unloads = 0;
  std::vector<int> sharedSets;
  std::string lastImage;
  static inline int next = 0;
};

/// What loadBundle hands the cache: bytes and their checksum.
CubinImage image(const std::string &bytes) {
  CubinImage i;
  i.bytes.assign(bytes.begin(), bytes.end());
  i.checksum = fnv1a64(bytes.data(), bytes.size());
  return i;
}

/// A temporary file, removed at the end of the test.
struct TempFile {
  std::string path;
  CubinImage image;
  explicit TempFile(const std::string &bytes) {
    char name[] = "/tmp/dmrt-module-cache-XXXXXX";
    int fd = mkstemp(name);
    path = name;
    if (fd >= 0)
      close(fd);
    write(bytes);
  }
  void write(const std::string &bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
    image = ::image(bytes);
  }
  ~TempFile() { std::remove(path.c_str()); }
};

TEST(ModuleCache, TwoInstancesShareOneLoad) {
  ModuleRegistry reg;
  FakeLoader a(0), b(0);
  TempFile f("cubin-1");
  CUfunction fa = nullptr, fb = nullptr;
  std::string error;
  {
    ModuleCache ca(a, reg);
    ASSERT_EQ(ca.function(f.path, f.image, "k", 0, fa, error), CUDA_SUCCESS) << error;
    {
      ModuleCache cb(b, reg);
      ASSERT_EQ(cb.function(f.path, f.image, "k", 0, fb, error), CUDA_SUCCESS) << error;
      EXPECT_EQ(fa, fb);
      EXPECT_EQ(a.loads + b.loads, 1);
      EXPECT_EQ(a.lookups + b.lookups, 1); // the function too is looked up once
      EXPECT_EQ(reg.stats().live, 1u);
      EXPECT_EQ(cb.loaded(), 1u);
    }
    EXPECT_EQ(a.unloads + b.unloads, 0); // ca still holds it
    EXPECT_EQ(reg.stats().live, 1u);
  }
  EXPECT_EQ(a.unloads, 1); // the last release unloads, through its own loader
  ModuleRegistry::Stats s = reg.stats();
  EXPECT_EQ(s.loads, 1u);
  EXPECT_EQ(s.unloads, 1u);
  EXPECT_EQ(s.live, 0u);
}

TEST(ModuleCache, KeyedByDeviceAndChecksum) {
  ModuleRegistry reg;
  FakeLoader d0(0), d1(1);
  TempFile f("cubin-A");
  CUfunction fn;
  std::string error;
  ModuleCache c0(d0, reg), c1(d1, reg);
  ASSERT_EQ(c0.function(f.path, f.image, "k", 0, fn, error), CUDA_SUCCESS) << error;
  ASSERT_EQ(c1.function(f.path, f.image, "k", 0, fn, error), CUDA_SUCCESS) << error;
  EXPECT_EQ(d0.loads, 1);
  EXPECT_EQ(d1.loads, 1); // another device: its own module
  // The file rewritten in place: new bytes, a new module (loadBundle read anew).
  f.write("cubin-B");
  ModuleCache c2(d0, reg);
  ASSERT_EQ(c2.function(f.path, f.image, "k", 0, fn, error), CUDA_SUCCESS) << error;
  EXPECT_EQ(d0.loads, 2);
  EXPECT_EQ(d0.lastImage, "cubin-B");
  EXPECT_EQ(reg.stats().live, 3u);
  // The same bytes through another spelling of the path: one module.
  std::string other = f.path.substr(0, 5) + "./" + f.path.substr(5);
  ModuleCache c3(d0, reg);
  ASSERT_EQ(c3.function(other, f.image, "k", 0, fn, error), CUDA_SUCCESS) << error;
  EXPECT_EQ(d0.loads, 2);
}

TEST(ModuleCache, SharedMemoryLimitRaisedOncePerFunction) {
  ModuleRegistry reg;
  FakeLoader l(0);
  TempFile f("cubin-S");
  CUfunction fn;
  std::string error;
  ModuleCache a(l, reg), b(l, reg);
  ASSERT_EQ(a.function(f.path, f.image, "k", 100000, fn, error), CUDA_SUCCESS);
  ASSERT_EQ(b.function(f.path, f.image, "k", 100000, fn, error), CUDA_SUCCESS);
  ASSERT_EQ(b.function(f.path, f.image, "small", 1024, fn, error), CUDA_SUCCESS);
  EXPECT_EQ(l.sharedSets, (std::vector<int>{100000}));
}

// Every failure is a driver call's: its status comes back with the call's
// message, prefixed by the cubin (and entry), and takes no reference.
TEST(ModuleCache, FailuresReportTheDriverError) {
  ModuleRegistry reg;
  FakeLoader l(0);
  TempFile f("cubin-F");
  CUfunction fn;
  std::string error;
  {
    ModuleCache c(l, reg);
    // Not a bundle fault: the harness reports it as a CUDA failure.
    l.failLoad = CUDA_ERROR_OUT_OF_MEMORY;
    EXPECT_EQ(c.function(f.path, f.image, "k", 0, fn, error), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_NE(error.find(f.path + ": cuModuleLoadData failed: fake status 2"),
              std::string::npos)
        << error;
    EXPECT_FALSE(moduleErrorIsBundleFault(CUDA_ERROR_OUT_OF_MEMORY));
    l.failLoad = CUDA_ERROR_NO_BINARY_FOR_GPU; // a cubin for another arch
    EXPECT_EQ(c.function(f.path, f.image, "k", 0, fn, error), CUDA_ERROR_NO_BINARY_FOR_GPU);
    EXPECT_TRUE(moduleErrorIsBundleFault(CUDA_ERROR_NO_BINARY_FOR_GPU));
    EXPECT_EQ(reg.stats().live, 0u);
    EXPECT_EQ(c.loaded(), 0u);
    l.failLoad = CUDA_SUCCESS;
    ASSERT_EQ(c.function(f.path, f.image, "k", 0, fn, error), CUDA_SUCCESS) << error;
    EXPECT_EQ(c.function(f.path, f.image, "missing", 0, fn, error), CUDA_ERROR_NOT_FOUND);
    EXPECT_NE(error.find(f.path + ", entry missing: cuModuleGetFunction failed: "
                                  "CUDA_ERROR_NOT_FOUND (named symbol not found)"),
              std::string::npos)
        << error;
    EXPECT_TRUE(moduleErrorIsBundleFault(CUDA_ERROR_NOT_FOUND));
    // Whatever the requested size, a failed attribute call is reported as such.
    l.failShared = true;
    EXPECT_EQ(c.function(f.path, f.image, "big", 200000, fn, error), CUDA_ERROR_INVALID_VALUE);
    EXPECT_NE(error.find("entry big: dynamic shared memory of 200000 bytes: "
                         "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) failed: "
                         "CUDA_ERROR_INVALID_VALUE (invalid argument)"),
              std::string::npos)
        << error;
    l.failShared = false;
    ASSERT_EQ(c.function(f.path, f.image, "big", 200000, fn, error), CUDA_SUCCESS) << error;
  }
  EXPECT_EQ(reg.stats().live, 0u);
  EXPECT_EQ(l.unloads, 1);
}

TEST(ModuleCache, ThreadsOpeningTogetherLoadOnce) {
  ModuleRegistry reg;
  FakeLoader l(0);
  TempFile f("cubin-T");
  // One instance holds the module throughout: every thread must share it, so
  // a registry that loaded per instance would count more than one load.
  ModuleCache holder(l, reg);
  {
    CUfunction fn;
      std::string error;
    ASSERT_EQ(holder.function(f.path, f.image, "k", 0, fn, error), CUDA_SUCCESS) << error;
  }
  std::vector<std::thread> threads;
  int ok[8] = {};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        ModuleCache c(l, reg);
        CUfunction fn;
              std::string error;
        ok[t] += c.function(f.path, f.image, "k", 0, fn, error) == CUDA_SUCCESS;
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < 8; ++t)
    EXPECT_EQ(ok[t], 50);
  ModuleRegistry::Stats s = reg.stats();
  EXPECT_EQ(s.loads, 1u);
  EXPECT_EQ(s.unloads, 0u);
  EXPECT_EQ(s.live, 1u);
}

} // namespace
