//===- ModuleCacheTest.cpp - Cubins shared per process and device ---------===//
//
// runtime/ModuleCache.h with a fake ModuleLoader (no GPU): modules are
// counted tokens, so the tests see every load, lookup and unload.
//
//===----------------------------------------------------------------------===//
#include "runtime/ModuleCache.h"

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
  bool loadModule(const std::vector<char> &image, const std::string &what, CUmodule &out,
                  std::string &error) override {
    if (failLoad) {
      error = what + ": fake load failure";
      return false;
    }
    ++loads;
    lastImage = std::string(image.begin(), image.end());
    out = reinterpret_cast<CUmodule>(uintptr_t(++next));
    return true;
  }
  bool getFunction(CUmodule m, const std::string &name, CUfunction &out,
                   std::string &error) override {
    if (name == "missing") {
      error = "entry missing: not found";
      return false;
    }
    ++lookups;
    out = reinterpret_cast<CUfunction>(reinterpret_cast<uintptr_t>(m) * 1000 + name.size());
    return true;
  }
  bool setMaxDynamicShared(CUfunction, int bytes, std::string &) override {
    sharedSets.push_back(bytes);
    return true;
  }
  void unloadModule(CUmodule) override { ++unloads; }
  int dev_;
  bool failLoad = false;
  int loads = 0, lookups = 0, unloads = 0;
  std::vector<int> sharedSets;
  std::string lastImage;
  static inline int next = 0;
};

/// A temporary file, removed at the end of the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string &bytes) {
    char name[] = "/tmp/dmrt-module-cache-XXXXXX";
    int fd = mkstemp(name);
    path = name;
    if (fd >= 0)
      close(fd);
    write(bytes);
  }
  void write(const std::string &bytes) { std::ofstream(path, std::ios::binary) << bytes; }
  ~TempFile() { std::remove(path.c_str()); }
};

TEST(ModuleCache, TwoInstancesShareOneLoad) {
  ModuleRegistry reg;
  FakeLoader a(0), b(0);
  TempFile f("cubin-1");
  CUfunction fa = nullptr, fb = nullptr;
  bool deviceError = false;
  std::string error;
  {
    ModuleCache ca(a, reg);
    ASSERT_TRUE(ca.function(f.path, "k", 0, fa, deviceError, error)) << error;
    {
      ModuleCache cb(b, reg);
      ASSERT_TRUE(cb.function(f.path, "k", 0, fb, deviceError, error)) << error;
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
  bool deviceError = false;
  std::string error;
  ModuleCache c0(d0, reg), c1(d1, reg);
  ASSERT_TRUE(c0.function(f.path, "k", 0, fn, deviceError, error)) << error;
  ASSERT_TRUE(c1.function(f.path, "k", 0, fn, deviceError, error)) << error;
  EXPECT_EQ(d0.loads, 1);
  EXPECT_EQ(d1.loads, 1); // another device: its own module
  // The file rewritten in place: new bytes, a new module (a fresh cache reads it).
  f.write("cubin-B");
  ModuleCache c2(d0, reg);
  ASSERT_TRUE(c2.function(f.path, "k", 0, fn, deviceError, error)) << error;
  EXPECT_EQ(d0.loads, 2);
  EXPECT_EQ(d0.lastImage, "cubin-B");
  EXPECT_EQ(reg.stats().live, 3u);
  // The same bytes through another spelling of the path: one module.
  std::string other = f.path.substr(0, 5) + "./" + f.path.substr(5);
  ModuleCache c3(d0, reg);
  ASSERT_TRUE(c3.function(other, "k", 0, fn, deviceError, error)) << error;
  EXPECT_EQ(d0.loads, 2);
}

TEST(ModuleCache, SharedMemoryLimitRaisedOncePerFunction) {
  ModuleRegistry reg;
  FakeLoader l(0);
  TempFile f("cubin-S");
  CUfunction fn;
  bool deviceError = false;
  std::string error;
  ModuleCache a(l, reg), b(l, reg);
  ASSERT_TRUE(a.function(f.path, "k", 100000, fn, deviceError, error));
  ASSERT_TRUE(b.function(f.path, "k", 100000, fn, deviceError, error));
  ASSERT_TRUE(b.function(f.path, "small", 1024, fn, deviceError, error));
  EXPECT_EQ(l.sharedSets, (std::vector<int>{100000}));
}

TEST(ModuleCache, FailuresTakeNoReference) {
  ModuleRegistry reg;
  FakeLoader l(0);
  TempFile f("cubin-F");
  CUfunction fn;
  bool deviceError = false;
  std::string error;
  {
    ModuleCache c(l, reg);
    EXPECT_FALSE(c.function(f.path + ".absent", "k", 0, fn, deviceError, error));
    EXPECT_FALSE(deviceError); // unreadable file
    EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
    l.failLoad = true;
    EXPECT_FALSE(c.function(f.path, "k", 0, fn, deviceError, error));
    EXPECT_TRUE(deviceError);
    EXPECT_EQ(reg.stats().live, 0u);
    l.failLoad = false;
    ASSERT_TRUE(c.function(f.path, "k", 0, fn, deviceError, error)) << error;
    EXPECT_FALSE(c.function(f.path, "missing", 0, fn, deviceError, error));
    EXPECT_NE(error.find("entry missing"), std::string::npos) << error;
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
    bool deviceError = false;
    std::string error;
    ASSERT_TRUE(holder.function(f.path, "k", 0, fn, deviceError, error)) << error;
  }
  std::vector<std::thread> threads;
  int ok[8] = {};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        ModuleCache c(l, reg);
        CUfunction fn;
        bool deviceError = false;
        std::string error;
        ok[t] += c.function(f.path, "k", 0, fn, deviceError, error);
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
