//===- MemoryPlan.h - The static memory plan of a bundle ---------*- C++ -*-===//
//
// Gives every arena block of a manifest (runtime/format/ArenaPlan.h: each
// intermediate tensor owning memory, each kernel workspace) a byte offset in
// one arena so that no two blocks live at the same step share a byte, and
// records it in the manifest, once per plan: the training plan (liveness
// over every step; tensors' `arena`, kernels' `workspace_offset`,
// `arena_bytes`) and the inference plan (liveness over the forward steps
// only; the same fields with `inference_`, version 5). Both plans run the
// one algorithm below on ArenaPlan.h's blocks of that plan.
//
// Algorithm (deterministic): blocks sorted by aligned size, largest first
// (ties: earlier first use, tensors before workspaces, manifest order); each
// goes to the lowest 256-byte-aligned offset where it overlaps no
// already-placed block whose lifetime overlaps its own. Workspaces are live
// throughout, so each gets a region of its own.
//
// MLIR-free plain C++ that never throws; works on synthetic manifests.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_MEMORYPLAN_H
#define DMC_COMPILER_BUNDLE_MEMORYPLAN_H

#include "runtime/format/Manifest.h"

namespace dmc::bundle {

/// Plans `m` (tensors, kernels, contractions and steps filled in; ids
/// consistent) in place: rebuilds its lookups, sets version 5 (or keeps a
/// newer one), every tensor's arenaOffset (-1 for aliases and caller memory),
/// every kernel's workspaceOffset (-1 without a workspace) and arenaBytes
/// (the largest aligned block end; a multiple of 256), and the same for the
/// inference plan (inferenceArenaOffset: also -1 for tensors no forward step
/// uses; inferenceWorkspaceOffset: also -1 for backward kernels), never
/// larger than the training plan (where placement on the forward's
/// lifetimes would be, the training offsets are used).
void planMemory(dmrt::Manifest &m);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_MEMORYPLAN_H
