//===- InferencePlanTest.cpp - the forward-only plan on a hand-made layer -===//
//
// dmc::bundle::planMemory's inference plan (docs/bundle-format.md,
// "Inference plan") on a chain whose saved activation dies early in
// inference: the offsets the plan reuses, what it leaves out, the faults
// its checker names by field, and the fallback before version 5.
//
//===----------------------------------------------------------------------===//
#include "compiler/bundle/MemoryPlan.h"
#include "runtime/format/ArenaPlan.h"

#include "PlanCheck.h"

#include <gtest/gtest.h>

#include <utility>

using namespace dmrt;

namespace {

constexpr ArenaPlanKind kTraining = ArenaPlanKind::Training,
                        kInference = ArenaPlanKind::Inference;

std::string checkerProblem(const Manifest &m, ArenaPlanKind kind = kTraining) {
  std::string path, message;
  return checkArenaPlan(m, path, message, kind) ? "" : path + ": " + message;
}

/// Forward x -> a -> b -> c -> y, backward (dy, a) -> g -> x.grad: `a` is
/// a saved activation. Training keeps a, b, c apart (a lives to step 4);
/// inference lets c take a's place (a dies at step 1) and gives the
/// backward-only g no offset; a backward kernel's workspace is only in the
/// training plan.
TEST(MemoryPlan, InferencePlanDropsSavedActivations) {
  Manifest m;
  auto tensor = [&](int64_t id, TensorRole role = TensorRole::Intermediate) {
    BundleTensor t;
    t.id = id;
    t.name = "t" + std::to_string(id);
    t.dims = "n";
    t.shape = {1000};
    t.bytes = 4000;
    t.role = role;
    m.tensors.push_back(t);
  };
  tensor(0, TensorRole::Input);      // x
  tensor(1);                          // a
  tensor(2);                          // b
  tensor(3);                          // c
  tensor(4, TensorRole::Output);     // y
  tensor(5, TensorRole::GradOutput); // dy
  tensor(6);                          // g (backward only)
  tensor(7, TensorRole::Grad);       // x.grad
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> io = {
      {{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}, {{5, 1}, {6}}, {{6}, {7}}};
  for (int64_t k = 0; k < int64_t(io.size()); ++k) {
    BundleKernel bk;
    bk.id = k;
    bk.name = bk.entry = "k" + std::to_string(k);
    bk.phase = k < 4 ? "forward" : "backward";
    bk.inputs = io[k].first;
    bk.outputs = io[k].second;
    m.kernels.push_back(bk);
    m.steps.push_back({BundleStep::Kernel, k});
  }
  m.kernels[5].workspaceBytes = 100;
  dmc::bundle::planMemory(m);
  ASSERT_EQ(checkerProblem(m), "");
  ASSERT_EQ(checkerProblem(m, kInference), "");
  EXPECT_EQ(dmc::test::naivePlanProblem(m, true), "");
  EXPECT_EQ(m.arenaBytes, 3 * 4096 + 256);
  EXPECT_EQ(m.inferenceArenaBytes, 2 * 4096);
  EXPECT_EQ(m.tensors[3].inferenceArenaOffset, m.tensors[1].inferenceArenaOffset);
  EXPECT_EQ(m.tensors[6].inferenceArenaOffset, -1);
  EXPECT_GE(m.tensors[6].arenaOffset, 0);
  EXPECT_EQ(m.kernels[5].inferenceWorkspaceOffset, -1);
  EXPECT_GE(m.kernels[5].workspaceOffset, 0);
  ArenaSummary s = summarizeArena(m);
  EXPECT_EQ(s.inferenceArenaBytes, 2 * 4096);
  EXPECT_EQ(s.savedActivationBytes, 4000);

  // Faults the inference checker names by field.
  std::string path, message;
  Manifest bad = m;
  bad.tensors[6].inferenceArenaOffset = 0;
  EXPECT_FALSE(checkArenaPlan(bad, path, message, kInference));
  EXPECT_EQ(path, "tensors[6].inference_arena");
  EXPECT_NE(message.find("no forward step uses this tensor"), std::string::npos) << message;
  bad = m;
  bad.kernels[5].inferenceWorkspaceOffset = 0;
  EXPECT_FALSE(checkArenaPlan(bad, path, message, kInference));
  EXPECT_EQ(path, "kernels[5].inference_workspace_offset");
  EXPECT_NE(message.find("phase is backward"), std::string::npos) << message;
  bad = m;
  bad.tensors[2].inferenceArenaOffset = bad.tensors[1].inferenceArenaOffset; // b onto a
  EXPECT_FALSE(checkArenaPlan(bad, path, message, kInference));
  EXPECT_NE(message.find("overlaps"), std::string::npos) << message;
  EXPECT_NE(message.find("inference plan"), std::string::npos) << message;
  // The training plan of the same layout would be wrong: a lives on.
  bad = m;
  bad.tensors[3].arenaOffset = bad.tensors[1].arenaOffset;
  EXPECT_FALSE(checkArenaPlan(bad, path, message));
  // Before version 5 there is no inference plan: inference uses the training one.
  Manifest old = m;
  old.version = 4;
  EXPECT_EQ(planUsed(old, kInference), kTraining);
  EXPECT_EQ(summarizeArena(old).inferenceArenaBytes, old.arenaBytes);
  EXPECT_EQ(planWorkspaceBytes(m, kInference), 0);
  EXPECT_EQ(planWorkspaceBytes(old, kInference), 100);
}

} // namespace
