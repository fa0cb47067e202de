//===- LayerBindings.h - Caller buffers bound to a layer's tensors -*- C++ -*-===//
//
// The caller binds device buffers by tensor name (LayerPlan's caller
// tensors). Each bind is checked before it is recorded, without any device
// call: the name is a caller tensor, the dtype, rank, shape and byte size
// are the tensor's (more bytes are fine), the pointer is not null, and the
// buffer it implies (the pointer minus the tensor's offset in its caller
// buffer) starts at a multiple of kBindAlignment. Tensors sharing a buffer
// (stacked parameters) must be bound as slices of one allocation: a bind
// that implies another buffer start than a bound sibling's fails, naming
// it (unbind first to move them). A run checks that every buffer its phase
// uses has all its tensors bound (missingFor).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_LAYERBINDINGS_H
#define DMRT_LAYERBINDINGS_H

#include "runtime/LayerPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

/// Every bound pointer's buffer starts at a multiple of this many bytes:
/// the arena's alignment, what cuBLASLt's heuristic assumes of its operands
/// by default, and more than any vectorised kernel access needs.
inline constexpr int64_t kBindAlignment = 256;

class LayerBindings {
public:
  LayerBindings(const Manifest &m, const LayerPlan &p);

  /// Binds caller tensor `name` to `ptr` (`bytes` usable bytes there; the
  /// caller's dtype and shape, rank dims). False with `error` naming the
  /// tensor and what is wrong; nothing changes then. (check, then commit.)
  bool bind(const std::string &name, void *ptr, int64_t bytes, DType dtype,
            const std::vector<int64_t> &shape, std::string &error);
  /// Every check of `bind`, recording nothing: the caller tensor's index
  /// (into LayerPlan::callerTensors), or -1 with `error`. A caller with
  /// checks of its own (the C API: is it device memory?) runs them between
  /// check and commit, so that a failing bind leaves the bindings as they were.
  int64_t check(const std::string &name, void *ptr, int64_t bytes, DType dtype,
                const std::vector<int64_t> &shape, std::string &error) const;
  /// Records a bind that `check` accepted (`index` is what it returned), in
  /// place: no copy of the bindings.
  void commit(size_t index, void *ptr);
  /// Forgets tensor `name`'s pointer (false: no such caller tensor).
  bool unbind(const std::string &name, std::string &error);
  void unbindAll();

  /// Names of the tensors `phase` needs that are not bound (empty: ready).
  std::vector<std::string> missingFor(Phase phase) const;
  /// The start of caller buffer `buffer`, nullptr when none of its tensors
  /// is bound.
  char *bufferStart(size_t buffer) const { return start_[buffer]; }
  /// The pointer tensor `callerTensor` (index into LayerPlan::callerTensors)
  /// is bound to, nullptr when unbound.
  void *bound(size_t callerTensor) const { return ptr_[callerTensor]; }
  /// Changes whenever a pointer changes (graphs captured with older
  /// pointers must be captured again).
  uint64_t version() const { return version_; }

private:
  void recompute(size_t buffer);
  const Manifest *m_;
  const LayerPlan *p_;
  std::vector<void *> ptr_;    // by caller tensor
  std::vector<char *> start_;  // by buffer
  uint64_t version_ = 0;
};

} // namespace dmrt

#endif // DMRT_LAYERBINDINGS_H
