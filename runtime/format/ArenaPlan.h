//===- ArenaPlan.h - Lifetimes in one arena, and the plan's checker -*- C++ -*-===//
//
// The static memory plans of a bundle (docs/bundle-format.md "Memory plan"):
// every intermediate tensor that owns memory, and every kernel workspace, is
// a block of one device arena at a fixed byte offset. A manifest has two
// plans over the same blocks: the training plan (version 3: liveness over
// the whole step, forward then backward) and the inference plan (version 5:
// liveness over the forward steps only, for DMRT_MODE_INFERENCE). This
// header defines what a block is and when it is live (the one definition
// the compiler's planner, compiler/bundle/MemoryPlan, and every checker
// share), and checkArenaPlan, which validates a plan: the manifest reader
// runs it on every plan a manifest has.
//
// Liveness. Steps are numbered in manifest `steps` order (forward, then
// backward). A use of tensor t at step s (read or written: kernel inputs and
// outputs, BundleContraction::inputs/outputs) is a use of t's base
// (Manifest::baseOf), so a view keeps its base alive until the view's last
// use. A block is live over the closed interval [first use, last use]; two
// blocks whose intervals share a step never share a byte (a step's inputs
// and outputs are all distinct memory: nothing is computed in place). A
// tensor no step uses is live nowhere. A workspace is live during the whole
// step and never shares: kernels rely on it staying zeroed between launches
// (each launch leaves it zeroed), which any other tenant would break.
//
// The inference plan. Only forward steps (kernel or contraction phase other
// than "backward") count: a saved activation dies at its last forward use,
// a tensor no forward step uses is no block (its `inference_arena` is null),
// and only workspaces of kernels whose phase is not "backward" are blocks.
// Step numbers stay the manifest's, so messages name the same steps.
//
// Caller memory. A base tensor whose alias family (the base and every
// tensor whose base it is) contains a tensor of role input, param,
// grad_output, output or grad lives in a caller buffer, not in the arena:
// e.g. parameters stored as slices of one stacked buffer, or a layer output
// that is a rename of a kernel result.
//
// Plain C++17, no exceptions, MLIR-free and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_ARENAPLAN_H
#define DMRT_FORMAT_ARENAPLAN_H

#include "runtime/format/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

/// Every arena offset is a multiple of this (bytes).
inline constexpr int64_t kArenaAlignment = 256;

/// `bytes` rounded up to the alignment (at least one unit: every block gets
/// its own address).
inline int64_t alignArena(int64_t bytes) {
  if (bytes < 1)
    bytes = 1;
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// Which of a manifest's two memory plans (see above).
enum class ArenaPlanKind { Training, Inference };
/// "training" / "inference", for messages.
const char *arenaPlanName(ArenaPlanKind kind);

/// The plan a run of `wanted` uses: itself, except that a manifest before
/// version 5 has no inference plan and inference uses the training plan.
ArenaPlanKind planUsed(const Manifest &m, ArenaPlanKind wanted);
/// The fields of one plan as stored (-1 / 0 where the plan has none; no
/// fallback: combine with planUsed).
int64_t arenaBytesOf(const Manifest &m, ArenaPlanKind kind);
int64_t tensorArenaOffset(const BundleTensor &t, ArenaPlanKind kind);
int64_t workspaceArenaOffset(const BundleKernel &k, ArenaPlanKind kind);
/// Bytes of the kernel workspaces inside the arena a run of `wanted` uses.
int64_t planWorkspaceBytes(const Manifest &m, ArenaPlanKind wanted);

/// One region of the arena.
struct ArenaBlock {
  enum Kind { Tensor, Workspace } kind = Tensor;
  int64_t id = 0;    ///< tensor id (a base tensor) or kernel id
  size_t index = 0;  ///< position in Manifest::tensors or ::kernels
  int64_t bytes = 0; ///< tensor bytes or workspace_bytes
  /// Steps live, inclusive; first == -1: no step uses it. Workspaces are
  /// live throughout (see the header comment) whatever these say.
  int64_t first = -1, last = -1;
  /// Tensor blocks: written by a forward step and read by a backward one.
  bool savedActivation = false;

  /// `tensors[3]` or `kernels[2].workspace`, for messages.
  std::string path() const;
};

/// True when base tensor `baseId` lives in a caller buffer (see above).
/// For an alias it answers for its base.
bool isCallerMemory(const Manifest &m, int64_t tensorId);

/// The blocks the arena of plan `kind` must hold, with their lifetimes:
/// intermediate base tensors outside caller memory (manifest order; for the
/// inference plan only those a forward step uses), then workspaces of
/// kernels with workspace_bytes > 0 (manifest order; for the inference plan
/// only non-backward kernels). Needs a manifest whose lookups work (parsed,
/// or reindex()ed).
std::vector<ArenaBlock> arenaBlocks(const Manifest &m,
                                    ArenaPlanKind kind = ArenaPlanKind::Training);

/// Whether two blocks may be live at the same time.
bool livesOverlap(const ArenaBlock &a, const ArenaBlock &b);

/// The offset plan `kind` of the manifest gives a block (-1: none).
int64_t arenaOffsetOf(const Manifest &m, const ArenaBlock &b,
                      ArenaPlanKind kind = ArenaPlanKind::Training);

/// Validates plan `kind` of `m` (training: version >= 3; inference: version
/// >= 5): tensors and kernels that are no block of the plan (aliases,
/// caller memory; for inference also tensors no forward step uses and
/// backward kernels' workspaces) have no offset; every block has one,
/// aligned, with its bytes inside the plan's arena bytes; no two blocks live
/// at the same time share a byte. On failure `path` is the manifest field
/// (`tensors[4].arena`, `tensors[4].inference_arena`) and `message` what is
/// wrong; both name the blocks involved.
bool checkArenaPlan(const Manifest &m, std::string &path, std::string &message,
                    ArenaPlanKind kind = ArenaPlanKind::Training);

/// Memory figures of a manifest (its plan where it has one).
struct ArenaSummary {
  int64_t arenaBytes = 0;         ///< the plan's arena_bytes (0 without one)
  /// The arena an inference run uses (inference_arena_bytes; arena_bytes
  /// before version 5).
  int64_t inferenceArenaBytes = 0;
  int64_t intermediateBytes = 0;  ///< sum of all arena tensor blocks (no reuse)
  int64_t workspaceBytes = 0;     ///< sum of all workspaces
  int64_t savedActivationBytes = 0; ///< arena tensors forward -> backward
  int64_t callerBytes = 0;        ///< base tensors in caller buffers
  /// Most bytes live at one step (tensor blocks live then + all workspaces):
  /// a lower bound on arena_bytes for any plan.
  int64_t peakLiveBytes = 0;
  /// The same over the inference plan's blocks and forward lifetimes: a
  /// lower bound on inference_arena_bytes.
  int64_t inferencePeakLiveBytes = 0;
  int64_t tensorBlocks = 0, workspaceBlocks = 0;
};
ArenaSummary summarizeArena(const Manifest &m);

} // namespace dmrt

#endif // DMRT_FORMAT_ARENAPLAN_H
