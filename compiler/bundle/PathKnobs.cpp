//===- PathKnobs.cpp - Knob candidates of a path bundle's own kernels -----===//
#include "compiler/bundle/PathKnobs.h"
#include "compiler/bundle/KernelPruning.h"
#include "compiler/bundle/Configuration.h"

#include "codegen/KernelSpace.h"

#include "tuning-db/Problem.h"

#include <set>

namespace dmc::bundle {

namespace {
/// A kernel's tuning problem as the database keys its records (no device,
/// software or knobs: the same for every kernel compared).
std::string problemText(const dmrt::Manifest &m, const dmrt::BundleKernel &k) {
  tuningdb::Record r;
  tuningdb::fillProblem(tuningdb::kernelProblem(m, k), r);
  return tuningdb::key(r);
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

std::vector<std::map<size_t, int>> pathKnobBundles(mlir::func::FuncOp f,
                                                   const std::vector<size_t> &kernels, int n,
                                                   int limit) {
  std::vector<std::map<size_t, int>> out;
  std::vector<std::set<size_t>> measured = configurationsToMeasure(f, n);
  std::vector<dm::KernelOp> ops(f.getOps<dm::KernelOp>().begin(),
                                f.getOps<dm::KernelOp>().end());
  for (size_t k : kernels) {
    if (k >= measured.size())
      continue;
    // The default is the path bundle's own measurement (a kernel with fewer
    // configurations than n has it among every one).
    const std::string def = knobsOf(ops[k]).describe();
    auto all = codegen::isFusedKernel(ops[k]) ? codegen::enumerateFusedConfigs(ops[k])
                                              : codegen::enumerateConfigs(codegen::spaceOf(ops[k]));
    size_t j = 0;
    for (size_t i : measured[k]) {
      if ((limit > 0 && i >= size_t(limit)) || all[i].describe() == def)
        continue;
      if (out.size() <= j)
        out.emplace_back();
      out[j++][k] = int(i);
    }
  }
  return out;
}

} // namespace dmc::bundle
