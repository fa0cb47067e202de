//===- TiledKernelTest.cpp - elementwise kernels tiled in shared memory ---===//
//
// Kernels whose inputs are contiguous along another dim than their outputs
// (a transpose kernel; a map reading one tensor in another order, with a
// broadcast input and dropout): the tiled configuration is their default and
// first candidate, each infeasible tile says why, the emitted CUDA stages
// exactly the transposed inputs and compiles through NVRTC (no GPU needed;
// the GPU run checks the values against the interpreter), and the cost
// model prices the tile below the strided loop.
//
//===----------------------------------------------------------------------===//
#include "codegen/EmitSupport.h"
#include "codegen/KernelCostModel.h"
#include "codegen/KernelEmitter.h"
#include "codegen/KernelSchedule.h"
#include "codegen/nvrtc/NvrtcCompiler.h"
#include "compiler/Driver.h"
#include "ir/DmDialect.h"

#include "mlir/Parser/Parser.h"

#include "KernelLookup.h"

#include <gtest/gtest.h>

using namespace mlir;
using dmc::codegen::KernelConfig;

namespace {

/// y[i, b, j] = x[b, j, i] (bf16) and z[b, i, j] = dropout(w[b, j, i] + s[b, j]) (f32).
constexpr const char *kModule = R"mlir(
func.func @f(%x: !dm.tensor<[b=4, j=128, i=256], bf16>, %w: !dm.tensor<[b=4, j=128, i=256], f32>,
             %s: !dm.tensor<[b=4, j=128], f32>)
    -> (!dm.tensor<[i=256, b=4, j=128], bf16>, !dm.tensor<[b=4, i=256, j=128], f32>) {
  %y = dm.kernel "transpose"(%x) : (!dm.tensor<[b=4, j=128, i=256], bf16>) -> !dm.tensor<[i=256, b=4, j=128], bf16> {
  ^bb0(%a: !dm.tensor<[b=4, j=128, i=256], bf16>):
    %t = dm.transpose %a : !dm.tensor<[b=4, j=128, i=256], bf16> -> !dm.tensor<[i=256, b=4, j=128], bf16>
    dm.yield %t : !dm.tensor<[i=256, b=4, j=128], bf16>
  }
  %z = dm.kernel "bias_dropout"(%w, %s) : (!dm.tensor<[b=4, j=128, i=256], f32>, !dm.tensor<[b=4, j=128], f32>) -> !dm.tensor<[b=4, i=256, j=128], f32> {
  ^bb0(%a: !dm.tensor<[b=4, j=128, i=256], f32>, %c: !dm.tensor<[b=4, j=128], f32>):
    %t = dm.transpose %a : !dm.tensor<[b=4, j=128, i=256], f32> -> !dm.tensor<[b=4, i=256, j=128], f32>
    %m = dm.bias_add %t, %c : !dm.tensor<[b=4, i=256, j=128], f32>, !dm.tensor<[b=4, j=128], f32>
    %d = dm.dropout %m {p = 0.1 : f64, id = 3 : i64, order = "bij"} : !dm.tensor<[b=4, i=256, j=128], f32>
    dm.yield %d : !dm.tensor<[b=4, i=256, j=128], f32>
  }
  return %y, %z : !dm.tensor<[i=256, b=4, j=128], bf16>, !dm.tensor<[b=4, i=256, j=128], f32>
}
)mlir";

