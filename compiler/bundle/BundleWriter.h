//===- BundleWriter.h - `dmc compile`: a layer as a loadable bundle -------===//
#ifndef DMC_COMPILER_BUNDLE_BUNDLEWRITER_H
#define DMC_COMPILER_BUNDLE_BUNDLEWRITER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace dmc::bundle {

struct BundleOptions {
  std::string arch = "sm_90a";
  std::string modelName;
  /// Also write reference/ inputs and outputs per kernel (and per contraction
  /// up to `referenceFlopLimit`), computed by the interpreter.
  bool reference = false;
  double referenceFlopLimit = 2e9;
  uint64_t referenceSeed = 1234;
  unsigned threads = 0; ///< NVRTC workers (0: all cores)
};

/// Writes the bundle directory `dir` (docs/bundle-format.md) for the fused
/// training graph `f`, compiling every kernel with its default configuration.
/// Progress goes to `log`.
llvm::Error writeBundle(mlir::func::FuncOp f, llvm::StringRef dir, const BundleOptions &options,
                        llvm::raw_ostream &log);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_BUNDLEWRITER_H
