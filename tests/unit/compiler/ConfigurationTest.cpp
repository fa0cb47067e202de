//===- ConfigurationTest.cpp - config.json on every example ---------------===//
//
// For every example: the configuration read off the config stage, written,
// parsed and applied to the fuse stage gives the same graph configuration
// (the same text when read off again); a configuration with one entry
// planted wrong is rejected naming that entry.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver.h"
#include "compiler/bundle/Configuration.h"
#include "runtime/format/Config.h"

#include "Examples.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class Configuration : public ::testing::TestWithParam<std::string> {
protected:
  /// The fuse stage with `text` applied; the error message or "".
  std::string apply(MLIRContext &ctx, const std::string &text,
                    OwningOpRef<ModuleOp> *keep = nullptr) {
    auto module = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Fuse);
    EXPECT_TRUE(static_cast<bool>(module));
    dmrt::Configuration config;
    std::string error;
    if (!dmrt::parseConfig(text, "cfg.json", config, error))
      return error;
    if (llvm::Error e = dmc::bundle::applyConfiguration(dmc::layerFunction(**module), config,
                                                        "cfg.json"))
      return llvm::toString(std::move(e));
    if (keep)
      *keep = std::move(*module);
    return "";
  }
};

TEST_P(Configuration, PrintedConfigurationAppliesToTheSameConfiguration) {
  MLIRContext ctx;
  auto configured = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Config);
  ASSERT_TRUE(static_cast<bool>(configured)) << llvm::toString(configured.takeError());
  auto config = dmc::bundle::extractConfiguration(dmc::layerFunction(**configured), "m");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  std::string text = dmrt::writeConfig(*config);

  OwningOpRef<ModuleOp> applied;
  ASSERT_EQ(apply(ctx, text, &applied), "");
  auto again = dmc::bundle::extractConfiguration(dmc::layerFunction(*applied), "m");
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(dmrt::writeConfig(*again), text);
}

TEST_P(Configuration, PlantedFaultsAreRejectedNamingTheEntry) {
  MLIRContext ctx;
  auto configured = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Config);
  ASSERT_TRUE(static_cast<bool>(configured));
  auto config = dmc::bundle::extractConfiguration(dmc::layerFunction(**configured), "m");
  ASSERT_TRUE(static_cast<bool>(config));
  ASSERT_FALSE(config->contractions.empty());
  {
    dmrt::Configuration bad = *config;
    bad.contractions[1].swap = !bad.contractions[1].swap;
    EXPECT_NE(apply(ctx, dmrt::writeConfig(bad)).find("contractions[1] (\"c1\"): swap"),
              std::string::npos);
  }
  {
    // Every moved tensor back in the frontend's layout: a contraction entry
    // disagrees with its tensors' layouts.
    auto fused = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Fuse);
    ASSERT_TRUE(static_cast<bool>(fused));
    auto frontend = dmc::bundle::extractConfiguration(dmc::layerFunction(**fused), "m");
    ASSERT_FALSE(static_cast<bool>(frontend)) << "the fuse stage has unmappable contractions";
    llvm::consumeError(frontend.takeError());
    dmrt::Configuration bad = *config;
    bad.tensors.clear();
    std::string error = apply(ctx, dmrt::writeConfig(bad));
    EXPECT_NE(error.find("disagrees with the layouts of its tensors"), std::string::npos) << error;
  }
  // The first loop-nest kernel and the first fused attention kernel.
  int loopNest = -1, fused = -1;
  for (auto [n, k] : llvm::enumerate(config->kernels)) {
    bool attention = llvm::StringRef(k.name).contains("_attention");
    int &slot = attention ? fused : loopNest;
    if (slot < 0)
      slot = int(n);
  }
  ASSERT_GE(loopNest, 0);
  ASSERT_GE(fused, 0) << "every example is bf16 with head dim 64: attention is fused";
  for (int n : {loopNest, fused}) {
    dmrt::Configuration bad = *config;
    bad.kernels[n].tx = 4096;
    bad.kernels[n].ty = 1;
    std::string error = apply(ctx, dmrt::writeConfig(bad));
    std::string entry = "kernels[" + std::to_string(n) + "] (\"" + bad.kernels[n].name + "\"): ";
    EXPECT_NE(error.find(entry + (n == fused ? "a fused attention kernel takes tiles"
                                             : "infeasible knobs")),
              std::string::npos)
        << error;
  }
  {
    // Tiles a fused attention kernel cannot run: each warp owns 16 rows.
    dmrt::Configuration bad = *config;
    bad.kernels[fused].blockM = 48;
    bad.kernels[fused].blockN = 64;
    bad.kernels[fused].warps = 4;
    bad.kernels[fused].wgmma = false;
    std::string error = apply(ctx, dmrt::writeConfig(bad));
    EXPECT_NE(error.find("kernels[" + std::to_string(fused) + "] (\"" + bad.kernels[fused].name +
                         "\"): infeasible tiles (attention tiles 48x64, 4 warps): "),
              std::string::npos)
        << error;
  }
  {
    // wgmma tiles (sm_90a, the default target's) need 64 rows a warpgroup and
    // the other dim a multiple of 64.
    dmrt::Configuration bad = *config;
    bad.kernels[fused].blockM = 64;
    bad.kernels[fused].blockN = 32;
    bad.kernels[fused].warps = 4;
    bad.kernels[fused].wgmma = true;
    std::string error = apply(ctx, dmrt::writeConfig(bad));
    EXPECT_NE(error.find("kernels[" + std::to_string(fused) + "] (\"" + bad.kernels[fused].name +
                         "\"): infeasible tiles (attention tiles 64x32, 4 warps, wgmma): "),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("a multiple of 64"), std::string::npos) << error;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, Configuration, ::testing::ValuesIn(dmc::test::exampleModels()),
                         [](const auto &info) { return dmc::test::exampleName(info.param); });

} // namespace
