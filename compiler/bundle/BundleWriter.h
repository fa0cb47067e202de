//===- BundleWriter.h - `dmc compile`: a layer as a loadable bundle -------===//
#ifndef DMC_COMPILER_BUNDLE_BUNDLEWRITER_H
#define DMC_COMPILER_BUNDLE_BUNDLEWRITER_H

#include "runtime/format/Config.h"
#include "runtime/format/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <string>

namespace dmc::bundle {

class ReferenceCache; // Reference.h

struct BundleOptions {
  std::string arch = "sm_90a";
  std::string modelName;
  /// Also write reference/ inputs and outputs per kernel (and per contraction
  /// up to `referenceFlopLimit`), computed by the interpreter.
  bool reference = false;
  double referenceFlopLimit = 2e9;
  uint64_t referenceSeed = 1234;
  int64_t referenceSamples = 1 << 18; ///< most elements stored per reference output
  /// References only for these steps ("k3", "c1"); empty: every step.
  std::set<std::string> referenceSteps;
  /// Optional: reference files of identical steps copied, not recomputed
  /// (one cache across the bundles of one dmc tune).
  ReferenceCache *referenceCache = nullptr;
  unsigned threads = 0; ///< NVRTC workers (0: all cores)
  /// -1: each kernel's default configuration; N >= 0: its N-th feasible one
  /// (modulo their number), for sweeping configurations on a GPU.
  int configIndex = -1;
  /// Per kernel (its index in step order): its N-th feasible configuration,
  /// in place of configIndex or the configuration's knobs (a path bundle's
  /// knob candidates, PathKnobs.h).
  std::map<size_t, int> kernelConfigs;
  /// Written into config.json as its `prediction` (dmc compile --db), when set.
  bool hasPrediction = false;
  dmrt::ConfigPrediction prediction;
};

/// What writeBundle wrote, for a caller that goes on with it (dmc compile --db).
struct WrittenBundle {
  dmrt::Manifest manifest;
  dmrt::Configuration configuration;
};

/// Writes `c` as `dir`/config.json (what writeBundle writes there too).
llvm::Error writeConfigFile(llvm::StringRef dir, const dmrt::Configuration &c);

/// Writes the bundle directory `dir` (docs/bundle-format.md) for the fused
/// training graph `f`, compiling every kernel in one configuration.
/// Progress goes to `log`; `written`, when given, gets the manifest and the
/// configuration as written.
llvm::Error writeBundle(mlir::func::FuncOp f, llvm::StringRef dir, const BundleOptions &options,
                        llvm::raw_ostream &log, WrittenBundle *written = nullptr);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_BUNDLEWRITER_H
