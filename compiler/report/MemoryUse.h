//===- MemoryUse.h - the static memory plan's figures, for `dmc report` ---===//
//
// The memory a training step needs (and a forward-only inference run), from the same manifest skeleton `dmc
// compile` writes (tensors, kernels with their workspaces, contractions,
// steps; no NVRTC) planned by compiler/bundle/MemoryPlan and summarized by
// dmrt::summarizeArena.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_REPORT_MEMORYUSE_H
#define DMC_COMPILER_REPORT_MEMORYUSE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace dmc::report {

struct MemoryFigures {
  bool planned = false;           ///< false before the fuse stage: no plan
  int64_t arenaBytes = 0;         ///< the plan's arena (peak arena bytes)
  /// The forward-only (inference) plan's arena: what DMRT_MODE_INFERENCE needs.
  int64_t inferenceArenaBytes = 0;
  int64_t inferencePeakLiveBytes = 0; ///< its lower bound, as peakLiveBytes
  int64_t peakLiveBytes = 0;      ///< most bytes live at one step (lower bound)
  int64_t intermediateBytes = 0;  ///< every arena tensor, no reuse (naive sum)
  int64_t savedActivationBytes = 0; ///< arena tensors written forward, read backward
  int64_t workspaceBytes = 0;     ///< kernel workspaces (in the arena, never shared)
};

/// Plans the memory of a fused training graph `f` (only kernels,
/// contractions and views).
llvm::Expected<MemoryFigures> memoryOf(mlir::func::FuncOp f);

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_MEMORYUSE_H
