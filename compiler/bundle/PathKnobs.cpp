//===- PathKnobs.cpp - Knob candidates of a path bundle's own kernels -----===//
#include "compiler/bundle/PathKnobs.h"
#include "compiler/bundle/KernelPruning.h"

#include "tuning-db/Problem.h"

#include <set>

namespace dmc::bundle {

namespace {
/// A kernel's tuning problem as one string: every field the database matches.
std::string problemText(const dmrt::Manifest &m, const dmrt::BundleKernel &k) {
  tuningdb::Problem p = tuningdb::kernelProblem(m, k);
  std::string s = p.signature + "|" + p.dtype;
  for (const auto &[dim, size] : p.sizes)
    s += "|" + dim + "=" + std::to_string(size);
  for (const std::string &l : p.layouts)
    s += "|" + l;
  return s;
}
} // namespace

std::vector<size_t> kernelsOnlyIn(const dmrt::Manifest &path, const dmrt::Manifest &base) {
  std::set<std::string> known;
  for (const dmrt::BundleKernel &k : base.kernels)
    known.insert(problemText(base, k));
  std::vector<size_t> out;
  for (size_t i = 0; i < path.kernels.size(); ++i)
    if (!known.count(problemText(path, path.kernels[i])))
      out.push_back(i);
  return out;
}

std::map<size_t, std::vector<std::string>>
pathKnobSteps(mlir::func::FuncOp f, const std::vector<size_t> &kernels, int n) {
  std::map<size_t, std::vector<std::string>> out;
  std::vector<std::set<size_t>> measured = configurationsToMeasure(f, n);
  for (size_t k : kernels)
    if (k < measured.size())
      for (size_t i : measured[k])
        out[i].push_back("k" + std::to_string(k));
  return out;
}

} // namespace dmc::bundle
