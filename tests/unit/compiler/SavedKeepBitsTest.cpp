//===- SavedKeepBitsTest.cpp - dropout keep bits in loop-nest kernels -----===//
//
// On bert-large's configured training graph (dm-save-dropout-bits ran): the
// forward kernels holding a dropout pack its keep decisions into an output,
// the backward kernels read them instead of drawing, under every feasible
// configuration (each emitter and each way of drawing), and the sources
// compile through NVRTC. That the bits are right is the GPU tests' (every
// kernel's outputs against the interpreter's, the bits exactly).
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelEmitter.h"
#include "codegen/NodeGraph.h"
#include "codegen/nvrtc/NvrtcCompiler.h"
#include "compiler/Driver.h"
#include "ir/IterationSpace.h"

#include "Examples.h"
#include "KernelLookup.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace dmc::codegen;

namespace {

class SavedKeepBits : public ::testing::Test {
protected:
  void SetUp() override {
    auto m = dmc::buildGraph(ctx, std::string(DMC_EXAMPLES_DIR) + "/bert-large.json",
                             /*train=*/true, dmc::Stage::Config, dmc::PipelineOptions());
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    module = std::move(*m);
  }
  /// Every kernel named `name`.
  std::vector<dmc::dm::KernelOp> kernels(llvm::StringRef name) {
    std::vector<dmc::dm::KernelOp> found;
    for (auto k : dmc::layerFunction(*module).getOps<dmc::dm::KernelOp>())
      if (k.getName() == name)
        found.push_back(k);
    return found;
  }
  /// Each feasible configuration's source; one of each kind (vector width,
  /// lanes, split) also into `jobs` for NVRTC.
  std::vector<std::string> sources(dmc::dm::KernelOp k, std::vector<dmcgen::CompileJob> &jobs) {
    std::vector<std::string> out;
    std::set<std::string> kinds;
    for (const KernelConfig &c : enumerateConfigs(spaceOf(k))) {
      auto e = emitKernel(k, c, "k");
      EXPECT_TRUE(static_cast<bool>(e)) << c.describe();
      if (!e)
        continue;
      out.push_back(e->source);
      std::string kind = std::to_string(c.vec) + (c.laneDim ? "lanes" : "") +
                         (c.split > 1 ? "split" : "");
      if (kinds.insert(kind).second)
        jobs.push_back({"k", e->source});
    }
    EXPECT_FALSE(out.empty());
    return out;
  }
  static int count(const std::string &s, const std::string &what) {
    int n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
      ++n;
    return n;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(SavedKeepBits, LoweringPacksTheForwardDrawAndReadsTheBackwardOne) {
  dmc::dm::KernelOp fwd = kernels("gelu_dropout").at(0);
  KernelSpace s = spaceOf(fwd);
  // The bits' word dim is no loop of the kernel: still elementwise, 4 bytes
  // a point read, 2 written plus the bits' 1/8.
  EXPECT_EQ(s.row, "");
  EXPECT_EQ(s.outer.size(), 3u);
  ASSERT_EQ(s.tensors.size(), 3u);
  EXPECT_TRUE(s.isPacked(2));
  EXPECT_FALSE(s.isPacked(0) || s.isPacked(1));
  NodeGraph g;
  ASSERT_FALSE(static_cast<bool>(lowerKernel(fwd, s, g)));
  ASSERT_EQ(g.draws.size(), 1u);
  EXPECT_EQ(g.draws[0].bitsOutput, 1);
  EXPECT_EQ(g.draws[0].bitsInput, -1);
  EXPECT_EQ(g.outputs.back(), NodeGraph::kPacked);
  EXPECT_EQ(g.nodeOutputs().size(), 1u);

  dmc::dm::KernelOp bwd = kernels("dropout_dgelu_reduce_sum").at(0);
  KernelSpace b = spaceOf(bwd);
  NodeGraph h;
  ASSERT_FALSE(static_cast<bool>(lowerKernel(bwd, b, h)));
  ASSERT_EQ(h.draws.size(), 1u);
  EXPECT_EQ(h.draws[0].bitsOutput, -1);
  EXPECT_EQ(h.draws[0].bitsInput, int(bwd.getInputs().size()) - 1);
  EXPECT_EQ(h.draws[0].key(), 'u');
}

TEST_F(SavedKeepBits, EveryConfigurationStoresOrReadsTheBitsAndCompiles) {
  std::vector<dmcgen::CompileJob> jobs;
  int forward = 0, backward = 0;
  for (llvm::StringRef name : {"gelu_dropout", "bias_dropout_add_layernorm"})
    for (dmc::dm::KernelOp k : kernels(name))
      for (const std::string &src : sources(k, jobs)) {
        // One Philox group's byte per draw of a group, the draws kept.
        EXPECT_GE(count(src, "dmrt::dropoutKeepByte("), 1) << name.str();
        EXPECT_GE(count(src, "dmrt::dropoutWord"), 1) << name.str();
        ++forward;
      }
  for (llvm::StringRef name : {"dropout_dgelu_reduce_sum", "layernorm_dx_dropout_layernorm_dparams"})
    for (dmc::dm::KernelOp k : kernels(name))
      for (const std::string &src : sources(k, jobs)) {
        // No Philox call: the bits are read.
        EXPECT_EQ(count(src, "dmrt::dropoutWord"), 0) << name.str();
        EXPECT_EQ(count(src, "dmrt::dropoutKeepByte("), 0) << name.str();
        EXPECT_GE(count(src, "& 1u"), 1) << name.str();
        ++backward;
      }
  EXPECT_GT(forward, 10);
  EXPECT_GT(backward, 10);
  dmcgen::CompileOptions options; // sm_90a, no cache
  std::vector<std::string> errors;
  auto cubins = dmcgen::compileAll(jobs, options, 0, errors);
  for (size_t n = 0; n < jobs.size(); ++n)
    EXPECT_TRUE(errors[n].empty()) << errors[n];
  EXPECT_GE(jobs.size(), 6u);
}

// The kernels that fetch their inputs rows ahead fetch the keep-bits words
// with them: a word loaded where it is used stalls the sweep (H200, bert-large:
// the layer norms' gradients with their column sums took 21.9 us against 17.2
// drawing; fetched ahead, 18.6; the FFN's gradient 31.5 -> 31.1).
TEST_F(SavedKeepBits, WordsAreFetchedAheadWithTheInputs) {
  dmc::dm::KernelOp column = kernels("dropout_dgelu_reduce_sum").at(0);
  auto c = emitKernel(column, defaultConfig(spaceOf(column)), "k");
  ASSERT_TRUE(static_cast<bool>(c));
  EXPECT_GE(count(c->source, "pfb"), 3) << "no keep-bits words fetched ahead";
  EXPECT_EQ(count(c->source, "const uint32_t bww0_ = (uint32_t)in"), 0)
      << "a word loaded in the sweep";
  for (dmc::dm::KernelOp row : kernels("layernorm_dx_dropout_layernorm_dparams")) {
    KernelConfig config = defaultConfig(spaceOf(row));
    ASSERT_GT(config.perThread, 1) << "rows are fetched ahead only for several per thread";
    auto r = emitKernel(row, config, "k");
    ASSERT_TRUE(static_cast<bool>(r));
    EXPECT_GE(count(r->source, "pfb"), 3) << "no keep-bits words fetched ahead";
    EXPECT_GE(count(r->source, "= bwc"), 1) << "the later pass does not read the kept words";
    EXPECT_EQ(count(r->source, "const uint32_t bww0_ = (uint32_t)in"), 0)
        << "a word loaded in the sweep";
  }
}

TEST_F(SavedKeepBits, WithoutThePassEveryKernelDraws) {
  dmc::PipelineOptions drawn;
  drawn.dropoutBits = false;
  auto m = dmc::buildGraph(ctx, std::string(DMC_EXAMPLES_DIR) + "/bert-large.json",
                           /*train=*/true, dmc::Stage::Config, drawn);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  int kernels = 0;
  for (auto k : dmc::layerFunction(**m).getOps<dmc::dm::KernelOp>()) {
    if (k->hasAttr(dmc::dm::kFusedAttr) || k.getName().find("dropout") == llvm::StringRef::npos)
      continue;
    auto e = emitKernel(k, defaultConfig(spaceOf(k)), "k");
    ASSERT_TRUE(static_cast<bool>(e));
    EXPECT_EQ(count(e->source, "dmrt::dropoutKeepByte("), 0) << k.getName().str();
    EXPECT_GE(count(e->source, "dmrt::dropoutWord"), 1) << k.getName().str();
    ++kernels;
  }
  EXPECT_EQ(kernels, 6);
}

} // namespace
