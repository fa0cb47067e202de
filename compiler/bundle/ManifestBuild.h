//===- ManifestBuild.h - `dmc compile` stage: the manifest from the IR ----===//
//
// What manifest.json says about a fused, configured training graph: its
// tensors (names, roles, dims, dtypes, aliases, how dmc eval draws each
// argument), its kernels (launch shape, knobs, cubin size and checksum, flop
// and bytes from each kernel's own analysis), its contractions (the cuBLASLt
// descriptor of each, or why it has none) and the step order. The memory
// plan (MemoryPlan.h) and the files are later stages of the bundle writer.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_MANIFESTBUILD_H
#define DMC_COMPILER_BUNDLE_MANIFESTBUILD_H

#include "compiler/bundle/KernelBuild.h"
#include "compiler/bundle/TensorTable.h"
#include "runtime/format/Manifest.h"

namespace dmc::bundle {

/// Kernel n's files inside the bundle: "kernels/k<n>" + ".cu" / ".cubin".
std::string kernelFileStem(size_t n);

/// The manifest of `f` (without memory plan) for kernels `built` (in the
/// order of buildKernels). Warns on `log` about contractions without a
/// cuBLASLt form; fails on a tensor with no bundle dtype.
llvm::Expected<dmrt::Manifest> buildManifest(mlir::func::FuncOp f, const TensorTable &table,
                                             const std::vector<BuiltKernel> &built,
                                             const BundleOptions &options,
                                             llvm::raw_ostream &log);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_MANIFESTBUILD_H
