//===- KernelModelReport.cpp - the kernel cost model against measurements -===//
#include "compiler/bundle/KernelModelReport.h"

#include "codegen/KernelCostModel.h"
#include "compiler/bundle/Configuration.h"
#include "runtime/RankCorrelation.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;

namespace dmc::bundle {
namespace {

/// The op kind a kernel's measurements are summarized under.
std::string kindOf(dm::KernelOp kernel, const codegen::KernelSpace &s) {
  if (codegen::isFusedKernel(kernel))
    return "fused attention";
  if (s.columnSums)
    return "row kernels with column sums";
  if (s.row.empty())
    return "elementwise";
  if (codegen::isColumnConfig(codegen::defaultConfig(s)))
    return "column reductions";
  return "row reductions";
}

/// Adds one kernel to each replay: its default (when measured) and the
/// model's n - 1 cheapest others, against its fastest measured.
void replayPruning(const std::vector<double> &model, const std::vector<double> &measured,
                   const std::vector<bool> &isDefault, std::vector<PruneReplay> &replays) {
  if (replays.empty())
    for (int n : {4, 8, 12})
      replays.push_back({n});
  std::vector<size_t> order(model.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return model[a] < model[b]; });
  const double optimum = *std::min_element(measured.begin(), measured.end());
  for (PruneReplay &r : replays) {
    double best = -1;
    int others = 0;
    for (size_t i = 0; i < measured.size(); ++i)
      if (isDefault[i] && (best < 0 || measured[i] < best))
        best = measured[i];
    for (size_t i : order) {
      if (isDefault[i])
        continue;
      if (others++ >= r.n - 1)
        break;
      if (best < 0 || measured[i] < best)
        best = measured[i];
    }
    r.selectedUs += best;
    r.optimumUs += optimum;
    r.atOptimum += best <= optimum;
    ++r.kernels;
  }
}

} // namespace

KernelModelReport modelAgainstMeasurements(func::FuncOp f, const tuningdb::KnobSelection &sel) {
  std::map<std::string, const tuningdb::KernelChoice *> choices;
  for (const tuningdb::KernelChoice &c : sel.kernels)
    choices[c.kernel] = &c;
  KernelModelReport report;
  size_t n = 0;
  for (dm::KernelOp kernel : f.getOps<dm::KernelOp>()) {
    std::string name = kernelName(n++, kernel);
    auto it = choices.find(name);
    if (it == choices.end())
      continue;
    const tuningdb::KernelChoice &c = *it->second;
    codegen::KernelSpace space = codegen::spaceOf(kernel);
    std::vector<double> model, measured;
    std::vector<bool> isDefault;
    const std::string defaultKnobs = knobsOf(kernel).describe();
    for (size_t k = 0; k < c.candidateKnobs.size(); ++k) {
      codegen::KernelConfig config = fromConfigKernel(c.candidateKnobs[k]);
      std::optional<double> price = codegen::priceConfiguration(kernel, space, config);
      if (!price) // knobs this codegen no longer emits: not modelled
        continue;
      model.push_back(*price);
      measured.push_back(c.candidateUs[k]);
      isDefault.push_back(config.describe() == defaultKnobs);
    }
    if (model.size() < 3) {
      ++report.skipped;
      continue;
    }
    std::string kind = kindOf(kernel, space);
    auto k = std::find_if(report.kinds.begin(), report.kinds.end(),
                          [&](const KindCorrelation &x) { return x.kind == kind; });
    if (k == report.kinds.end()) {
      report.kinds.push_back({kind, 0, {}, {}});
      k = report.kinds.end() - 1;
    }
    replayPruning(model, measured, isDefault, report.prune);
    double rho = dmrt::spearman(model, measured);
    if (std::isnan(rho)) { // one side constant: nothing to rank
      ++k->alike;
      continue;
    }
    k->configs += int(model.size());
    k->rho.push_back(rho);
    k->kernels.push_back(name);
  }
  return report;
}

std::string KernelModelReport::describe() const {
  if (kinds.empty())
    return "kernel cost model: no kernel with 3 or more measured configurations\n";
  std::string out = "kernel cost model: rank correlation with the measured times per op kind:";
  double worst = 2;
  std::string worstName;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const KindCorrelation &k = kinds[i];
    double sum = 0;
    for (size_t j = 0; j < k.rho.size(); ++j) {
      sum += k.rho[j];
      if (k.rho[j] < worst) {
        worst = k.rho[j];
        worstName = k.kernels[j];
      }
    }
    if (!k.rho.empty())
      out += llvm::formatv("{0} {1} {2:f2} ({3} kernel(s), {4} configurations)", i ? ";" : "",
                           k.kind, sum / double(k.rho.size()), k.rho.size(), k.configs)
                 .str();
    else
      out += llvm::formatv("{0} {1} -", i ? ";" : "", k.kind).str();
    if (k.alike)
      out += llvm::formatv(" ({0} kernel(s) not ranked: their measured configurations priced or "
                           "timed alike)",
                           k.alike)
                 .str();
  }
  if (!worstName.empty())
    out += llvm::formatv("; lowest {0} {1:f2}", worstName, worst).str();
  for (const PruneReplay &r : prune)
    out += llvm::formatv("{0} the default and the model's {1} cheapest others measured: "
                         "+{2:f2}% kernel time, {3} of {4} kernels at their optimum",
                         &r == &prune.front() ? "; pruning replayed," : ";", r.n - 1,
                         100.0 * (r.selectedUs / r.optimumUs - 1), r.atOptimum, r.kernels)
               .str();
  if (skipped)
    out += llvm::formatv("; {0} kernel(s) with fewer than 3 measured configurations not "
                         "modelled", skipped)
               .str();
  return out + "\n";
}

} // namespace dmc::bundle
