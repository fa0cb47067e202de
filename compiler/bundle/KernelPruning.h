//===- KernelPruning.h - which knob configurations the tuner measures ----===//
//
// `dmc tune --prune-kernels N`: per kernel, the default knobs (measured in
// default.dmlib) and the N - 1 other configurations the kernel cost model
// (codegen/KernelCostModel.h) prices lowest; candidate bundle cJ gives each
// kernel the J-th of its configurations to measure (rankedBundles) and
// measures those kernels only (tune-steps). What
// pruning costs, replayed on a database: `dmc compile --db`'s "pruning
// replayed" (compiler/bundle/KernelModelReport.h).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_KERNELPRUNING_H
#define DMC_COMPILER_BUNDLE_KERNELPRUNING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <set>
#include <vector>

namespace dmc::bundle {

/// Per kernel of `f` (in order), the indices into its enumerated
/// configurations (enumerateConfigs / enumerateFusedConfigs) that candidate
/// bundles measure: the model's `n` - 1 cheapest other than the default;
/// every index when `n` <= 0 or the kernel has at most `n` - 1 others.
std::vector<std::set<size_t>> configurationsToMeasure(mlir::func::FuncOp f, int n);

/// The candidate bundles' kernel configurations (BundleOptions::kernelConfigs):
/// bundle j gives kernel k the j-th index of `measured[k]` (in index order);
/// a kernel with fewer keeps its default knobs there and is not measured.
/// So there are as many bundles as the most configurations one kernel has to
/// measure (bert-large at --prune-kernels 16: 15), not as its highest index
/// among them (37). At most `limit` bundles when `limit` > 0.
std::vector<std::map<size_t, int>>
rankedBundles(const std::vector<std::set<size_t>> &measured, int limit = 0);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_KERNELPRUNING_H
