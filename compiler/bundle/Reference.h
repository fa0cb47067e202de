//===- Reference.h - per-kernel reference data for GPU validation ---------===//
#ifndef DMC_COMPILER_BUNDLE_REFERENCE_H
#define DMC_COMPILER_BUNDLE_REFERENCE_H

#include "ir/DmDialect.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>
#include <vector>

namespace dmc::bundle {

struct ReferenceOptions {
  uint64_t seed = 1234;          ///< inputs and dropout
  /// Contractions above this (the CPU is slow) get only their stored elements
  /// computed (SampledContraction.h) when those are within it, else a
  /// `skipped` record.
  double flopLimit = 2e9;
  int64_t samples = 1 << 18;     ///< most elements stored per output
  /// Only these steps' files ("k3", "c1"); empty: every step's.
  std::set<std::string> only;
};

/// Writes reference/k<N>.safetensors for every kernel and c<N>.safetensors for
/// every contraction (docs/bundle-format.md): the expected outputs `out<k>`
/// (fp32, every `stride.out<k>`-th element) from the CPU interpreter on inputs
/// drawn from the seed as runtime/ReferenceData.h says (unit N, or 1000 + N);
/// for a contraction above the flop limit, its stored elements alone, each a
/// dot product in double (SampledContraction.h), when their flop are within
/// the limit, else no tensors and metadata `skipped` (why), `flop` and
/// `flop_limit`. With `options.only`, the other steps get
/// no file (a layout candidate's unchanged steps are not measured).
llvm::Error writeReferences(const std::vector<dm::KernelOp> &kernels,
                            const std::vector<dm::ContractOp> &contractions,
                            llvm::StringRef dir, const ReferenceOptions &options,
                            llvm::raw_ostream &log);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_REFERENCE_H
