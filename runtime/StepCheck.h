//===- StepCheck.h - Bind a whole step's data and check its results -*- C++ -*-===//
//
// CPU side of running a whole training step of a bundle against the
// interpreter (tests/gpu/WholeStepTest.cpp):
//  - bindEvalFile matches the tensors of a `dmc eval --precision storage
//    --stage fuse` file with the bundle's by name (both ways), dims and
//    shape: inputs, parameters and dy are uploaded, outputs and gradients
//    compared;
//  - checkTensor compares one result elementwise with a bound scaled by the
//    tensor's own values.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_STEPCHECK_H
#define DMRT_STEPCHECK_H

#include "runtime/Bundle.h"
#include "runtime/Comparison.h"
#include "runtime/Safetensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

/// One bundle tensor with its value in the eval file.
struct StepBinding {
  int64_t tensor = -1;            // bundle tensor id
  const Tensor *value = nullptr;  // in the eval file
  bool input = false; // role input/param/grad_output (else output/grad)
};

/// Binds every bundle tensor of role input, param, grad_output, output or
/// grad to the eval file's tensor of the same name. Fails, naming the tensor,
/// when a name is on one side only, when dims (metadata dims.<name>) or shape
/// differ, when the file's metadata precision is not "storage", or when an
/// input is not exactly representable in its bundle dtype (the GPU would
/// read other values than the interpreter did).
bool bindEvalFile(const Bundle &b, const TensorFile &eval, const std::string &evalPath,
                  std::vector<StepBinding> &out, std::string &error);

/// The bound of checkTensor: element e passes iff
///   |got_e - ref_e| <= rtol * |ref_e| + atol,
///   atol = max(atolFraction * max|ref|, noiseFactor * max|ref - exact|)
/// where `exact` is the same run in fp64 (when given): two bf16 computations
/// of one layer differ by about as much as either differs from the exact one,
/// and a gradient that is zero in exact arithmetic is all rounding noise.
struct TensorBound {
  double rtol = 1.0 / 64;
  double atolFraction = 1.0 / 64;
  double noiseFactor = 4;
};

/// The comparison of one result tensor (runtime/Comparison.h, with the atol
/// above) and the fp64 noise that set it.
struct TensorCheck : Comparison {
  std::string name;
  double noise = 0; // max |ref - exact| (0 without `exact`)
};

/// Compares `got` with `ref` (and `exact`, may be null) elementwise. Never
/// passes on an all-zero reference (zero compared with zero proves nothing)
/// or on different sizes.
TensorCheck checkTensor(const std::string &name, const std::vector<double> &ref,
                        const std::vector<double> &got, const std::vector<double> *exact,
                        const TensorBound &bound);

/// One line: name, pass/FAIL, worst ratio, element, values, bound.
std::string describeCheck(const TensorCheck &c);

} // namespace dmrt

#endif // DMRT_STEPCHECK_H
