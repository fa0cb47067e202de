//===- KernelSpaceTest.cpp - kernel spaces, configurations, reasons -------===//
//
// On bert-large's fused training graph: the loop nest read from each
// kernel, the heuristic defaults (rows per block, split column reductions),
// and the reason given for each kind of infeasible configuration.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelEmitter.h"
#include "compiler/Driver.h"

#include "Examples.h"

#include <gtest/gtest.h>

using namespace mlir;
using dmc::codegen::KernelConfig;

namespace {

class KernelSpace : public ::testing::Test {
protected:
  void SetUp() override {
    // The loop-nest kernels dm-fuse makes, softmax included (no fused attention).
    dmc::PipelineOptions options;
    options.fusedAttention = false;
    auto m = dmc::buildGraph(ctx, std::string(DMC_EXAMPLES_DIR) + "/bert-large.json",
                             /*train=*/true, dmc::Stage::Fuse, options);
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    module = std::move(*m);
  }
  /// The first kernel called `name`.
  dmc::dm::KernelOp kernel(llvm::StringRef name) {
    for (auto k : dmc::layerFunction(*module).getOps<dmc::dm::KernelOp>())
      if (k.getName() == name)
        return k;
    ADD_FAILURE() << "no kernel " << name.str();
    return {};
  }
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

} // namespace
