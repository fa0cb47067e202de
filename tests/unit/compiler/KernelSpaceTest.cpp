//===- KernelSpaceTest.cpp - kernel spaces, configurations, reasons -------===//
//
// On bert-large's fused training graph: the loop nest read from each
// kernel, the heuristic defaults (rows per block, split column reductions),
// and the reason given for each kind of infeasible configuration.
//
//===----------------------------------------------------------------------===//
#include "codegen/EmitSupport.h"
#include "codegen/KernelEmitter.h"
#include "compiler/Driver.h"

#include "Examples.h"
#include "KernelLookup.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using dmc::codegen::KernelConfig;

namespace {

class KernelSpace : public ::testing::Test {
protected:
  void SetUp() override {
    // The loop-nest kernels dm-fuse makes, softmax included (no fused
    // attention), the layer-norm parameter gradients apart (ColumnSums below).
    dmc::PipelineOptions options;
    options.fusedAttention = false;
    options.columnFusion = columnFusion();
    auto m = dmc::buildGraph(ctx, std::string(DMC_EXAMPLES_DIR) + "/bert-large.json",
                             /*train=*/true, dmc::Stage::Fuse, options);
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    module = std::move(*m);
  }
  dmc::dm::KernelOp kernel(llvm::StringRef name) { return dmc::test::kernelNamed(*module, name); }
  virtual bool columnFusion() const { return false; }
  std::string why(llvm::StringRef name, KernelConfig c) {
    return dmc::codegen::whyInfeasible(dmc::codegen::spaceOf(kernel(name)), c);
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(KernelSpace, LoopNestsFromTheIterationSpaces) {
  auto softmax = dmc::codegen::spaceOf(kernel("softmax_dropout"));
  EXPECT_EQ(softmax.outer, "bhj");
  EXPECT_EQ(softmax.row, "k");
  EXPECT_FALSE(softmax.finalReductions) << "softmax uses its reductions pointwise";
  auto dparams = dmc::codegen::spaceOf(kernel("layernorm_dparams"));
  EXPECT_EQ(dparams.outer, "i");
  EXPECT_EQ(dparams.row, "bj");
  EXPECT_EQ(dparams.rowPoints, 4096);
  EXPECT_TRUE(dparams.finalReductions);
  auto bias = dmc::codegen::spaceOf(kernel("bias"));
  EXPECT_TRUE(bias.row.empty());
}

TEST_F(KernelSpace, Defaults) {
  auto def = [&](llvm::StringRef name) {
    return dmc::codegen::defaultConfig(dmc::codegen::spaceOf(kernel(name))).describe();
  };
  EXPECT_EQ(def("softmax_dropout"), "block 1x64, vectors of 8");
  EXPECT_EQ(def("bias_dropout_add_layernorm"), "block 1x128, vectors of 8");
  EXPECT_EQ(def("reduce_sum"),
            "lanes along i, block 8x32, vectors of 8, rows split over 32 blocks");
  EXPECT_EQ(def("dropout_dgelu_reduce_sum"),
            "lanes along u, block 8x32, vectors of 8, rows split over 8 blocks");
  EXPECT_EQ(def("add"), "block 256x1, 2 points per thread, vectors of 8");
}

TEST_F(KernelSpace, HeavyColumnSweepsOverManyRowsUnrollByTheFetchDepth) {
  // bert-large's dgelu column sum: 16 rows a thread by default, 14 flop a
  // point (dropout, gelu gradient, sum): 224, unrolled whole (Defaults).
  auto s = dmc::codegen::spaceOf(kernel("dropout_dgelu_reduce_sum"));
  EXPECT_EQ(s.flopPerPoint, 14.0);
  EXPECT_EQ(dmc::codegen::spaceOf(kernel("reduce_sum")).flopPerPoint, 1.0);
  // Twice the rows (gpt2-medium's B8 L1024): 32 a thread, 448 > 256, so the
  // sweep is a loop unrolled by the 2 rows fetched ahead.
  s.rowPoints *= 2;
  KernelConfig def = dmc::codegen::defaultConfig(s);
  EXPECT_EQ(def.describe(),
            "lanes along u, block 8x32, vectors of 8, rows split over 8 blocks, sweep unrolled by 2");
  EXPECT_EQ(dmc::codegen::whyInfeasible(s, def), "");
  // The enumeration starts with it and lists it once, its whole twin too.
  auto all = dmc::codegen::enumerateConfigs(s);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().describe(), def.describe());
  std::set<std::string> seen;
  for (const KernelConfig &c : all)
    EXPECT_TRUE(seen.insert(c.describe()).second) << "listed twice: " << c.describe();
  KernelConfig whole = def;
  whole.unroll = 0;
  EXPECT_TRUE(seen.count(whole.describe()));
  // A light body over as many rows stays unrolled whole.
  s.flopPerPoint = 2;
  EXPECT_EQ(dmc::codegen::defaultConfig(s).unroll, 0);
}

TEST_F(KernelSpace, InfeasibleConfigurationsSayWhy) {
  EXPECT_EQ(why("reduce_sum", {'i', 8, 32, 1, 8, 32}), "");
  EXPECT_EQ(why("reduce_sum", {'i', 8, 32, 1, 8, 3}),
            "4096 rows do not split into 3 parts of at least 32");
  EXPECT_EQ(why("reduce_sum", {'i', 8, 32, 1, 8, 0}), "split must be at least 1");
  EXPECT_EQ(why("softmax_dropout", {'j', 8, 32, 1, 1, 4}),
            "a reduction feeds other ops in the kernel: the column strategy (lane vectors, "
            "split rows) needs one sweep");
  EXPECT_EQ(why("bias", {0, 256, 1, 1, 1, 4}),
            "splitting rows across blocks needs a reduction and a lane dim");
  EXPECT_EQ(why("stack_reduce_sum", {'p', 32, 32, 1, 8, 1}),
            "the lane dim 'p' of size 64 is not a multiple of 32 lanes x vectors of 8");
  EXPECT_EQ(why("reduce_sum", {'i', 64, 32, 1, 1, 1}),
            "64x32 = 2048 threads exceed the 1024 of a block");
  EXPECT_EQ(why("reduce_sum", {'i', 8, 2, 1, 1, 1}), "16 threads are not a whole number of warps");
  EXPECT_EQ(why("bias", {0, 256, 1, 1, 3, 1}), "vectors come in powers of two");
  EXPECT_EQ(why("softmax_dropout", {0, 1, 32, 1, 16, 1}),
            "16 elements of 2 bytes exceed a 16-byte access");
  EXPECT_EQ(why("softmax_dropout", {0, 1, 128, 1, 8, 1}),
            "128 threads x vectors of 8 exceed the row's 512 points");
  EXPECT_EQ(why("softmax_dropout", {'k', 8, 8, 1, 1, 1}),
            "lane dim 'k' is not an outer dim (bhj)");
}

TEST_F(KernelSpace, EnumerationStartsWithTheDefaultAndRecordsRejections) {
  auto s = dmc::codegen::spaceOf(kernel("layernorm_dparams"));
  std::vector<std::string> rejected;
  auto all = dmc::codegen::enumerateConfigs(s, &rejected);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().describe(), dmc::codegen::defaultConfig(s).describe());
  EXPECT_FALSE(rejected.empty());
  for (const std::string &r : rejected)
    EXPECT_NE(r.find(": "), std::string::npos) << "each rejection names its reason: " << r;
  for (const KernelConfig &c : all)
    EXPECT_EQ(dmc::codegen::whyInfeasible(s, c), "") << c.describe();
}

TEST_F(KernelSpace, SplitColumnReductionNeedsAWorkspace) {
  auto k = kernel("reduce_sum");
  auto s = dmc::codegen::spaceOf(k);
  auto e = dmc::codegen::emitKernel(k, dmc::codegen::defaultConfig(s), "k");
  ASSERT_TRUE(static_cast<bool>(e)) << llvm::toString(e.takeError());
  EXPECT_EQ(e->grid, 16);  // 1024 columns / (8 lanes x 8)
  EXPECT_EQ(e->gridY, 32); // the rows' split
  // One reduction's partials per split and column, then one counter per tile.
  EXPECT_EQ(e->workspaceBytes, 4 * (32 * 1024 + 16));
  auto unsplit = dmc::codegen::emitKernel(k, {'i', 8, 32, 1, 8, 1}, "k");
  ASSERT_TRUE(static_cast<bool>(unsplit));
  EXPECT_EQ(unsplit->workspaceBytes, 0);
  EXPECT_EQ(unsplit->source.find("workspace"), std::string::npos);
}

/// Codegen 6: a column kernel whose threads take a fixed number of rows (at
/// most 32) fetches them 2 ahead; more rows, or a ragged last one, keep the
/// plain loop. A row's address is r * stride when the input is dense over
/// the rows, and the decoded indices' sum otherwise.
TEST_F(KernelSpace, ColumnKernelsFetchTheirRowsAhead) {
  auto k = kernel("reduce_sum");
  auto s = dmc::codegen::spaceOf(k);
  auto fetching = dmc::codegen::emitKernel(k, {'i', 8, 32, 1, 8, 32}, "k"); // 4 rows each
  ASSERT_TRUE(static_cast<bool>(fetching)) << llvm::toString(fetching.takeError());
  EXPECT_NE(fetching->source.find("dmcFetchVec<8>(pf0[q], in0 + base_in0 + (r) * 1024);"),
            std::string::npos);
  EXPECT_NE(fetching->source.find("for (int it = 0; it < 4; ++it) {"), std::string::npos);
  auto many = dmc::codegen::emitKernel(k, {'i', 8, 32, 1, 8, 1}, "k"); // 128 rows each
  ASSERT_TRUE(static_cast<bool>(many));
  EXPECT_EQ(many->source.find("rows fetched ahead"), std::string::npos);
  EXPECT_NE(many->source.find("r < rowBegin + ROWS; r += TY"), std::string::npos);
  auto t = k.getInputs()[0].getType(); // [b, j, i]
  EXPECT_EQ(dmc::codegen::linearStride(t, "bj", s), 1024);
  EXPECT_EQ(dmc::codegen::linearStride(t, "jb", s), -1) << "j outside b is not dense";
  EXPECT_EQ(dmc::codegen::linearStride(t, "j", s), 1024);
  EXPECT_EQ(dmc::codegen::linearStride(t, "bi", s), -1);
}

/// dm-fuse-column-reductions on: the layer-norm input gradient's rows and
/// the parameter gradients' column sums in one kernel.
class ColumnSums : public KernelSpace {
protected:
  bool columnFusion() const override { return true; }
};

TEST_F(ColumnSums, RowsAndColumnSumsFromTheIterationSpaces) {
  auto s = dmc::codegen::spaceOf(kernel("layernorm_dx_dropout_layernorm_dparams"));
  EXPECT_TRUE(s.columnSums);
  EXPECT_EQ(s.outer, "bj");
  EXPECT_EQ(s.row, "i");
  EXPECT_FALSE(s.finalReductions) << "the input gradient uses its row sums pointwise";
  EXPECT_FALSE(dmc::codegen::spaceOf(kernel("bias_dropout_add_layernorm")).columnSums);
}

TEST_F(ColumnSums, DefaultsAndReasons) {
  auto s = dmc::codegen::spaceOf(kernel("layernorm_dx_dropout_layernorm_dparams"));
  // 4 rows side by side, 4 after each other: 256 blocks on bert-large's 4096 rows.
  EXPECT_EQ(dmc::codegen::defaultConfig(s).describe(),
            "block 4x64, 4 points per thread, vectors of 8");
  std::string name = "layernorm_dx_dropout_layernorm_dparams";
  EXPECT_EQ(why(name, {'i', 8, 32, 1, 8, 1}),
            "a kernel with column sums takes whole rows per block (no lane dim)");
  EXPECT_EQ(why(name, {0, 3, 64, 1, 8, 1}),
            "3 rows per block side by side must divide a warp's 32");
  EXPECT_EQ(why(name, {0, 4, 64, 3, 8, 1}), "4096 rows do not divide into blocks of 4 x 3");
  EXPECT_EQ(why(name, {0, 1, 32, 1, 4, 1}),
            "32 threads take more than 4 chunks each of a 1024-point row");
  std::vector<std::string> rejected;
  auto all = dmc::codegen::enumerateConfigs(s, &rejected);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().describe(), dmc::codegen::defaultConfig(s).describe());
  for (const KernelConfig &c : all) {
    EXPECT_EQ(dmc::codegen::whyInfeasible(s, c), "") << c.describe();
    int64_t blocks = s.outerPoints / (int64_t(c.tx) * c.perThread);
    EXPECT_TRUE(2 * blocks >= s.sms || c.tx * c.perThread <= 4) << c.describe();
    EXPECT_LE(blocks, 4 * s.sms) << c.describe();
  }
}

