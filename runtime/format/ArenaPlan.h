//===- ArenaPlan.h - Lifetimes in one arena, and the plan's checker -*- C++ -*-===//
//
// The static memory plan of a bundle (manifest version 3,
// docs/bundle-format.md "Memory plan"): every intermediate tensor that owns
// memory, and every kernel workspace, is a block of one device arena at a
// fixed byte offset. This header defines what a block is and when it is live
// (the one definition the compiler's planner, compiler/bundle/MemoryPlan, and
// every checker share), and checkArenaPlan, which validates a plan: the
// manifest reader runs it on every version 3 manifest.
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

/// The blocks the arena must hold, with their lifetimes: intermediate base
/// tensors outside caller memory (manifest order), then workspaces of
/// kernels with workspace_bytes > 0 (manifest order). Needs a manifest whose
/// lookups work (parsed, or reindex()ed).
std::vector<ArenaBlock> arenaBlocks(const Manifest &m);

/// Whether two blocks may be live at the same time.
bool livesOverlap(const ArenaBlock &a, const ArenaBlock &b);

/// The offset the manifest gives a block (-1: none).
int64_t arenaOffsetOf(const Manifest &m, const ArenaBlock &b);

/// Validates the plan in `m` (version >= 3): aliases and caller-memory
/// tensors have no offset; every arena block has one, aligned, with its
/// bytes inside arena_bytes; no two blocks live at the same time share a
/// byte. On failure `path` is the manifest field (`tensors[4].arena`) and
/// `message` what is wrong; both name the blocks involved.
bool checkArenaPlan(const Manifest &m, std::string &path, std::string &message);

/// Memory figures of a manifest (its plan where it has one).
struct ArenaSummary {
  int64_t arenaBytes = 0;         ///< the plan's arena_bytes (0 without one)
  int64_t intermediateBytes = 0;  ///< sum of all arena tensor blocks (no reuse)
  int64_t workspaceBytes = 0;     ///< sum of all workspaces
  int64_t savedActivationBytes = 0; ///< arena tensors forward -> backward
  int64_t callerBytes = 0;        ///< base tensors in caller buffers
  /// Most bytes live at one step (tensor blocks live then + all workspaces):
  /// a lower bound on arena_bytes for any plan.
  int64_t peakLiveBytes = 0;
  int64_t tensorBlocks = 0, workspaceBlocks = 0;
};
ArenaSummary summarizeArena(const Manifest &m);

} // namespace dmrt

#endif // DMRT_FORMAT_ARENAPLAN_H
