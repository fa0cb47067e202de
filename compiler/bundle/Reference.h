//===- Reference.h - per-kernel reference data for GPU validation ---------===//
#ifndef DMC_COMPILER_BUNDLE_REFERENCE_H
#define DMC_COMPILER_BUNDLE_REFERENCE_H

#include "ir/DmDialect.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace dmc::bundle {

/// Reference files already written in this process, by what determines
/// their bytes (the step's op as printed, its unit, the options): a bundle
/// whose step is the same op at the same index gets a copy instead of a
/// second interpreter run (dmc tune's path bundles share most kernels with
/// default.dmlib).
class ReferenceCache {
public:
  /// The file written for `key`, or "".
  std::string find(const std::string &key) const;
  void add(const std::string &key, const std::string &path) { files_[key] = path; }
  size_t hits() const { return hits_; }
  void hit() { ++hits_; }

private:
  std::map<std::string, std::string> files_;
  size_t hits_ = 0;
};

struct ReferenceOptions {
  uint64_t seed = 1234;          ///< inputs and dropout
  /// Contractions above this (the CPU is slow) get only their stored elements
  /// computed (SampledContraction.h) when those are within it, else a
  /// `skipped` record.
  double flopLimit = 2e9;
  int64_t samples = 1 << 18;     ///< most elements stored per output
  /// Only these steps' files ("k3", "c1"); empty: every step's.
  std::set<std::string> only;
  ReferenceCache *cache = nullptr; ///< optional: reuse identical steps' files
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
