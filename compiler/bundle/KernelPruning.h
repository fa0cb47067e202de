//===- KernelPruning.h - which knob configurations the tuner measures ----===//
//
// `dmc tune --prune-kernels N`: per kernel, the default knobs (measured in
// default.dmlib) and the N - 1 other configurations the kernel cost model
// (codegen/KernelCostModel.h) prices lowest; candidate bundle cI measures a
// kernel only when its I-th configuration is one of those (tune-steps). What
// pruning costs, replayed on a database: `dmc compile --db`'s "pruning
// replayed" (compiler/bundle/KernelModelReport.h).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_KERNELPRUNING_H
#define DMC_COMPILER_BUNDLE_KERNELPRUNING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <set>
#include <vector>

namespace dmc::bundle {

/// Per kernel of `f` (in order), the indices into its enumerated
/// configurations (enumerateConfigs / enumerateFusedConfigs) that candidate
/// bundles measure: the model's `n` - 1 cheapest other than the default;
/// every index when `n` <= 0 or the kernel has at most `n` - 1 others.
std::vector<std::set<size_t>> configurationsToMeasure(mlir::func::FuncOp f, int n);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_KERNELPRUNING_H
