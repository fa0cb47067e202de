//===- StepDependenciesTest.cpp - graph edges from the memory steps share ===//
#include "runtime/StepDependencies.h"

#include <gtest/gtest.h>

#include <random>

using namespace dmrt;

namespace {

MemoryAccess rd(uintptr_t b, uintptr_t e) { return {b, e, false}; }
MemoryAccess wr(uintptr_t b, uintptr_t e) { return {b, e, true}; }
using Steps = std::vector<std::vector<MemoryAccess>>;
using Deps = std::vector<std::vector<int>>;

} // namespace

TEST(StepDependencies, EachHazardKindOrdersAndReadsAlone) {
  // 0 writes [0,100); 1 reads it (after write); 2 writes [50,60) (after the
  // read, and after 0's write through 1); 3 and 4 only read [0,10); 5 writes
  // [100,200), which touches [0,100) at no byte.
  Steps s = {{wr(0, 100)}, {rd(0, 100)}, {wr(50, 60)}, {rd(0, 10)}, {rd(0, 10)}, {wr(100, 200)}};
  Deps d = stepDependencies(s);
  EXPECT_EQ(d[0], std::vector<int>{});
  EXPECT_EQ(d[1], std::vector<int>{0});
  EXPECT_EQ(d[2], std::vector<int>{1}); // 0 -> 2 is implied through 1
  EXPECT_EQ(d[3], std::vector<int>{0}); // reads 0's bytes; 2 wrote elsewhere
  EXPECT_EQ(d[4], std::vector<int>{0}); // two reads need no order
  EXPECT_EQ(d[5], std::vector<int>{});  // [0,100) and [100,200) are disjoint
  std::string why;
  EXPECT_TRUE(ordersEveryConflict(s, d, why)) << why;
  EXPECT_EQ(criticalPathLength(d), 3);
}

TEST(StepDependencies, WriteAfterWriteAndAfterRead) {
  Steps s = {{rd(0, 8), wr(100, 108)}, {wr(0, 8)}, {wr(104, 112)}};
  Deps d = stepDependencies(s);
  EXPECT_EQ(d[1], std::vector<int>{0}); // write after read
  EXPECT_EQ(d[2], std::vector<int>{0}); // write after write, partly overlapping
}

/// A backward's shape: two GEMMs sharing the cuBLASLt workspace (W) must be
/// ordered; the kernel after the input gradient's GEMM overlaps the weight
/// gradient's GEMM.
TEST(StepDependencies, WeightGradientOverlapsTheInputGradientChain) {
  const uintptr_t W = 1 << 20;
  Steps s = {
      {rd(0, 10), wr(10, 20)},                          // 0 kernel: dy
      {rd(10, 20), rd(30, 40), wr(40, 50), wr(W, W + 8)}, // 1 GEMM: dx = dy w
      {rd(10, 20), rd(60, 70), wr(70, 80), wr(W, W + 8)}, // 2 GEMM: dw = dy^T x
      {rd(40, 50), wr(80, 90)},                         // 3 kernel on dx
  };
  Deps d = stepDependencies(s);
  EXPECT_EQ(d[1], std::vector<int>{0});
  EXPECT_EQ(d[2], std::vector<int>{1}); // the workspace; 0 through 1
  EXPECT_EQ(d[3], std::vector<int>{1}); // not 2: it may run beside the GEMM
  EXPECT_EQ(criticalPathLength(d), 3);
}

TEST(StepDependencies, TheCheckerCatchesADroppedOrBackwardEdge) {
  Steps s = {{wr(0, 4)}, {rd(0, 4), wr(4, 8)}, {rd(4, 8)}};
  Deps d = stepDependencies(s);
  std::string why;
  ASSERT_TRUE(ordersEveryConflict(s, d, why)) << why;
  Deps dropped = d;
  dropped[2].clear();
  EXPECT_FALSE(ordersEveryConflict(s, dropped, why));
  EXPECT_NE(why.find("steps 1 and 2"), std::string::npos) << why;
  Deps forward = d;
  forward[1] = {1};
  EXPECT_FALSE(ordersEveryConflict(s, forward, why));
  EXPECT_NE(why.find("not an earlier step"), std::string::npos) << why;
  EXPECT_FALSE(ordersEveryConflict(s, Deps(2), why));
}

