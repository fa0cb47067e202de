//===- HostGemm.h - the interpreter's contractions as blocked matrix products ===//
//
// A contraction whose reduced dims all appear in both operands and whose
// result dims each appear in one of them is a batch of matrix products
// (batch dims in both operands, row dims in a only, column dims in b only).
// hostGemm computes it with packed panels, a register-blocked inner kernel
// and the batches and row panels spread over the host's cores, and gives
// every element bit for bit what the one-element-at-a-time loop gives: each
// result is summed in T, starting from zero, in the row-major order of the
// reduced dims as listed, then multiplied by the scale.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_HOSTGEMM_H
#define DMC_COMPILER_HOSTGEMM_H

#include "compiler/HostTensor.h"

#include <string>

namespace dmc {

/// out = scale * sum over `reduced` (in that order) of a * b, computed in T;
/// false (out untouched) when the contraction is not a batch of matrix
/// products as described above.
template <typename T>
bool hostGemm(const HostTensor &a, const HostTensor &b, T scale, const std::string &reduced,
              HostTensor &out);

} // namespace dmc

#endif // DMC_COMPILER_HOSTGEMM_H
