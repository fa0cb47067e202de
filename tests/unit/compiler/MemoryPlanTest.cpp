//===- MemoryPlanTest.cpp - the static memory plan on synthetic manifests -===//
//
// Random manifests (step orders, sizes, roles, alias chains, contractions,
// workspaces) planned by dmc::bundle::planMemory must pass both the format's
// checker (dmrt::checkArenaPlan, also run by the reader) and the test's naive
// one (PlanCheck.h), survive the codec round trip, and reuse memory; planted
// faults (a block moved onto a live neighbour, misalignment, an offset on an
// alias or a caller buffer, a workspace shared) must be caught by both. The
// same holds for the inference plan (forward steps only), which is never
// larger than the training plan; there an offset on a backward-only tensor
// or a backward kernel's workspace is a fault too (a hand-made example:
// InferencePlanTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/bundle/MemoryPlan.h"
#include "runtime/format/ArenaPlan.h"

#include "PlanCheck.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace dmrt;

namespace {

/// A random but valid manifest (before planning).
Manifest randomManifest(std::mt19937 &rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Manifest m;
  m.model = "random";
  m.arch = "sm_90a";
  m.nvrtc = "13.0";
  m.version = 3; // planMemory raises it to 5 (both plans)
  int64_t nTensors = pick(4, 60);
  for (int64_t i = 0; i < nTensors; ++i) {
    BundleTensor t;
    t.id = i;
    t.name = "t" + std::to_string(i);
    t.dims = "n";
    t.dtype = pick(0, 1) ? DType::BF16 : DType::F32;
    t.shape = {pick(0, 9) == 0 ? pick(1, 40) : pick(1, 200000)};
    t.bytes = t.shape[0] * int64_t(dtypeSize(t.dtype));
    if (pick(0, 4) == 0)
      t.role = kAllTensorRoles[pick(0, 4)];
    t.hasInit = isArgumentRole(t.role); // version 4
    // A view of an earlier tensor (possibly itself a view) that is large enough.
    if (pick(0, 3) == 0) {
      std::vector<int64_t> fits;
      for (const BundleTensor &o : m.tensors)
        if (o.dtype == t.dtype && o.shape[0] >= 1)
          fits.push_back(o.id);
      if (!fits.empty()) {
        const BundleTensor &of = m.tensors[fits[pick(0, int64_t(fits.size()) - 1)]];
        t.isAlias = true;
        t.aliasOf = of.id;
        t.shape = {pick(1, of.shape[0])};
        t.bytes = t.shape[0] * int64_t(dtypeSize(t.dtype));
        t.aliasOffset = pick(0, of.shape[0] - t.shape[0]);
      }
    }
    m.tensors.push_back(t);
  }
  auto someTensor = [&] { return pick(0, nTensors - 1); };
  int64_t nKernels = pick(1, 40), nContractions = pick(0, 8);
  for (int64_t i = 0; i < nKernels; ++i) {
    BundleKernel k;
    k.id = i;
    k.name = k.entry = "k" + std::to_string(i);
    k.cubin = "kernels/k" + std::to_string(i) + ".cubin";
    k.source = "kernels/k" + std::to_string(i) + ".cu";
    for (int64_t n = pick(0, 3); n > 0; --n)
      k.inputs.push_back(someTensor());
    for (int64_t n = pick(1, 2); n > 0; --n)
      k.outputs.push_back(someTensor());
    if (pick(0, 4) == 0)
      k.workspaceBytes = pick(1, 20000);
    k.cubinBytes = 1000; // version 4
    m.kernels.push_back(k);
  }
  for (int64_t i = 0; i < nContractions; ++i) {
    BundleContraction c;
    c.id = i;
    c.equation = "synthetic";
    c.a = someTensor();
    c.b = someTensor();
    c.d = someTensor();
    c.unmappable = "synthetic";
    m.contractions.push_back(c);
  }
  for (int64_t i = 0; i < nKernels; ++i)
    m.steps.push_back({BundleStep::Kernel, i});
  for (int64_t i = 0; i < nContractions; ++i)
    m.steps.push_back({BundleStep::Contraction, i});
  std::shuffle(m.steps.begin(), m.steps.end(), rng);
  // Some kernels run twice (the format allows it).
  for (int64_t n = pick(0, 3); n > 0; --n)
    m.steps.insert(m.steps.begin() + pick(0, int64_t(m.steps.size())),
                   {BundleStep::Kernel, pick(0, nKernels - 1)});
  // The first half is the forward phase.
  for (size_t s = 0; s < m.steps.size(); ++s) {
    std::string phase = 2 * s < m.steps.size() ? "forward" : "backward";
    if (m.steps[s].kind == BundleStep::Kernel)
      m.kernels[m.steps[s].id].phase = phase;
    else
      m.contractions[m.steps[s].id].phase = phase;
  }
  m.reindex();
  return m;
}

constexpr ArenaPlanKind kTraining = ArenaPlanKind::Training,
                        kInference = ArenaPlanKind::Inference;

std::string checkerProblem(const Manifest &m, ArenaPlanKind kind = kTraining) {
  std::string path, message;
  return checkArenaPlan(m, path, message, kind) ? "" : path + ": " + message;
}

/// Two arena blocks of plan `kind` live together, with bytes > 0; false if none.
bool livePair(const Manifest &m, ArenaBlock &a, ArenaBlock &b, ArenaPlanKind kind = kTraining) {
  std::vector<ArenaBlock> blocks = arenaBlocks(m, kind);
  for (size_t i = 0; i < blocks.size(); ++i)
    for (size_t j = i + 1; j < blocks.size(); ++j)
      if (blocks[i].bytes > 0 && blocks[j].bytes > 0 && livesOverlap(blocks[i], blocks[j])) {
        a = blocks[i];
        b = blocks[j];
        return true;
      }
  return false;
}

void setOffset(Manifest &m, const ArenaBlock &b, int64_t offset,
               ArenaPlanKind kind = kTraining) {
  bool inference = kind == kInference;
  if (b.kind == ArenaBlock::Tensor)
    (inference ? m.tensors[b.index].inferenceArenaOffset : m.tensors[b.index].arenaOffset) =
        offset;
  else
    (inference ? m.kernels[b.index].inferenceWorkspaceOffset
               : m.kernels[b.index].workspaceOffset) = offset;
}

/// Plants the inference plan's faults into planned `m`; returns how many.
int plantInferenceFaults(const Manifest &m) {
  int planted = 0;
  Manifest back;
  std::string error;
  ArenaBlock a, b;
  if (livePair(m, a, b, kInference)) {
    Manifest bad = m;
    setOffset(bad, b, arenaOffsetOf(m, a, kInference), kInference);
    EXPECT_NE(checkerProblem(bad, kInference), "");
    EXPECT_NE(dmc::test::naivePlanProblem(bad, true), "");
    EXPECT_FALSE(parseManifest(writeManifest(bad), "m.json", back, error));
    EXPECT_NE(error.find(".inference_"), std::string::npos) << error;
    ++planted;
  }
  std::vector<ArenaBlock> blocks = arenaBlocks(m, kInference);
  if (!blocks.empty()) {
    Manifest bad = m;
    setOffset(bad, blocks[0], arenaOffsetOf(m, blocks[0], kInference) + 128, kInference);
    EXPECT_NE(checkerProblem(bad, kInference), "") << "misaligned";
    bad = m;
    setOffset(bad, blocks[0], -1, kInference);
    EXPECT_NE(checkerProblem(bad, kInference), "") << "missing offset";
    EXPECT_NE(dmc::test::naivePlanProblem(bad, true), "");
    if (blocks[0].bytes > 0) {
      bad = m;
      bad.inferenceArenaBytes = arenaOffsetOf(m, blocks[0], kInference);
      EXPECT_NE(checkerProblem(bad, kInference), "") << "past the end";
    }
    planted += 2;
  }
  // A training block that no forward step uses (backward only), or a
  // backward kernel's workspace, given an inference offset.
  std::map<size_t, bool> inInference;
  for (const ArenaBlock &x : blocks)
    inInference[x.index * 2 + (x.kind == ArenaBlock::Workspace)] = true;
  for (const ArenaBlock &x : arenaBlocks(m, kTraining))
    if (!inInference.count(x.index * 2 + (x.kind == ArenaBlock::Workspace))) {
      Manifest bad = m;
      setOffset(bad, x, 0, kInference);
      std::string problem = checkerProblem(bad, kInference);
      EXPECT_NE(problem.find(".inference_"), std::string::npos) << problem;
      EXPECT_NE(dmc::test::naivePlanProblem(bad, true), "");
      ++planted;
      break;
    }
  return planted;
}

TEST(MemoryPlan, RandomManifestsArePlannedSoundly) {
  std::mt19937 rng(20240917);
  int faultsPlanted = 0, reused = 0, inferenceFaults = 0, inferenceSmaller = 0;
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Manifest m = randomManifest(rng);
    dmc::bundle::planMemory(m);
    ASSERT_EQ(m.version, 5); // both plans: version 5
    ASSERT_EQ(checkerProblem(m), "");
    ASSERT_EQ(dmc::test::naivePlanProblem(m), "") << writeManifest(m);
    ASSERT_EQ(checkerProblem(m, kInference), "");
    ASSERT_EQ(dmc::test::naivePlanProblem(m, true), "") << writeManifest(m);
    ArenaSummary s0 = summarizeArena(m);
    EXPECT_EQ(m.inferenceArenaBytes % kArenaAlignment, 0);
    EXPECT_LE(m.inferenceArenaBytes, m.arenaBytes);
    EXPECT_LE(s0.inferencePeakLiveBytes, m.inferenceArenaBytes);
    inferenceSmaller += m.inferenceArenaBytes < m.arenaBytes;
    EXPECT_EQ(m.arenaBytes % kArenaAlignment, 0);
    ArenaSummary s = summarizeArena(m);
    EXPECT_LE(m.arenaBytes, s.intermediateBytes + s.workspaceBytes +
                                kArenaAlignment * (s.tensorBlocks + s.workspaceBlocks));
    reused += m.arenaBytes < s.intermediateBytes + s.workspaceBytes;
    // The codec keeps the plan, and the reader accepts it.
    std::string text = writeManifest(m), error;
    Manifest back;
    ASSERT_TRUE(parseManifest(text, "m.json", back, error)) << error << "\n" << text;
    EXPECT_EQ(writeManifest(back), text);
    // Planning is deterministic.
    Manifest again = back;
    dmc::bundle::planMemory(again);
    EXPECT_EQ(writeManifest(again), text);

    // Planted faults.
    ArenaBlock a, b;
    if (livePair(m, a, b)) {
      Manifest bad = m;
      setOffset(bad, b, arenaOffsetOf(m, a)); // onto a live neighbour
      EXPECT_NE(checkerProblem(bad), "");
      EXPECT_NE(dmc::test::naivePlanProblem(bad), "");
      EXPECT_FALSE(parseManifest(writeManifest(bad), "m.json", back, error));
      ++faultsPlanted;
    }
    std::vector<ArenaBlock> blocks = arenaBlocks(m);
    if (!blocks.empty()) {
      Manifest bad = m;
      setOffset(bad, blocks[0], arenaOffsetOf(m, blocks[0]) + 128);
      EXPECT_NE(checkerProblem(bad), "") << "misaligned";
      bad = m;
      setOffset(bad, blocks.back(), m.arenaBytes);
      if (blocks.back().bytes > 0) {
        EXPECT_NE(checkerProblem(bad), "") << "past the end";
      }
      bad = m;
      setOffset(bad, blocks[0], -1);
      EXPECT_NE(checkerProblem(bad), "") << "missing offset";
    }
    for (const BundleTensor &t : m.tensors)
      if (t.arenaOffset < 0) {
        Manifest bad = m;
        bad.tensors[&t - m.tensors.data()].arenaOffset = 0;
        EXPECT_NE(checkerProblem(bad), "") << "offset on an alias or caller buffer";
        bad = m;
        bad.tensors[&t - m.tensors.data()].inferenceArenaOffset = 0;
        EXPECT_NE(checkerProblem(bad, kInference), "") << "inference offset on one";
        break;
      }
    inferenceFaults += plantInferenceFaults(m);
  }
  EXPECT_GT(faultsPlanted, 200);
  EXPECT_GT(inferenceFaults, 400);
  EXPECT_GT(inferenceSmaller, 100) << "forward-only lifetimes should need less memory";
  EXPECT_GT(reused, 100) << "the plan should share memory between disjoint lifetimes";
}