TEST(StepDependencies, EmptyAccessesAndSerialChain) {
  Steps none = {{}, {}, {}};
  Deps d = stepDependencies(none);
  EXPECT_EQ(criticalPathLength(d), 1);
  Steps chain = {{wr(0, 1)}, {wr(0, 1)}, {wr(0, 1)}, {wr(0, 1)}};
  d = stepDependencies(chain);
  EXPECT_EQ(d[3], std::vector<int>{2});
  EXPECT_EQ(criticalPathLength(d), 4);
  EXPECT_EQ(criticalPathLength({}), 0);
}

/// Random phases: the edges order every conflict, and each is needed
/// (dropping any one leaves a conflict unordered: the reduction is minimal).
TEST(StepDependencies, RandomPhasesAreOrderedAndMinimal) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int n = 2 + int(rng() % 14);
    Steps s(static_cast<size_t>(n));
    for (auto &step : s) {
      int k = 1 + int(rng() % 3);
      for (int a = 0; a < k; ++a) {
        uintptr_t b = rng() % 64, len = 1 + rng() % 12;
        step.push_back({b, b + len, rng() % 3 == 0});
      }
    }
    Deps d = stepDependencies(s);
    std::string why;
    ASSERT_TRUE(ordersEveryConflict(s, d, why)) << "trial " << trial << ": " << why;
    for (size_t j = 0; j < d.size(); ++j)
      for (size_t e = 0; e < d[j].size(); ++e) {
        Deps fewer = d;
        fewer[j].erase(fewer[j].begin() + long(e));
        EXPECT_FALSE(ordersEveryConflict(s, fewer, why))
            << "trial " << trial << ": edge " << d[j][e] << " -> " << j << " is redundant";
      }
  }
}

TEST(StepDependencies, InterleavedStridedViewsRunSideBySide) {
  // Three [4 rows, 8 bytes] slices of one [4, 3 slices, 8 bytes] buffer at
  // 0: slice n's rows start at 8 n + 24 r (period 24, width 8).
  auto slice = [](int n, bool write) {
    return viewAccess(uintptr_t(8 * n), {4, 8}, {24, 1}, 1, write);
  };
  MemoryAccess q = slice(0, true), k = slice(1, true), v = slice(2, true);
  EXPECT_EQ(q.begin, 0u);
  EXPECT_EQ(q.end, 3u * 24 + 8);
  EXPECT_EQ(q.period, 24u);
  EXPECT_EQ(q.width, 8u);
  // The writers of dq and of dk, dv need no order; the reader of the whole
  // buffer (dense) waits for both.
  Steps s = {{k, v}, {q}, {rd(0, 96)}};
  Deps d = stepDependencies(s);
  EXPECT_EQ(d[1], std::vector<int>{});
  EXPECT_EQ(d[2], (std::vector<int>{0, 1}));
  std::string why;
  EXPECT_TRUE(ordersEveryConflict(s, d, why)) << why;
  // Planted: dq's slice one byte later touches dk's first byte: ordered.
  MemoryAccess shifted = viewAccess(1, {4, 8}, {24, 1}, 1, true);
  EXPECT_TRUE(accessesConflict({k}, {shifted}));
  // A run wrapping past the period's end meets the run at its start.
  EXPECT_TRUE(accessesConflict({viewAccess(20, {4, 8}, {24, 1}, 1, true)}, {q}));
  EXPECT_FALSE(accessesConflict({viewAccess(16, {4, 8}, {24, 1}, 1, true)}, {q, k}));
  // An order the periodic test rejects is still caught as missing.
  EXPECT_FALSE(ordersEveryConflict({{k}, {shifted}}, {{}, {}}, why));
}

TEST(StepDependencies, ViewAccessFallsBackToTheSpan) {
  // Dense: one range, no period.
  MemoryAccess dense = viewAccess(100, {4, 8}, {8, 1}, 2, false);
  EXPECT_EQ(dense.begin, 100u);
  EXPECT_EQ(dense.end, 164u);
  EXPECT_EQ(dense.period, 0u);
  // Outer strides that are no multiple of the period: the whole span.
  MemoryAccess odd = viewAccess(0, {3, 4, 2}, {20, 6, 1}, 1, true);
  EXPECT_EQ(odd.period, 0u);
  EXPECT_EQ(odd.end, uintptr_t(2 * 20 + 3 * 6 + 1 + 1));
  // No strides given: dense over the element count.
  EXPECT_EQ(viewAccess(0, {4, 8}, {}, 4, true).end, 128u);
}
