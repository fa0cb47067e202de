//===- KernelBuild.h - `dmc compile` stage: emit and compile every kernel -===//
//
// The emission stage of `dmc compile`: every dm.kernel of the fused graph in
// the configuration's knobs (or, with --config-index, its N-th feasible
// configuration, written back into the configuration), emitted as CUDA C++
// (codegen/KernelEmitter) and compiled by NVRTC in parallel (cached). Writes
// nothing: the bundle writer stores the sources and cubins.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_KERNELBUILD_H
#define DMC_COMPILER_BUNDLE_KERNELBUILD_H

#include "codegen/KernelEmitter.h"
#include "codegen/nvrtc/NvrtcCompiler.h"
#include "compiler/bundle/BundleWriter.h"
#include "ir/DmDialect.h"
#include "runtime/format/Config.h"

#include <vector>

namespace dmc::bundle {

/// One kernel of the graph, ready for the bundle.
struct BuiltKernel {
  dm::KernelOp op;
  codegen::KernelConfig config;   ///< the knobs it was emitted with
  codegen::EmittedKernel emitted; ///< CUDA source, entry, launch shape
  dmcgen::CompiledKernel compiled; ///< the cubin for options.arch
};

/// Emits and compiles every kernel of `f`, in the order of appearance (kernel
/// ids 0, 1, ...). `configuration` gives the knobs; with options.configIndex
/// >= 0 its kernels' entries are overwritten with the swept ones. Progress
/// (NVRTC time, cache hits) goes to `log`.
llvm::Expected<std::vector<BuiltKernel>> buildKernels(mlir::func::FuncOp f,
                                                      dmrt::Configuration &configuration,
                                                      const BundleOptions &options,
                                                      llvm::raw_ostream &log);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_KERNELBUILD_H
