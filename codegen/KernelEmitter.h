//===- KernelEmitter.h - CUDA C++ for one fused kernel and config ---------===//
#ifndef DMC_CODEGEN_KERNELEMITTER_H
#define DMC_CODEGEN_KERNELEMITTER_H

#include "codegen/KernelSpace.h"

#include "llvm/Support/Error.h"

namespace dmc::codegen {

/// One kernel ready for NVRTC, and how to launch it. Parameters, in order:
/// the kernel's inputs, its outputs, the workspace (only when
/// workspaceBytes > 0), then the dropout seed (uint64).
struct EmittedKernel {
  std::string entry;  ///< the extern "C" function name
  std::string source; ///< complete CUDA C++ (includes runtime/format/device/Philox.h, runtime/format/device/Float16.h)
  int64_t grid = 0, gridY = 1, gridZ = 1;
  int blockX = 1, blockY = 1;
  /// Scratch the kernel needs (0: none; then it takes no workspace
  /// parameter): zeroed before the first launch, left zeroed by each.
  int64_t workspaceBytes = 0;
  int sharedBytes = 0;
  int passes = 0;     ///< sweeps over each row (one per reduction level + 1)
  /// Kernels with column sums (KernelSpace::columnSums): the entry of a
  /// second launch of the same module, same parameters, that finishes them
  /// from the workspace's partials, and its shape; empty otherwise.
  std::string finishEntry;
  int64_t finishGrid = 0;
  int finishBlockX = 0, finishBlockY = 0;
  /// The positions of the outputs only the finishing launch writes.
  std::vector<int64_t> finishOutputs;
  /// How a fused kernel (isFusedKernel) is configured, e.g. "attention tiles
  /// 128x64, 4 warps"; empty for loop-nest kernels (their knobs say it).
  std::string describe;
};

/// Emits `kernel` for `config` (which must be feasible for its space). The
/// arithmetic follows the interpreter's (compiler/HostKernels.cpp) in fp32;
/// dropout masks are bit-identical.
llvm::Expected<EmittedKernel> emitKernel(dm::KernelOp kernel, const KernelConfig &config,
                                         llvm::StringRef entry);

/// A fused attention kernel (codegen/attention) with the tiles of `config`
/// (its default tiles when config.warps is 0).
llvm::Expected<EmittedKernel> emitAttentionKernel(dm::KernelOp kernel, const KernelConfig &config,
                                                  llvm::StringRef entry);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_KERNELEMITTER_H