class TiledKernel : public ::testing::Test {
protected:
  void SetUp() override {
    dmc::loadDmcDialects(ctx);
    module = parseSourceString<ModuleOp>(kModule, &ctx);
    ASSERT_TRUE(module);
  }
  dmc::dm::KernelOp kernel(llvm::StringRef name) { return dmc::test::kernelNamed(*module, name); }
  std::string why(llvm::StringRef name, KernelConfig c) {
    return dmc::codegen::whyInfeasible(dmc::codegen::spaceOf(kernel(name)), c);
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(TiledKernel, TheTileIsTheDefaultAndTheFirstCandidate) {
  for (llvm::StringRef name : {"transpose", "bias_dropout"}) {
    auto s = dmc::codegen::spaceOf(kernel(name));
    KernelConfig def = dmc::codegen::defaultConfig(s);
    EXPECT_TRUE(dmc::codegen::isTiledConfig(s, def)) << name.str();
    EXPECT_EQ(def.describe(), "lanes along i, block 32x8, vectors of 2") << name.str();
    std::vector<std::string> rejected;
    auto all = dmc::codegen::enumerateConfigs(s, &rejected);
    ASSERT_FALSE(all.empty());
    EXPECT_EQ(all.front().describe(), def.describe());
    // 2 vector widths x 3 rows of threads, then the strided loops.
    EXPECT_EQ(llvm::count_if(all, [&](const KernelConfig &c) {
                return dmc::codegen::isTiledConfig(s, c);
              }),
              6);
    EXPECT_FALSE(dmc::codegen::isTiledConfig(s, all.back()));
  }
  auto s = dmc::codegen::spaceOf(kernel("bias_dropout"));
  EXPECT_EQ(dmc::codegen::tiledWriteDim(s), 'j');
  // The broadcast s[b, j] is read directly: only x is staged.
  EXPECT_EQ(dmc::codegen::tiledInputs(s, 'i'), std::vector<unsigned>{0});
}

TEST_F(TiledKernel, InfeasibleTilesSayWhy) {
  EXPECT_EQ(why("transpose", {'i', 32, 8, 1, 2}), "");
  EXPECT_EQ(why("transpose", {'i', 32, 16, 1, 1}), "");
  EXPECT_EQ(why("transpose", {'j', 32, 8, 1, 2}),
            "lane dim 'j' is the outputs' contiguous dim: nothing to transpose");
  EXPECT_EQ(why("transpose", {'b', 32, 8, 1, 2}),
            "no input is contiguous along lane dim 'b' and has the outputs' contiguous dim 'j'");
  EXPECT_EQ(why("transpose", {'i', 16, 8, 1, 2}),
            "a tile's rows take a warp's 32 lanes (tx 32, not 16)");
  EXPECT_EQ(why("transpose", {'i', 32, 8, 1, 4}),
            "tiles are 32 or 64 points wide: vectors of 1 or 2, not 4");
  EXPECT_EQ(why("transpose", {'i', 32, 24, 1, 2}), "24 rows of threads do not divide a tile of 64");
  EXPECT_EQ(why("transpose", {'i', 32, 12, 1, 2}), "12 rows of threads do not divide a tile of 64");
  EXPECT_EQ(why("transpose", {'i', 32, 8, 2, 2}),
            "a tile takes one point per thread and row (per_thread and split 1)");
  EXPECT_EQ(why("transpose", {'k', 32, 8, 1, 2}), "lane dim 'k' is not an outer dim (bji)");
}

TEST_F(TiledKernel, OnlyTransposedInputsGoThroughSharedMemory) {
  auto emitted = dmc::codegen::emitKernel(kernel("bias_dropout"), {'i', 32, 8, 1, 2}, "k1");
  ASSERT_TRUE(static_cast<bool>(emitted)) << llvm::toString(emitted.takeError());
  const std::string &src = emitted->source;
  EXPECT_NE(src.find("__shared__ float stage0[T][T + 1];"), std::string::npos) << src;
  EXPECT_EQ(src.find("stage1"), std::string::npos) << "the broadcast input is not staged";
  EXPECT_NE(src.find("dmrt::dropoutWord(seed, 3u"), std::string::npos) << src;
  EXPECT_NE(src.find("dmcStoreVec(out0 + "), std::string::npos) << src;
  EXPECT_EQ(emitted->grid, 4 * (256 / 64) * (128 / 64));
  EXPECT_EQ(emitted->blockX, 32);
  EXPECT_EQ(emitted->blockY, 8);
}

TEST_F(TiledKernel, TheScheduleStagesTheTransposedInputOnly) {
  // bias_dropout's tile as data (codegen/TileSchedule.h): lanes along i to
  // stage w, then along j; s ([b, j], contiguous along j) is read as a vector
  // in the second phase, not staged.
  auto schedule = [&](llvm::StringRef name, dmc::codegen::NodeGraph &g) {
    dmc::dm::KernelOp k = kernel(name);
    auto space = dmc::codegen::spaceOf(k);
    EXPECT_FALSE(static_cast<bool>(dmc::codegen::lowerKernel(k, space, g)));
    return dmc::codegen::scheduleTiledKernel(k, space, g, {'i', 32, 8, 1, 2});
  };
  dmc::codegen::NodeGraph g, h;
  dmc::codegen::TileSchedule t = schedule("bias_dropout", g);
  EXPECT_EQ(t.a, 'i');
  EXPECT_EQ(t.b, 'j');
  EXPECT_EQ(t.tile, 64);
  EXPECT_EQ(t.others, "b");
  EXPECT_EQ(t.tilesA * t.tilesB * 4, t.blocks);
  EXPECT_EQ(t.staged, (std::vector<unsigned>{0}));
  using R = dmc::codegen::TileRead;
  EXPECT_EQ(t.reads, (std::vector<R>{R::Staged, R::Vector}));
  EXPECT_EQ(schedule("transpose", h).reads, (std::vector<R>{R::Staged}));
}

TEST_F(TiledKernel, ScheduleKernelChoosesTheShapeAndDescribesIt) {
  // One schedule for every loop kernel (codegen/KernelSchedule.h): a tiled
  // configuration gets tiles, the strided loop of the same kernel rows.
  dmc::dm::KernelOp k = kernel("bias_dropout");
  dmc::codegen::KernelSpace space;
  dmc::codegen::NodeGraph g;
  ASSERT_FALSE(static_cast<bool>(
      dmc::codegen::lowerForConfig(k, {'i', 32, 8, 1, 2}, space, g)));
  dmc::codegen::KernelSchedule tiled =
      dmc::codegen::scheduleKernel(k, space, g, {'i', 32, 8, 1, 2});
  ASSERT_NE(tiled.tiles(), nullptr);
  EXPECT_STREQ(tiled.shapeName(), "tiles");
  EXPECT_EQ(dmc::codegen::describeSchedule(tiled, g),
            "  tiles: 64 x 64 over a = i (4 tiles) and b = j (2), vector 2; other dims b\n"
            "  launch: 32 blocks; staged in0\n"
            "    in0: staged in shared memory\n"
            "    in1: vector along b\n");
  int strided = 0;
  for (const KernelConfig &c : dmc::codegen::enumerateConfigs(space))
    if (!dmc::codegen::isTiledConfig(space, c)) {
      dmc::codegen::KernelSchedule rows = dmc::codegen::scheduleKernel(k, space, g, c);
      EXPECT_STREQ(rows.shapeName(), "rows") << c.describe();
      EXPECT_EQ(rows.tiles(), nullptr);
      ++strided;
    }
  EXPECT_GT(strided, 0);
  // What the description says is what the emitter prints from.
  auto direct = dmc::codegen::emitKernel(k, {'i', 32, 8, 1, 2}, "k1");
  auto scheduled = dmc::codegen::emitSchedule(k, space, g, {'i', 32, 8, 1, 2}, tiled, "k1");
  ASSERT_TRUE(direct && scheduled);
  EXPECT_EQ(direct->source, scheduled->source);
  // An infeasible configuration is an error naming the kernel.
  dmc::codegen::NodeGraph h;
  llvm::Error e = dmc::codegen::lowerForConfig(k, {'k', 32, 8, 1, 2}, space, h);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("kernel 'bias_dropout': configuration"),
            std::string::npos);
}

TEST_F(TiledKernel, EveryTileCompilesAndIsPricedBelowTheStridedLoop) {
  std::vector<dmcgen::CompileJob> jobs;
  for (llvm::StringRef name : {"transpose", "bias_dropout"}) {
    auto k = kernel(name);
    auto s = dmc::codegen::spaceOf(k);
    std::optional<double> tiled, strided;
    for (const KernelConfig &c : dmc::codegen::enumerateConfigs(s)) {
      std::string entry = "k_" + name.str() + "_" + std::to_string(jobs.size());
      auto emitted = dmc::codegen::emitKernel(k, c, entry);
      ASSERT_TRUE(static_cast<bool>(emitted)) << llvm::toString(emitted.takeError());
      jobs.push_back({entry, emitted->source});
      auto price = dmc::codegen::priceConfiguration(k, s, c);
      ASSERT_TRUE(price.has_value()) << c.describe();
      auto &best = dmc::codegen::isTiledConfig(s, c) ? tiled : strided;
      best = std::min(best.value_or(*price), *price);
    }
    ASSERT_TRUE(tiled && strided);
    EXPECT_LT(*tiled * 2, *strided) << name.str();
  }
  dmcgen::CompileOptions options; // sm_90a, no cache
  std::vector<std::string> errors;
  auto cubins = dmcgen::compileAll(jobs, options, 0, errors);
  for (size_t n = 0; n < jobs.size(); ++n) {
    EXPECT_TRUE(errors[n].empty()) << jobs[n].name << ": " << errors[n];
    EXPECT_GT(cubins[n].cubin.size(), 0u) << jobs[n].name;
  }
}

} // namespace