TEST_F(ColumnSums, PartialsPerBlockAndAFinishingLaunch) {
  auto k = kernel("layernorm_dx_dropout_layernorm_dparams");
  auto e = dmc::codegen::emitKernel(k, {0, 4, 64, 4, 8, 1}, "k");
  ASSERT_TRUE(static_cast<bool>(e)) << llvm::toString(e.takeError());
  EXPECT_EQ(e->grid, 256); // 4096 rows / (4 x 4)
  // Two sums (gamma, beta) x 256 blocks x 1024 row points, fp32.
  EXPECT_EQ(e->workspaceBytes, 4 * 2 * 256 * 1024);
  EXPECT_EQ(e->finishEntry, "k_finish");
  EXPECT_EQ(e->finishGrid, 2 * 1024 / 32);
  EXPECT_EQ(e->finishBlockX * e->finishBlockY, 256);
  EXPECT_NE(e->source.find("k_finish("), std::string::npos);
  // A kernel without column sums has no finishing launch.
  auto plain = kernel("bias_dropout_add_layernorm");
  auto p = dmc::codegen::emitKernel(plain, dmc::codegen::defaultConfig(dmc::codegen::spaceOf(plain)),
                                    "p");
  ASSERT_TRUE(static_cast<bool>(p));
  EXPECT_TRUE(p->finishEntry.empty());
  EXPECT_EQ(p->workspaceBytes, 0);
}

} // namespace
