//===- ManifestRoundTripTest.cpp - one manifest codec on both sides -------===//
//
// For every example model: `dmc compile`'s bundle writer (compiler side)
// writes a bundle, the runtime's loader reads it back (with its file
// checks), and the format's writer reproduces manifest.json byte for byte
// from what the reader kept, so no field is lost or reinterpreted between the
// two sides. A planted change to any parsed field shows in the text.
// The bundle's memory plans (training, version 3; inference, version 5)
// pass the format's checker (which the loader ran) and the test's naive
// one, and a block moved onto a neighbour live at the same time is caught by
// both, in each plan. The inference arena is smaller than the training one.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver.h"
#include "compiler/bundle/BundleWriter.h"
#include "runtime/Bundle.h"
#include "runtime/LayerPlan.h"
#include "runtime/format/ArenaPlan.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "Examples.h"
#include "PlanCheck.h"

#include <gtest/gtest.h>

#include <iostream>

using namespace mlir;

namespace {

class ManifestRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ManifestRoundTrip, CompilerWritesWhatTheRuntimeReadsBack) {
  MLIRContext ctx;
  auto module = dmc::buildGraph(ctx, GetParam(), /*train=*/true, dmc::Stage::Config);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("dmc-roundtrip", dir));
  std::string bundleDir = (dir + "/layer.dmlib").str();
  dmc::bundle::BundleOptions options;
  options.modelName = dmc::test::exampleName(GetParam());
  std::string log;
  llvm::raw_string_ostream logStream(log);
  llvm::Error e =
      dmc::bundle::writeBundle(dmc::layerFunction(**module), bundleDir, options, logStream);
  ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));

  auto text = llvm::MemoryBuffer::getFile(bundleDir + "/manifest.json");
  ASSERT_TRUE(static_cast<bool>(text));
  dmrt::Bundle bundle;
  std::string error;
  ASSERT_TRUE(dmrt::loadBundle(bundleDir, bundle, error)) << error;
  EXPECT_GT(bundle.kernels.size(), 5u);
  EXPECT_GT(bundle.contractions.size(), 5u);
  EXPECT_EQ(bundle.steps.size(), bundle.kernels.size() + bundle.contractions.size());
  EXPECT_EQ(dmrt::writeManifest(bundle), (*text)->getBuffer().str());

  // Planted faults: a changed field of each kind reaches the text.
  dmrt::Bundle changed = bundle;
  changed.tensors.back().role = dmrt::TensorRole::Intermediate == changed.tensors.back().role
                                    ? dmrt::TensorRole::Grad
                                    : dmrt::TensorRole::Intermediate;
  EXPECT_NE(dmrt::writeManifest(changed), (*text)->getBuffer().str());
  changed = bundle;
  changed.kernels.front().inputs.push_back(0);
  EXPECT_NE(dmrt::writeManifest(changed), (*text)->getBuffer().str());
  changed = bundle;
  changed.contractions.front().alpha *= 2;
  EXPECT_NE(dmrt::writeManifest(changed), (*text)->getBuffer().str());
  // Version 10 (6: every contraction runs the heuristic's algorithm by default).
  EXPECT_EQ(bundle.version, 10);
  // Version 10: where the Q, K and V gradients are written in place into
  // their stack (dm-stack-in-place), they are strided views of it, never of
  // another view; the planted loss of the strides reaches the text.
  for (const dmrt::BundleTensor &t : bundle.tensors)
    if (!t.aliasStrides.empty()) {
      EXPECT_FALSE(bundle.tensor(t.aliasOf)->isAlias) << t.name;
      EXPECT_EQ(t.aliasStrides.size(), t.shape.size()) << t.name;
      changed = bundle;
      changed.tensors[size_t(&t - bundle.tensors.data())].aliasStrides.clear();
      EXPECT_NE(dmrt::writeManifest(changed), (*text)->getBuffer().str()) << t.name;
    }
  // Version 9: a finishing launch names its outputs, the column sums (one
  // dim each here), and the planted loss of them reaches the text.
  for (const dmrt::BundleKernel &k : bundle.kernels) {
    EXPECT_EQ(k.finishEntry.empty(), k.finishOutputs.empty()) << k.name;
    for (int64_t n : k.finishOutputs)
      EXPECT_EQ(bundle.tensor(k.outputs[size_t(n)])->dims.size(), 1u) << k.name;
  }
  for (const dmrt::BundleKernel &k : bundle.kernels)
    if (!k.finishOutputs.empty()) {
      changed = bundle;
      changed.kernels[size_t(&k - bundle.kernels.data())].finishOutputs.clear();
      EXPECT_NE(dmrt::writeManifest(changed), (*text)->getBuffer().str());
      break;
    }
  for (const dmrt::BundleContraction &c : bundle.contractions)
    EXPECT_EQ(c.algorithm, "heuristic") << c.equation;
  changed = bundle;
  changed.contractions.front().algorithm =
      "cublaslt id=66 tile=20 stages=35 splitk=1 reduction=0 swizzle=0 custom=1 inner=0 cluster=3";
  EXPECT_NE(dmrt::writeManifest(changed), (*text)->getBuffer().str());

  // The memory plan.
  // The runtime's plan: every caller buffer covered by its caller tensors;
  // until the configuration maps every contraction, only that may fail.
  dmrt::LayerPlan plan;
  if (!dmrt::buildLayerPlan(bundle, plan, error)) {
    EXPECT_NE(error.find("has no cuBLASLt form"), std::string::npos) << error;
  }
  // Version 4: every cubin's size and checksum (loadBundle checked the
  // files), every argument's initialisation.
  for (const dmrt::BundleKernel &k : bundle.kernels)
    EXPECT_GT(k.cubinBytes, 0) << k.name;
  for (const dmrt::BundleTensor &t : bundle.tensors)
    EXPECT_EQ(t.hasInit, dmrt::isArgumentRole(t.role)) << t.name;
  EXPECT_EQ(dmc::test::naivePlanProblem(bundle), "");
  EXPECT_EQ(dmc::test::naivePlanProblem(bundle, /*inference=*/true), "");
  dmrt::ArenaSummary mem = dmrt::summarizeArena(bundle);
  EXPECT_GT(bundle.inferenceArenaBytes, 0);
  EXPECT_LT(bundle.inferenceArenaBytes, bundle.arenaBytes);
  EXPECT_EQ(mem.inferenceArenaBytes, bundle.inferenceArenaBytes);
  EXPECT_LE(mem.inferencePeakLiveBytes, bundle.inferenceArenaBytes);
  EXPECT_GT(mem.tensorBlocks, 5);
  EXPECT_LT(bundle.arenaBytes, mem.intermediateBytes + mem.workspaceBytes);
  EXPECT_GE(bundle.arenaBytes, mem.savedActivationBytes + mem.workspaceBytes);
  std::cout << "[ memory   ] " << options.modelName << ": arena " << bundle.arenaBytes
            << " B, intermediates " << mem.intermediateBytes << " B, workspaces "
            << mem.workspaceBytes << " B, saved activations " << mem.savedActivationBytes
            << " B, inference arena " << bundle.inferenceArenaBytes << " B (peak live "
            << mem.inferencePeakLiveBytes << " B)\n";
  for (dmrt::ArenaPlanKind kind : {dmrt::ArenaPlanKind::Training, dmrt::ArenaPlanKind::Inference}) {
    bool inference = kind == dmrt::ArenaPlanKind::Inference;
    std::vector<dmrt::ArenaBlock> blocks = dmrt::arenaBlocks(bundle, kind);
    bool planted = false;
    for (size_t i = 0; i < blocks.size() && !planted; ++i)
      for (size_t j = i + 1; j < blocks.size() && !planted; ++j)
        if (blocks[i].kind == dmrt::ArenaBlock::Tensor &&
            blocks[j].kind == dmrt::ArenaBlock::Tensor && blocks[i].bytes > 0 &&
            blocks[j].bytes > 0 && dmrt::livesOverlap(blocks[i], blocks[j])) {
          changed = bundle;
          dmrt::BundleTensor &moved = changed.tensors[blocks[j].index];
          (inference ? moved.inferenceArenaOffset : moved.arenaOffset) =
              dmrt::arenaOffsetOf(bundle, blocks[i], kind);
          std::string path, message;
          EXPECT_FALSE(dmrt::checkArenaPlan(changed, path, message, kind));
          EXPECT_NE(dmc::test::naivePlanProblem(changed, inference), "");
          // The other plan does not notice: the fault is in this one only.
          std::string otherPath, otherMessage;
          EXPECT_TRUE(dmrt::checkArenaPlan(changed, otherPath, otherMessage,
                                           inference ? dmrt::ArenaPlanKind::Training
                                                     : dmrt::ArenaPlanKind::Inference))
              << otherMessage;
          planted = true;
        }
    EXPECT_TRUE(planted) << dmrt::arenaPlanName(kind);
  }
  llvm::sys::fs::remove_directories(dir);
}

INSTANTIATE_TEST_SUITE_P(Examples, ManifestRoundTrip,
                         ::testing::ValuesIn(dmc::test::exampleModels()),
                         [](const auto &info) { return dmc::test::exampleName(info.param); });

} // namespace
