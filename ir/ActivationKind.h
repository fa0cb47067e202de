//===- ActivationKind.h - the activation functions dm.activation computes -===//
//
// One enum for the `kind` attribute of dm.activation and dm.activation_grad,
// parsed once (the ops' verifiers reject any other spelling), so the passes,
// codegen and the interpreter switch over it exhaustively instead of
// comparing strings with a silent fallback.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_IR_ACTIVATIONKIND_H
#define DMC_IR_ACTIVATIONKIND_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace dmc::dm {

enum class ActivationKind {
  Gelu,     ///< "gelu": x * Phi(x), the erf form
  GeluTanh, ///< "gelu_tanh": the tanh approximation (GPT-2's; cuBLASLt's GELU)
  Relu,     ///< "relu"
};

/// The kind spelled `name`, or none.
inline std::optional<ActivationKind> parseActivationKind(llvm::StringRef name) {
  if (name == "gelu")
    return ActivationKind::Gelu;
  if (name == "gelu_tanh")
    return ActivationKind::GeluTanh;
  if (name == "relu")
    return ActivationKind::Relu;
  return std::nullopt;
}

/// "gelu, gelu_tanh or relu": what an error lists as allowed.
inline constexpr const char *kActivationKinds = "gelu, gelu_tanh or relu";

} // namespace dmc::dm

#endif // DMC_IR_ACTIVATIONKIND_H
