//===- DefaultLayoutsTest.cpp - every example's contractions map ----------===//
//
// dm-default-layouts on every example's training graph at full size: after
// the config stage no contraction lacks a cuBLASLt form (before it, some do:
// attention scores, attention.V, their gradients, the stacked dX), and the
// counter that says so catches a contraction planted back into an unmappable
// layout.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver.h"
#include "ir/DmDialect.h"
#include "passes/LayoutRewrite.h"

#include "Examples.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

int unmappable(func::FuncOp f) {
  int n = 0;
  for (auto c : f.getOps<dmc::dm::ContractOp>())
    n += !dmc::layout::isMappable(c);
  return n;
}

int transposeKernels(func::FuncOp f) {
  int n = 0;
  for (auto k : f.getOps<dmc::dm::KernelOp>())
    n += k.getName() == "transpose";
  return n;
}

class DefaultLayouts : public ::testing::TestWithParam<std::string> {};

TEST_P(DefaultLayouts, EveryContractionMapsAtTheConfigStage) {
  MLIRContext ctx;
  auto fused = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Fuse);
  ASSERT_TRUE(static_cast<bool>(fused)) << llvm::toString(fused.takeError());
  int before = unmappable(dmc::layerFunction(**fused));
  EXPECT_GT(before, 0) << "the frontend's layouts used to leave attention unmappable";

  auto configured = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Config);
  ASSERT_TRUE(static_cast<bool>(configured)) << llvm::toString(configured.takeError());
  func::FuncOp f = dmc::layerFunction(**configured);
  for (auto c : f.getOps<dmc::dm::ContractOp>()) {
    std::string why;
    EXPECT_TRUE(dmc::layout::isMappable(c, &why)) << why;
  }
  // Every example's operands come from kernels or contractions that can
  // write another layout: no transpose kernel is needed.
  EXPECT_EQ(transposeKernels(f), 0);
  // Arguments and results keep the frontend's layouts.
  func::FuncOp original = dmc::layerFunction(**fused);
  EXPECT_EQ(f.getFunctionType(), original.getFunctionType());
  std::cout << "[ figures  ] unmappable contractions " << before << " -> " << unmappable(f)
            << ", transposes " << transposeKernels(f) << "\n";

  // Planted: the scores contraction's first operand back in [b, j, h, p]
  // (attention unfused, so the scores are a contraction of their own).
  dmc::PipelineOptions unfused;
  unfused.fusedAttention = false;
  auto plain = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Config, unfused);
  ASSERT_TRUE(static_cast<bool>(plain)) << llvm::toString(plain.takeError());
  f = dmc::layerFunction(**plain);
  bool planted = false;
  for (auto c : f.getOps<dmc::dm::ContractOp>()) {
    auto a = cast<dmc::dm::TensorType>(c.getLhs().getType());
    if (a.getNames() != "bhjp")
      continue;
    auto saved = a;
    c.getLhs().setType(a.permutedTo("bjhp"));
    EXPECT_EQ(unmappable(f), 1) << "a planted unmappable layout must be counted";
    c.getLhs().setType(saved);
    planted = true;
    break;
  }
  ASSERT_TRUE(planted) << "no contraction reads a [b, h, j, p] operand to plant the fault in";
}

INSTANTIATE_TEST_SUITE_P(Examples, DefaultLayouts, ::testing::ValuesIn(dmc::test::exampleModels()),
                         [](const auto &info) { return dmc::test::exampleName(info.param); });

} // namespace
