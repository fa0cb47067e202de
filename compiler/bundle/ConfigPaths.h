//===- ConfigPaths.h - The path choices a configuration was built with -*- C++ -*-===//
//
// config.json's `paths` (runtime/format/Config.h ConfigPaths) are the
// pipeline options that change which kernels the graph has: fused or unfused
// attention, column sums in the row kernels or apart, where bias gradients
// and addends go, stacks in place. buildGraph records the options it ran
// with on the module (`dm.paths`), extractConfiguration writes them, and
// `dmc compile --config` builds the graph from a file's paths, so a
// configuration `dmc compile --db` chose compiles back without flags.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_CONFIGPATHS_H
#define DMC_COMPILER_BUNDLE_CONFIGPATHS_H

#include "passes/Pipeline.h"
#include "runtime/format/Config.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace dmc::bundle {

/// The module attribute holding the paths (a dictionary with config.json's keys).
inline constexpr llvm::StringLiteral kPathsAttr = "dm.paths";

/// The path choices among `options`.
dmrt::ConfigPaths configPaths(const PipelineOptions &options);
/// `options` with `paths` in place of its path choices.
void applyConfigPaths(const dmrt::ConfigPaths &paths, PipelineOptions &options);

/// Records `paths` on `module` (buildGraph).
void setPathsAttr(mlir::ModuleOp module, const dmrt::ConfigPaths &paths);
/// The paths recorded on `module`; none on a module buildGraph did not build.
std::optional<dmrt::ConfigPaths> pathsOf(mlir::ModuleOp module);

/// One path flag of the command line: its spelling as given ("--bias-grads
/// all"), whether it was given, and the path field it sets ("bias_grads")
/// with the value it gave.
struct PathFlag {
  std::string flag;
  bool given;
  const char *field;
  std::string value;
};
/// `file`'s paths against the flags given with it: an error naming the
/// first flag that contradicts the file (the flag, the file, the field and
/// both values), else success.
llvm::Error checkPathFlags(const dmrt::ConfigPaths &paths, const std::string &file,
                           const std::vector<PathFlag> &flags);
/// The value config.json writes for `field` of `paths` ("true", "none", ...).
std::string pathValue(const dmrt::ConfigPaths &paths, llvm::StringRef field);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_CONFIGPATHS_H
