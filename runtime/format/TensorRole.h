//===- TensorRole.h - What a bundle tensor is to the caller --------*- C++ -*-===//
//
// Arguments of the layer (input, param, grad_output) and its results (output,
// grad) live in caller buffers; intermediates in the runtime's memory.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_TENSORROLE_H
#define DMRT_FORMAT_TENSORROLE_H

#include <string>

namespace dmrt {

enum class TensorRole { Input, Param, GradOutput, Output, Grad, Intermediate };

inline constexpr TensorRole kAllTensorRoles[] = {
    TensorRole::Input,  TensorRole::Param, TensorRole::GradOutput,
    TensorRole::Output, TensorRole::Grad,  TensorRole::Intermediate};

/// The manifest spelling: "input", "param", "grad_output", "output", "grad",
/// "intermediate".
inline const char *tensorRoleName(TensorRole r) {
  switch (r) {
  case TensorRole::Input: return "input";
  case TensorRole::Param: return "param";
  case TensorRole::GradOutput: return "grad_output";
  case TensorRole::Output: return "output";
  case TensorRole::Grad: return "grad";
  case TensorRole::Intermediate: return "intermediate";
  }
  return "?";
}

/// Inverse of tensorRoleName; false (and `out` untouched) otherwise.
inline bool parseTensorRole(const std::string &s, TensorRole &out) {
  for (TensorRole r : kAllTensorRoles)
    if (s == tensorRoleName(r)) {
      out = r;
      return true;
    }
  return false;
}

/// The layer's arguments: given by the caller before the forward step.
inline bool isArgumentRole(TensorRole r) {
  return r == TensorRole::Input || r == TensorRole::Param || r == TensorRole::GradOutput;
}

/// The layer's results: written by the step into caller buffers.
inline bool isResultRole(TensorRole r) {
  return r == TensorRole::Output || r == TensorRole::Grad;
}

} // namespace dmrt

#endif // DMRT_FORMAT_TENSORROLE_H
