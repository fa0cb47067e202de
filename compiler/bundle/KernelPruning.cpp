//===- KernelPruning.cpp - which knob configurations the tuner measures --===//
#include "compiler/bundle/KernelPruning.h"

#include "codegen/KernelCostModel.h"
#include "compiler/bundle/Configuration.h"

#include <algorithm>
#include <numeric>

using namespace mlir;

namespace dmc::bundle {

std::vector<std::set<size_t>> configurationsToMeasure(func::FuncOp f, int n) {
  std::vector<std::set<size_t>> out;
  for (dm::KernelOp kernel : f.getOps<dm::KernelOp>()) {
    bool fused = codegen::isFusedKernel(kernel);
    codegen::KernelSpace space = codegen::spaceOf(kernel);
    auto all = fused ? codegen::enumerateFusedConfigs(kernel) : codegen::enumerateConfigs(space);
    std::set<size_t> keep;
    if (n <= 0 || all.size() < size_t(n)) {
      for (size_t i = 0; i < all.size(); ++i)
        keep.insert(i);
      out.push_back(std::move(keep));
      continue;
    }
    const std::string def = knobsOf(kernel).describe();
    std::vector<double> price(all.size(), -1);
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].describe() != def) // default.dmlib measures the default
        // Knobs the emitter rejects are measured first, so that the failure
        // is seen where it belongs.
        price[i] = codegen::priceConfiguration(kernel, space, all[i]).value_or(0);
    std::vector<size_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return price[a] < price[b]; });
    for (size_t i : order)
      if (price[i] >= 0 && keep.size() < size_t(n - 1))
        keep.insert(i);
    out.push_back(std::move(keep));
  }
  return out;
}

std::vector<std::map<size_t, int>> rankedBundles(const std::vector<std::set<size_t>> &measured,
                                                 int limit) {
  std::vector<std::map<size_t, int>> out;
  for (size_t k = 0; k < measured.size(); ++k) {
    size_t j = 0;
    for (size_t i : measured[k]) {
      if (limit > 0 && j >= size_t(limit))
        break;
      if (out.size() <= j)
        out.emplace_back();
      out[j++][k] = int(i);
    }
  }
  return out;
}

} // namespace dmc::bundle
