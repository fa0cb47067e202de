//===- PathKnobs.h - Knob candidates of a path bundle's own kernels -*- C++ -*-===//
//
// `dmc tune` writes each path a pass can take other than the default
// (unfused.dmlib, nobgrad.dmlib, drawn.dmlib, ...) in its kernels' default
// knobs. The kernels it shares with default.dmlib are measured in every knob
// candidate there; the ones only it has (the drawing kernels of drawn.dmlib,
// the column-sum kernels of nobgrad.dmlib) get knob candidates of their own,
// `<path>-k<j>.dmlib`, so `dmc compile --db` prices each path at its tuned
// knobs, not the default's. A kernel is the path's own when its tuning
// problem (tuningdb::kernelProblem: member ops, dims, sizes, dtype, layouts)
// is no kernel's of the default bundle: the key the database matches on.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_PATHKNOBS_H
#define DMC_COMPILER_BUNDLE_PATHKNOBS_H

#include "runtime/format/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <vector>

namespace dmc::bundle {

/// Indices (manifest order, the `k<n>` of reference files) of the kernels of
/// `path` whose tuning problem no kernel of `base` has.
std::vector<size_t> kernelsOnlyIn(const dmrt::Manifest &path, const dmrt::Manifest &base);

/// The knob candidate bundles of the path graph `f` (its kernels in manifest
/// order): bundle j gives each kernel of `kernels` its j-th configuration
/// among those configurationsToMeasure(f, `n`) picks (the kernel cost
/// model's n - 1 cheapest other than the default, which the path bundle
/// itself measures), below `limit` when > 0; a kernel with fewer keeps its
/// default and is not in bundle j. So a path needs n - 1 bundles, not one
/// per configuration index its kernels use.
std::vector<std::map<size_t, int>> pathKnobBundles(mlir::func::FuncOp f,
                                                   const std::vector<size_t> &kernels, int n,
                                                   int limit);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_PATHKNOBS_H
