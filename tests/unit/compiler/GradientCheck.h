//===- GradientCheck.h - dm-autodiff against central finite differences ---===//
#ifndef DMC_TESTS_GRADIENTCHECK_H
#define DMC_TESTS_GRADIENTCHECK_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace dmc::test {

struct GradientCheckResult {
  int checked = 0;        ///< gradient elements compared
  double worstError = 0;  ///< max |fd - analytic| / (1 + |fd|)
  std::string worstWhere; ///< "<arg>[<element>]: fd=..., analytic=..."
  std::string error;      ///< set when the check could not run
};

/// Differentiates the module's one function with dm-autodiff, evaluates the
/// gradients of L = sum over results of <result, dy> in fp64 and compares up
/// to `samplesPerArg` elements of every float argument's gradient with
/// central differences of L (step `h`).
GradientCheckResult checkGradients(mlir::ModuleOp forward, int samplesPerArg,
                                   uint64_t seed = 1, double h = 1e-5);

} // namespace dmc::test

#endif // DMC_TESTS_GRADIENTCHECK_H
