//===- StepDependencies.h - Which steps of a phase must wait for which -*- C++ -*-===//
//
// A phase's steps (kernels and contractions) run in the manifest's order when
// launched one by one. Captured into a CUDA graph they need only the order
// their memory imposes: step j waits for an earlier step i when both touch a
// common byte and at least one of them writes it (read after write, write
// after read, write after write). Independent steps, such as a weight
// gradient's GEMM and the kernels of the input gradient's chain, may then run
// side by side, filling each other's tails.
//
// Accesses are byte ranges of real addresses (the executor's bound buffers,
// arena offsets, kernel workspaces and the shared cuBLASLt workspace), so
// aliases, reused arena regions and caller buffers are all covered. Pure
// C++: no CUDA, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_STEPDEPENDENCIES_H
#define DMRT_STEPDEPENDENCIES_H

#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

/// Bytes [begin, end) that a step reads, or writes (a step reading and
/// writing a range lists it as written). A strided view (a slice of a stack
/// its producers write in place) touches only runs of `width` bytes every
/// `period` bytes from `begin` (period 0: every byte of the range); two
/// accesses of one period whose runs never meet do not conflict.
struct MemoryAccess {
  uintptr_t begin = 0, end = 0;
  bool write = false;
  uintptr_t period = 0, width = 0;
};

/// The access of a view of `elementBytes`-byte elements at `start` with
/// `shape` and element `strides` (empty: dense): its span, and a period when
/// its innermost dense run repeats at one stride that every outer stride is
/// a multiple of (else the whole span, which orders more than needed but
/// never less).
MemoryAccess viewAccess(uintptr_t start, const std::vector<int64_t> &shape,
                        const std::vector<int64_t> &strides, int64_t elementBytes, bool write);

/// Whether two steps' accesses conflict: a common byte, one of them writing.
bool accessesConflict(const std::vector<MemoryAccess> &a, const std::vector<MemoryAccess> &b);

/// For each step j, the earlier steps it waits for, ascending: every earlier
/// step it conflicts with, less those already ordered before j through
/// another kept dependency (a transitive reduction; the graph's order is the
/// same, with fewer edges).
std::vector<std::vector<int>> stepDependencies(const std::vector<std::vector<MemoryAccess>> &steps);

/// Checks `deps` against `steps`: every conflicting pair i < j is ordered
/// (i reaches j through deps) and every dependency points to an earlier
/// step. False with `why` naming the first unordered pair.
bool ordersEveryConflict(const std::vector<std::vector<MemoryAccess>> &steps,
                         const std::vector<std::vector<int>> &deps, std::string &why);

/// The longest chain of dependent steps (1 for steps that are all
/// independent, the step count for a chain): how serial the phase is.
int criticalPathLength(const std::vector<std::vector<int>> &deps);

} // namespace dmrt

#endif // DMRT_STEPDEPENDENCIES_H
