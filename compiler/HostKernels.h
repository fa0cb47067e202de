//===- HostKernels.h - reference CPU semantics of every dm op -------------===//
//
// One function per op, templated on the compute type T (float or double):
// inputs are read as T, arithmetic is done in T, outputs are rounded to T.
// Output tensors arrive allocated with the result type's dims and shape.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_HOSTKERNELS_H
#define DMC_COMPILER_HOSTKERNELS_H

#include "compiler/HostTensor.h"
#include "ir/ActivationKind.h"

#include <cstdint>
#include <vector>

namespace dmc {

template <typename T> struct HostKernels {
  /// out[R] = scale * sum a[A] * b[B] over the names R lacks.
  static void contract(const HostTensor &a, const HostTensor &b, double scale, HostTensor &out);
  /// out = x + bias broadcast over the dims bias lacks.
  static void biasAdd(const HostTensor &x, const HostTensor &bias, HostTensor &out);
  static void add(const HostTensor &a, const HostTensor &b, HostTensor &out);
  static void scale(const HostTensor &x, double factor, HostTensor &out);
  static void activation(const HostTensor &x, dm::ActivationKind kind, HostTensor &out);
  static void activationGrad(const HostTensor &dy, const HostTensor &x, dm::ActivationKind kind,
                             HostTensor &out);
  /// Philox dropout; element numbering row-major over the dims in `order`.
  static void dropout(const HostTensor &x, double p, uint32_t id, const std::string &order,
                      uint64_t seed, HostTensor &out);
  /// dm.dropout_keep_bits: out (x's dims, `key` replaced by `word`) packs
  /// 32 keep bits per word, 0 where x is -inf when `masked`; words stored as
  /// int32 values.
  static void dropoutKeepBits(const HostTensor &x, double p, uint32_t id,
                              const std::string &order, char key, char word, bool masked,
                              uint64_t seed, HostTensor &out);
  /// dm.dropout_apply_bits: x / (1 - p) where its bit in `bits` is 1, else 0.
  static void dropoutApplyBits(const HostTensor &x, const HostTensor &bits, double p, char key,
                               char word, HostTensor &out);
  static void causalMask(const HostTensor &x, char query, char key, double fill,
                         HostTensor &out);
  static void keyPaddingMask(const HostTensor &x, const HostTensor &lengths, char key,
                             double fill, HostTensor &out);
  static void softmax(const HostTensor &x, llvm::StringRef dims, HostTensor &out);
  static void softmaxGrad(const HostTensor &y, const HostTensor &dy, llvm::StringRef dims,
                          HostTensor &out);
  /// out = log(sum exp(x)) over `dims` (out lacks them); -inf for a row of -inf.
  static void logSumExp(const HostTensor &x, llvm::StringRef dims, HostTensor &out);
  /// out = exp(x - lse), lse broadcast over the dims it lacks; 0 where lse = -inf.
  static void softmaxLse(const HostTensor &x, const HostTensor &lse, HostTensor &out);
  /// out = y * (dy - rowsum), rowsum broadcast over the dims it lacks.
  static void softmaxGradRowsum(const HostTensor &y, const HostTensor &dy,
                                const HostTensor &rowsum, HostTensor &out);
  static void layernorm(const HostTensor &x, const HostTensor &gamma, const HostTensor &beta,
                        llvm::StringRef dims, double eps, HostTensor &y, HostTensor &mean,
                        HostTensor &rstd);
  static void layernormGradInput(const HostTensor &dy, const HostTensor &x,
                                 const HostTensor &mean, const HostTensor &rstd,
                                 const HostTensor &gamma, llvm::StringRef dims,
                                 HostTensor &dx);
  static void layernormGradParams(const HostTensor &dy, const HostTensor &x,
                                  const HostTensor &mean, const HostTensor &rstd,
                                  HostTensor &dgamma, HostTensor &dbeta);
  /// Sums x over the dims `out` lacks.
  static void reduceSum(const HostTensor &x, HostTensor &out);
  /// Copies x into out, broadcasting over the dims x lacks and permuting.
  static void copyInto(const HostTensor &x, HostTensor &out);
  static void stack(const std::vector<const HostTensor *> &parts, char dim, HostTensor &out);
  static void unstack(const HostTensor &x, char dim, std::vector<HostTensor *> &parts);
};

extern template struct HostKernels<float>;
extern template struct HostKernels<double>;

} // namespace dmc

#endif // DMC_COMPILER_HOSTKERNELS_H
