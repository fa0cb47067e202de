//===- GraphFillsTest.cpp - planFill and the fill kernels' PTX ------------===//
//
// How a memset node becomes a fill kernel (no GPU: planFill is pure), and the
// PTX assembling for the GPUs dmc targets (ptxas of the toolkit, when the
// build found one; tests/gpu/GraphFillsGpuTest.cpp runs the kernels).
//
//===----------------------------------------------------------------------===//
#include "runtime/GraphFills.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using dmrt::FillPlan;
using dmrt::planFill;

TEST(GraphFills, ByteMemsetOfWholeWordsStoresWords) {
  FillPlan p = planFill(0x1000, 0, 0xAB, 1, 4096, 1);
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_EQ(p.storeBytes, 4);
  EXPECT_EQ(p.count, 1024u);
  EXPECT_EQ(p.value, 0xABABABABu);
  EXPECT_EQ(p.grid[0], 4u); // 1024 stores / 256 threads
  EXPECT_EQ(p.grid[1], 1u);
  EXPECT_EQ(p.block[0], 256u);
}

TEST(GraphFills, ValueBitsAboveTheElementAreDropped) {
  // cudaMemset takes an int of which only the low byte counts.
  FillPlan p = planFill(0x1000, 0, 0x1234567F, 1, 8, 1);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.value, 0x7F7F7F7Fu);
  p = planFill(0x1000, 0, 0xFFFF8001, 2, 8, 1);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.storeBytes, 4);
  EXPECT_EQ(p.value, 0x80018001u);
}

TEST(GraphFills, AlignmentAndLengthPickTheStoreWidth) {
  EXPECT_EQ(planFill(0x1001, 0, 0, 1, 64, 1).storeBytes, 1); // odd address
  EXPECT_EQ(planFill(0x1002, 0, 0, 1, 64, 1).storeBytes, 2);
  EXPECT_EQ(planFill(0x1000, 0, 0, 1, 63, 1).storeBytes, 1); // odd length
  EXPECT_EQ(planFill(0x1000, 0, 0, 1, 66, 1).storeBytes, 2);
  FillPlan h = planFill(0x1000, 0, 0x3C00, 2, 3, 1); // 6 bytes of halves
  ASSERT_TRUE(h.ok);
  EXPECT_EQ(h.storeBytes, 2);
  EXPECT_EQ(h.count, 3u);
  EXPECT_EQ(h.value, 0x3C00u);
  FillPlan w = planFill(0x1000, 0, 0xDEADBEEF, 4, 5, 1);
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.storeBytes, 4);
  EXPECT_EQ(w.count, 5u);
  EXPECT_EQ(w.value, 0xDEADBEEFu);
}

TEST(GraphFills, RowsUseThePitchAndOneBlockRowEach) {
  FillPlan p = planFill(0x1000, 1024, 7, 1, 100, 30);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.storeBytes, 4);
  EXPECT_EQ(p.count, 25u);
  EXPECT_EQ(p.pitch, 1024u);
  EXPECT_EQ(p.grid[1], 30u);
  // A pitch that breaks the word alignment of later rows narrows the stores.
  EXPECT_EQ(planFill(0x1000, 1026, 7, 1, 100, 30).storeBytes, 2);
  // One row: the pitch is not used.
  FillPlan one = planFill(0x1000, 3, 7, 1, 100, 1);
  EXPECT_EQ(one.storeBytes, 4);
  EXPECT_EQ(one.pitch, 0u);
}

TEST(GraphFills, LargeFillsLoopOverABoundedGrid) {
  FillPlan p = planFill(0x1000, 0, 0, 4, uint64_t(1) << 26, 1);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.grid[0], 4096u);
  EXPECT_EQ(p.count, uint64_t(1) << 26);
}

TEST(GraphFills, WhatStaysAMemsetNodeSaysWhy) {
  FillPlan p = planFill(0x1000, 0, 0, 8, 4, 1);
  EXPECT_FALSE(p.ok);
  EXPECT_STREQ(p.why, "an element size other than 1, 2 or 4 bytes");
  EXPECT_FALSE(planFill(0x1000, 0, 0, 4, 0, 1).ok);
  p = planFill(0x1000, 64, 0, 4, 4, 70000);
  EXPECT_FALSE(p.ok);
  EXPECT_STREQ(p.why, "more than 65535 rows");
  p = planFill(0x1002, 0, 0, 4, 4, 1);
  EXPECT_FALSE(p.ok);
  EXPECT_STREQ(p.why, "elements not aligned to their size");
}

#ifdef DMC_PTXAS
/// ptxas of the toolkit on the fill kernels for `arch`: its exit status.
static int assemble(const std::string &arch, const std::string &ptx) {
  std::string dir = ::testing::TempDir();
  std::string in = dir + "/dmrt-fills.ptx", out = dir + "/dmrt-fills-" + arch + ".cubin";
  std::ofstream(in) << ptx;
  std::string cmd = std::string("'") + DMC_PTXAS + "' -arch=" + arch + " '" + in + "' -o '" +
                    out + "' 2>&1";
  return std::system(cmd.c_str());
}

TEST(GraphFills, PtxAssemblesForEveryTargetArch) {
  for (const char *arch : {"sm_80", "sm_90", "sm_90a"})
    EXPECT_EQ(assemble(arch, dmrt::fillKernelsPtx()), 0) << arch;
  // The check can fail: a broken instruction is refused.
  std::string broken = dmrt::fillKernelsPtx();
  broken.replace(broken.find("st.global.u32"), 13, "st.global.q32");
  EXPECT_NE(assemble("sm_90", broken), 0);
}
#else
TEST(GraphFills, PtxAssemblesForEveryTargetArch) {
  GTEST_SKIP() << "the build found no ptxas (CUDAToolkit_BIN_DIR)";
}
#endif
