//===- KernelModelReport.h - the kernel cost model against measurements -===//
//
// `dmc compile --db`: for every kernel with measured configurations (in its
// default layouts), the rank correlation (Spearman) of the analytic cost
// model (codegen/KernelCostModel.h) with the measured medians, summarized
// per op kind: elementwise, row reductions, column reductions (lanes along
// an outer dim), row kernels with column sums, fused attention. The
// contractions' model reports its own (dmrt-bench, cost_model_spearman).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_KERNELMODELREPORT_H
#define DMC_COMPILER_BUNDLE_KERNELMODELREPORT_H

#include "ir/DmDialect.h"
#include "tuning-db/KnobSelection.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace dmc::bundle {

struct KindCorrelation {
  std::string kind;
  int configs = 0;         ///< measured configurations modelled
  std::vector<double> rho; ///< one per kernel with at least 3 of them
  std::vector<std::string> kernels;
  /// Kernels with no rank correlation: the model prices every measured
  /// configuration alike, or they all measure alike (their configurations
  /// are not in `configs`).
  int alike = 0;
};

/// Pruning replayed on the measurements: each kernel's default knobs and
/// the model's n - 1 cheapest other configurations measured, the fastest
/// of them selected.
struct PruneReplay {
  int n = 0;
  double selectedUs = 0, optimumUs = 0; ///< summed over the kernels
  int atOptimum = 0, kernels = 0;
};

struct KernelModelReport {
  std::vector<KindCorrelation> kinds; ///< in the order first met
  std::vector<PruneReplay> prune;     ///< n = 4, 8, 12
  int skipped = 0; ///< kernels with fewer than 3 measured configurations
  /// "kernel cost model: rank correlation with the measured times per op
  /// kind: ..." and the kernel it ranks worst.
  std::string describe() const;
};

/// The correlation of each kernel of `f` (the graph `sel` was selected for:
/// kernel n is sel's "k<n>_<name>") on the target `f`'s module names.
KernelModelReport modelAgainstMeasurements(mlir::func::FuncOp f,
                                           const tuningdb::KnobSelection &sel);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_KERNELMODELREPORT_H
