//===- CandidateFiles.h - The files of dmc tune's candidate bundles -*- C++ -*-===//
//
// What `dmc tune --emit-candidates` writes besides a bundle itself: a
// candidate's copy of the references it shares with another bundle, its
// tune-steps file (the steps dmrt-tune measures there,
// docs/bundle-format.md), and the knob candidates of a path bundle's own
// kernels (PathKnobs.h).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_CANDIDATEFILES_H
#define DMC_COMPILER_BUNDLE_CANDIDATEFILES_H

#include "compiler/bundle/BundleWriter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace dmc::bundle {

/// Writes the configured graph `f` as the bundle `dir` (its log dropped);
/// its stepShape. `written`, when given, gets the manifest and configuration.
llvm::Expected<std::string> writeGraph(mlir::func::FuncOp f, const std::string &dir,
                                       const BundleOptions &options,
                                       WrittenBundle *written = nullptr);

/// Every file of the directory `from` copied into `to` (made anew): another
/// bundle's reference/ for a candidate computing the same steps.
llvm::Error copyReferences(const std::string &from, const std::string &to);

/// The tune-steps file `path` listing `steps` ("k3", "c1").
llvm::Error writeTuneSteps(const std::string &path, const std::vector<std::string> &steps);

/// The knob candidates of the kernels only the path bundle `dir`/`file` has
/// (written from `f` as `path`; `base` is default.dmlib): `<stem>-k<j>.dmlib`
/// for each of pathKnobBundles(f, ..., `n`, `limit`) (PathKnobs.h), with the
/// path bundle's references and a tune-steps file of those kernels; `n` == 1:
/// none. A line each to stderr.
llvm::Error emitPathKnobs(mlir::func::FuncOp f, const std::string &dir, const std::string &file,
                          const WrittenBundle &path, const WrittenBundle &base,
                          BundleOptions options, int n, int limit);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_CANDIDATEFILES_H