/// A hand-made chain: the plan reuses dead memory, keeps views' bases alive,
/// gives workspaces their own region and leaves caller memory alone.
TEST(MemoryPlan, SmallChain) {
  Manifest m;
  auto tensor = [&](int64_t id, int64_t n, TensorRole role = TensorRole::Intermediate) {
    BundleTensor t;
    t.id = id;
    t.name = "t" + std::to_string(id);
    t.dims = "n";
    t.shape = {n};
    t.bytes = 4 * n;
    t.role = role;
    m.tensors.push_back(t);
  };
  tensor(0, 1000, TensorRole::Input); // x
  tensor(1, 1000);                     // a = k0(x)
  tensor(2, 1000);                     // b = k1(a)
  tensor(3, 1000);                     // c = k2(b)   (a dead: c may take its place)
  tensor(4, 500);                      // v: view of b, read by k3
  m.tensors.back().isAlias = true;
  m.tensors.back().aliasOf = 2;
  tensor(5, 1000, TensorRole::Output); // y = k3(c, v)
  for (int64_t k = 0; k < 4; ++k) {
    BundleKernel bk;
    bk.id = k;
    bk.name = bk.entry = "k" + std::to_string(k);
    bk.cubin = bk.name + ".cubin";
    m.kernels.push_back(bk);
    m.steps.push_back({BundleStep::Kernel, k});
  }
  m.kernels[0].inputs = {0}, m.kernels[0].outputs = {1};
  m.kernels[1].inputs = {1}, m.kernels[1].outputs = {2};
  m.kernels[2].inputs = {2}, m.kernels[2].outputs = {3};
  m.kernels[3].inputs = {3, 4}, m.kernels[3].outputs = {5};
  m.kernels[3].workspaceBytes = 100;
  dmc::bundle::planMemory(m);
  EXPECT_EQ(checkerProblem(m), "");
  EXPECT_EQ(m.tensors[0].arenaOffset, -1);
  EXPECT_EQ(m.tensors[4].arenaOffset, -1);
  EXPECT_EQ(m.tensors[5].arenaOffset, -1);
  // b lives through k3 (its view), so c cannot take b's place; c takes a's.
  EXPECT_EQ(m.tensors[3].arenaOffset, m.tensors[1].arenaOffset);
  EXPECT_NE(m.tensors[3].arenaOffset, m.tensors[2].arenaOffset);
  EXPECT_EQ(m.arenaBytes, 2 * 4096 + 256);
  EXPECT_EQ(m.kernels[3].workspaceOffset, 2 * 4096);
  EXPECT_EQ(summarizeArena(m).intermediateBytes, 12000);
}

} // namespace
