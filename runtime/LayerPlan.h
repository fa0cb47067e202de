//===- LayerPlan.h - What running a bundle as a layer needs ---------*- C++ -*-===//
//
// The CPU half of the executor (runtime/Executor.h), computed from a loaded
// bundle before any device call, so that everything it rejects is testable
// without a GPU:
//  - the steps of each phase: manifest `steps` whose kernel or contraction
//    has phase "forward", then those with phase "backward" (every forward
//    step must come first);
//  - the caller buffers: each base tensor in caller memory
//    (runtime/format/ArenaPlan.h isCallerMemory) with the caller tensors
//    (roles input, param, grad_output, output, grad) that are views of it.
//    Usually one tensor is the whole buffer; parameters stacked into one
//    buffer (wq, wk, wv) are slices of it, which the caller must place as
//    such (LayerBindings checks it);
//  - which buffers each phase reads or writes (those must be bound to run it).
// It fails, naming the problem, on a bundle without a memory plan (version
// < 3), a contraction without a cuBLASLt form (`unmappable`), a step of an
// unknown phase or out of order, and a caller buffer whose caller tensors do
// not cover it (the runtime would write memory nobody gave it).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_LAYERPLAN_H
#define DMRT_LAYERPLAN_H

#include "runtime/format/ArenaPlan.h"
#include "runtime/format/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

enum class Phase { Forward = 0, Backward = 1 };
const char *phaseName(Phase p);

/// One caller allocation: a base tensor and the caller tensors inside it.
struct CallerBuffer {
  int64_t base = -1;  ///< base tensor id
  int64_t bytes = 0;  ///< its bytes
  std::vector<size_t> tensors; ///< indices into LayerPlan::callerTensors
  bool usedBy[2] = {false, false}; ///< by a forward / backward step
};

/// A tensor the caller binds: one of role input, param, grad_output, output
/// or grad, in manifest order.
struct CallerTensor {
  int64_t id = -1;
  size_t buffer = 0;      ///< index into LayerPlan::buffers
  int64_t byteOffset = 0; ///< where it starts in its buffer
};

struct LayerPlan {
  std::vector<BundleStep> steps[2]; ///< by Phase
  std::vector<CallerTensor> callerTensors;
  std::vector<CallerBuffer> buffers;

  /// Index into callerTensors of the tensor called `name`, or -1.
  int64_t findCallerTensor(const Manifest &m, const std::string &name) const;
  /// The buffer index of a base tensor in caller memory, or -1 (arena).
  int64_t bufferOfBase(int64_t baseId) const;
};

/// Builds the plan of `m` (parsed: its lookups work). False with `error`.
bool buildLayerPlan(const Manifest &m, LayerPlan &out, std::string &error);

/// The tensors a step reads and writes (kernel inputs and outputs;
/// BundleContraction::inputs() and outputs()).
std::vector<int64_t> stepTensors(const Manifest &m, const BundleStep &s);

/// Empty when an arena of `arenaBytes` holds the plan a run of `wanted`
/// uses (ArenaPlan.h planUsed); otherwise why not, naming both plans' sizes:
/// "an arena of 512 bytes is set; the training plan needs 1024 (the
/// inference plan 512)".
std::string arenaShortfall(const Manifest &m, ArenaPlanKind wanted, int64_t arenaBytes);

/// "kernel 3 (softmax)" / "contraction 2 (bjhp,bkhp->bhjk)".
std::string stepName(const Manifest &m, const BundleStep &s);

} // namespace dmrt

#endif // DMRT_LAYERPLAN_H
