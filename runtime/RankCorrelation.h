//===- RankCorrelation.h - Spearman's rank correlation ------------*- C++ -*-===//
//
// How well a cost model orders what was measured: the contractions' model
// (dmrt-bench, GemmAlgoConfigs.cpp) and the kernels' (dmc compile --db,
// compiler/bundle/KernelModelReport.h). CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_RANKCORRELATION_H
#define DMRT_RANKCORRELATION_H

#include <vector>

namespace dmrt {

/// Spearman's rank correlation of `a` and `b` (equal sizes; ties get their
/// average rank); NaN with fewer than 2 pairs or a constant side.
double spearman(const std::vector<double> &a, const std::vector<double> &b);

} // namespace dmrt

#endif // DMRT_RANKCORRELATION_H
