//===- KernelLaunchTest.cpp - A kernel's parameters, built once -----------===//
//
// runtime/KernelLaunch.h without a GPU: the parameter array follows the
// format's order (inputs, outputs, workspace, seed) and points at the
// values; a launch (withSeed) changes only the seed and allocates nothing,
// which is what keeps the executor's run path free of heap allocations.
// This binary counts operator new calls to see that.
//
//===----------------------------------------------------------------------===//
#include "runtime/KernelLaunch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

namespace {
thread_local long allocations = 0;
} // namespace

void *operator new(std::size_t n) {
  ++allocations;
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

using namespace dmrt;

namespace {

void *address(int64_t id) { return reinterpret_cast<void *>(uintptr_t(0x10000) * uintptr_t(id + 1)); }

BundleKernel kernel(std::vector<int64_t> in, std::vector<int64_t> out, int64_t workspace) {
  BundleKernel k;
  k.name = "k";
  k.inputs = std::move(in);
  k.outputs = std::move(out);
  k.workspaceBytes = workspace;
  return k;
}

TEST(KernelLaunch, ParametersInTheFormatsOrder) {
  void *ws = reinterpret_cast<void *>(uintptr_t(0xABC00));
  KernelLaunch l;
  l.build(kernel({4, 2}, {5}, 64), ws, address);
  ASSERT_EQ(l.values.size(), 4u);
  ASSERT_EQ(l.params.size(), 5u);
  EXPECT_EQ(l.values[0], address(4));
  EXPECT_EQ(l.values[1], address(2));
  EXPECT_EQ(l.values[2], address(5));
  EXPECT_EQ(l.values[3], ws);
  for (size_t i = 0; i < l.values.size(); ++i)
    EXPECT_EQ(l.params[i], &l.values[i]) << i;
  EXPECT_EQ(l.params[4], &l.seed);
  // Without a workspace there is no workspace parameter.
  KernelLaunch n;
  n.build(kernel({1}, {3, 7}, 0), ws, address);
  ASSERT_EQ(n.values.size(), 3u);
  EXPECT_EQ(n.values[2], address(7));
  EXPECT_EQ(n.params.back(), &n.seed);
}

TEST(KernelLaunch, LaunchesAllocateNothing) {
  KernelLaunch l;
  l.build(kernel({4, 2}, {5}, 64), nullptr, address);
  void **first = l.withSeed(1);
  long before = allocations;
  for (unsigned long long key = 0; key < 1000; ++key) {
    void **p = l.withSeed(key);
    ASSERT_EQ(p, first); // the same array, the new seed in its slot
    ASSERT_EQ(*static_cast<unsigned long long *>(p[4]), key);
  }
  EXPECT_EQ(allocations - before, 0);
  // A rebuild (new addresses) keeps the array where it was.
  l.build(kernel({4, 2}, {5}, 64), nullptr, [](int64_t id) { return address(id + 10); });
  EXPECT_EQ(l.withSeed(3), first);
  EXPECT_EQ(l.values[0], address(14));
}

} // namespace
