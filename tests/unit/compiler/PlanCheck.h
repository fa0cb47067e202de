//===- PlanCheck.h - an independent check of an arena plan, for tests -----===//
//
// A second, deliberately naive implementation of "no two live blocks share a
// byte": walks the steps one by one, recomputes from the kernels and
// contractions which base tensors each step touches (following alias chains
// by hand), and compares every pair of blocks live at that step. It shares
// nothing with runtime/format/ArenaPlan.cpp but the manifest structs, so a
// liveness bug there cannot hide itself here. With `inference` it checks the
// inference plan instead: only steps whose kernel or contraction is not
// "backward" count, a tensor no such step uses must have no offset, and
// only non-backward kernels have a workspace in it.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_PLANCHECK_H
#define DMC_TESTS_PLANCHECK_H

#include "runtime/format/Manifest.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace dmc::test {

/// Empty when the (training or inference) plan of `m` is sound; else the
/// first problem found.
inline std::string naivePlanProblem(const dmrt::Manifest &m, bool inference = false) {
  auto base = [&](int64_t id) {
    const dmrt::BundleTensor *t = m.tensor(id);
    while (t && t->isAlias)
      t = m.tensor(t->aliasOf);
    return t;
  };
  std::set<int64_t> callerBases;
  for (const dmrt::BundleTensor &t : m.tensors)
    if (t.role != dmrt::TensorRole::Intermediate)
      callerBases.insert(base(t.id)->id);
  // Arena tensors: [first, last] step; workspaces: always live.
  std::map<int64_t, std::pair<int64_t, int64_t>> span;
  for (size_t s = 0; s < m.steps.size(); ++s) {
    std::vector<int64_t> used;
    std::string phase;
    if (m.steps[s].kind == dmrt::BundleStep::Kernel) {
      const dmrt::BundleKernel *k = m.kernel(m.steps[s].id);
      used = k->inputs;
      used.insert(used.end(), k->outputs.begin(), k->outputs.end());
      phase = k->phase;
    } else {
      const dmrt::BundleContraction *c = m.contraction(m.steps[s].id);
      used = {c->a, c->b, c->d};
      if (c->bias >= 0)
        used.push_back(c->bias);
      phase = c->phase;
    }
    if (inference && phase == "backward")
      continue;
    for (int64_t id : used) {
      const dmrt::BundleTensor *b = base(id);
      auto it = span.find(b->id);
      if (it == span.end())
        span[b->id] = {int64_t(s), int64_t(s)};
      else
        it->second.second = int64_t(s);
    }
  }
  struct Region {
    std::string what;
    int64_t begin, end, first, last;
  };
  std::vector<Region> regions;
  int64_t always = 1LL << 40;
  int64_t arenaBytes = inference ? m.inferenceArenaBytes : m.arenaBytes;
  for (const dmrt::BundleTensor &t : m.tensors) {
    bool arena = !t.isAlias && !callerBases.count(t.id) && (!inference || span.count(t.id));
    int64_t offset = inference ? t.inferenceArenaOffset : t.arenaOffset;
    if (arena != (offset >= 0))
      return "tensor " + std::to_string(t.id) + ": arena offset given wrongly";
    if (!arena)
      continue;
    if (offset % 256 || offset + t.bytes > arenaBytes)
      return "tensor " + std::to_string(t.id) + ": misaligned or past the arena";
    // Never used: live at a fictitious step of its own before all others
    // (workspaces are live then too).
    std::pair<int64_t, int64_t> life{-always / 2 - t.id, -always / 2 - t.id};
    if (auto it = span.find(t.id); it != span.end())
      life = it->second;
    if (t.bytes > 0)
      regions.push_back({"tensor " + std::to_string(t.id), offset, offset + t.bytes,
                         life.first, life.second});
  }
  for (const dmrt::BundleKernel &k : m.kernels) {
    bool has = k.workspaceBytes > 0 && (!inference || k.phase != "backward");
    int64_t offset = inference ? k.inferenceWorkspaceOffset : k.workspaceOffset;
    if (has != (offset >= 0))
      return "kernel " + std::to_string(k.id) + ": workspace offset given wrongly";
    if (!has)
      continue;
    if (offset % 256 || offset + k.workspaceBytes > arenaBytes)
      return "kernel " + std::to_string(k.id) + ": workspace misaligned or past the arena";
    regions.push_back({"workspace " + std::to_string(k.id), offset, offset + k.workspaceBytes,
                       -always, always});
  }
  for (size_t i = 0; i < regions.size(); ++i)
    for (size_t j = i + 1; j < regions.size(); ++j) {
      const Region &a = regions[i], &b = regions[j];
      bool together = a.first <= b.last && b.first <= a.last;
      bool shared = a.begin < b.end && b.begin < a.end;
      if (together && shared)
        return a.what + " and " + b.what + " share bytes while both are live";
    }
  return "";
}

} // namespace dmc::test

#endif // DMC_TESTS_PLANCHECK_H
