//===- EpilogueSummary.h - the verdict of the cuBLASLt epilogue test ------===//
//
// Pure (no CUDA): the per-epilogue counts of GemmEpilogueTest.cpp, its
// summary lines and its verdict, unit-tested without a GPU
// (tests/unit/runtime/HarnessFaultTest.cpp).
//
// A case cuBLASLt has no kernel for is "unsupported": counted and listed,
// not a failure, except for an epilogue dmc proposes (requiredEpilogues):
// each of those must run in at least one case, or the test fails naming it.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_EPILOGUESUMMARY_H
#define DMC_TESTS_GPU_EPILOGUESUMMARY_H

#include "runtime/format/GemmDescriptor.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace dmc::test {

struct EpilogueStats {
  int ran = 0, unsupported = 0, failed = 0, invalid = 0;
  std::vector<std::string> unsupportedCases;
};

/// DEFAULT and the cuBLASLt forms of the epilogues dmc's fusion pass
/// proposes (passes/Fuse.cpp markEpilogues: bias, relu_aux, gelu_aux, drelu,
/// dgelu, bgrad; with and without a bias where cuBLASLt has both): each must
/// run somewhere. RELU, RELU_BIAS, GELU and GELU_BIAS (no aux output, which
/// training needs) may be unsupported by the installed cuBLASLt.
inline const std::vector<dmrt::Epilogue> &requiredEpilogues() {
  using E = dmrt::Epilogue;
  static const std::vector<E> r = {E::None,     E::Bias,       E::ReluAux,
                                   E::ReluAuxBias, E::GeluAux, E::GeluAuxBias,
                                   E::DRelu,    E::DReluBGrad, E::DGelu,
                                   E::DGeluBGrad, E::BGradA,   E::BGradB};
  return r;
}

struct EpilogueVerdict {
  bool pass = false;
  int ran = 0, unsupported = 0, failed = 0, invalid = 0;
  std::vector<std::string> lines; // the summary, to print
};

/// The table, the unsupported cases, one summary line ("N ran, M unsupported
/// by this cuBLASLt, F failed, I invalid layouts") and the verdict of `stats`
/// (epilogues in `order`; those absent were not selected). Fails when a case
/// failed, when none ran, when a required epilogue present in `stats` never
/// ran and, under `strict`, when any epilogue never ran.
inline EpilogueVerdict
summarizeEpilogues(const std::map<dmrt::Epilogue, EpilogueStats> &stats,
                   const std::vector<dmrt::Epilogue> &order, bool strict) {
  EpilogueVerdict v;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-14s %5s %12s %7s %8s", "epilogue", "ran",
                "unsupported", "failed", "invalid");
  v.lines.push_back(buf);
  std::vector<std::string> never, requiredNever;
  const auto &req = requiredEpilogues();
  for (dmrt::Epilogue e : order) {
    auto it = stats.find(e);
    if (it == stats.end())
      continue;
    const EpilogueStats &st = it->second;
    const char *name = dmrt::epilogueName(e);
    std::snprintf(buf, sizeof buf, "%-14s %5d %12d %7d %8d", name, st.ran,
                  st.unsupported, st.failed, st.invalid);
    v.lines.push_back(buf);
    v.ran += st.ran;
    v.unsupported += st.unsupported;
    v.failed += st.failed;
    v.invalid += st.invalid;
    if (st.ran == 0) {
      never.push_back(name);
      if (std::find(req.begin(), req.end(), e) != req.end())
        requiredNever.push_back(std::string(name) + " (" + std::to_string(st.unsupported) +
                                " unsupported, " + std::to_string(st.failed) + " failed, " +
                                std::to_string(st.invalid) + " invalid)");
    }
    if (!st.unsupportedCases.empty()) {
      std::string l = "unsupported by this cuBLASLt (" + std::string(name) + ", " +
                      std::to_string(st.unsupportedCases.size()) + "): ";
      for (size_t i = 0; i < st.unsupportedCases.size() && i < 4; ++i)
        l += (i ? ", [" : "[") + st.unsupportedCases[i] + "]";
      v.lines.push_back(l + (st.unsupportedCases.size() > 4 ? ", ..." : ""));
    }
  }
  std::snprintf(buf, sizeof buf,
                "SUMMARY: %d cases ran, %d unsupported by this cuBLASLt, %d failed, "
                "%d invalid layouts",
                v.ran, v.unsupported, v.failed, v.invalid);
  v.lines.push_back(buf);
  auto join = [](const std::vector<std::string> &xs) {
    std::string s;
    for (const std::string &x : xs)
      s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  v.pass = true;
  if (v.failed) {
    v.lines.push_back("FAIL: " + std::to_string(v.failed) + " cases failed");
    v.pass = false;
  }
  if (v.ran == 0) {
    v.lines.push_back("FAIL: no case ran (every configuration unsupported or invalid): "
                      "the test would pass vacuously");
    v.pass = false;
  }
  if (!requiredNever.empty()) {
    v.lines.push_back("FAIL: epilogues dmc proposes (passes/Fuse.cpp) never ran: " +
                      join(requiredNever));
    v.pass = false;
  }
  if (!never.empty())
    v.lines.push_back("no case ran: " + join(never));
  if (strict && !never.empty()) {
    v.lines.push_back("FAIL (--strict): epilogues without a case that ran");
    v.pass = false;
  }
  if (v.pass)
    v.lines.push_back("PASS: " + std::to_string(v.ran) +
                      " cases ran and matched the emulator; every epilogue dmc "
                      "proposes ran");
  return v;
}

} // namespace dmc::test

#endif // DMC_TESTS_GPU_EPILOGUESUMMARY_H
