//===- KernelCompileTest.cpp - every fused kernel compiles through NVRTC --===//
//
// For every example model at full size: each dm.kernel of the fused training
// graph is emitted under three configurations (the default and two others)
// and compiled for sm_90a. No GPU is needed; running them is the GPU tests'.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelEmitter.h"
#include "codegen/nvrtc/NvrtcCompiler.h"
#include "compiler/Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "Examples.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {


/// The default configuration and up to two other feasible ones.
std::vector<dmc::codegen::KernelConfig> threeConfigs(const dmc::codegen::KernelSpace &s) {
  dmc::codegen::KernelConfig def = dmc::codegen::defaultConfig(s);
  std::vector<dmc::codegen::KernelConfig> configs = {def};
  auto all = dmc::codegen::enumerateConfigs(s);
  for (const auto *c : {&all.front(), &all.back()})
    if (c->describe() != def.describe() && configs.size() < 3)
      configs.push_back(*c);
  for (const auto &c : all)
    if (configs.size() < 3 && llvm::none_of(configs, [&](const auto &k) {
          return k.describe() == c.describe();
        }))
      configs.push_back(c);
  return configs;
}

class KernelCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelCompile, EveryKernelUnderThreeConfigurations) {
  MLIRContext ctx;
  auto module = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Config);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  std::vector<dmcgen::CompileJob> jobs;
  int kernels = 0;
  for (auto kernel : dmc::layerFunction(**module).getOps<dmc::dm::KernelOp>()) {
    auto space = dmc::codegen::spaceOf(kernel);
    auto configs = threeConfigs(space);
    EXPECT_EQ(configs.size(), 3u) << kernel.getName().str();
    for (auto [n, config] : llvm::enumerate(configs)) {
      std::string entry = "k" + std::to_string(kernels) + "_" + std::to_string(n);
      auto emitted = dmc::codegen::emitKernel(kernel, config, entry);
      ASSERT_TRUE(static_cast<bool>(emitted)) << llvm::toString(emitted.takeError());
      jobs.push_back({entry, emitted->source});
    }
    ++kernels;
  }
  EXPECT_GT(kernels, 5);
  dmcgen::CompileOptions options; // sm_90a, no cache: every source really compiles
  std::vector<std::string> errors;
  auto cubins = dmcgen::compileAll(jobs, options, 0, errors);
  for (size_t n = 0; n < jobs.size(); ++n) {
    EXPECT_TRUE(errors[n].empty()) << errors[n];
    EXPECT_GT(cubins[n].cubin.size(), 0u) << jobs[n].name;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, KernelCompile, ::testing::ValuesIn(dmc::test::exampleModels()),
                         [](const auto &info) { return dmc::test::exampleName(info.param); });

} // namespace
