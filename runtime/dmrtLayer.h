//===- dmrtLayer.h - The C API's handle (private to runtime/dmrt*.cpp) ----===//
#ifndef DMRT_DMRTLAYER_H
#define DMRT_DMRTLAYER_H

#include "runtime/Bundle.h"
#include "runtime/Executor.h"
#include "runtime/LayerBindings.h"
#include "runtime/LayerPlan.h"
#include "runtime/dmrt.h"

#include <memory>
#include <new>
#include <string>
#include <vector>

/// One open layer. `exec` is null for DMRT_OPEN_VALIDATE_ONLY.
struct dmrt_layer {
  explicit dmrt_layer(std::shared_ptr<const dmrt::Bundle> b)
      : sharedBundle(std::move(b)), bundle(*sharedBundle) {}
  /// The loaded bundle, shared with whoever loaded it (dmc-run keeps
  /// reading its manifest: dmrt_internal_open_loaded).
  std::shared_ptr<const dmrt::Bundle> sharedBundle;
  const dmrt::Bundle &bundle;
  dmrt::LayerPlan plan;
  std::unique_ptr<dmrt::LayerBindings> bindings;
  std::unique_ptr<dmrt::Executor> exec;
  bool externalArena = false;
  bool inferenceOnly = false; ///< DMRT_OPEN_INFERENCE_ONLY
  uint64_t key = 0; ///< dropout key of the next forward
  /// A training forward ran and no backward consumed it yet: its key and
  /// the arena that holds its saved activations.
  bool forwardPending = false;
  uint64_t forwardKey = 0;
  void *forwardArena = nullptr;
  bool lastForwardInference = false;
  std::vector<std::string> stepNames[2]; ///< by dmrt::Phase
};

namespace dmrt {

/// Records `message` as this thread's last error; returns `s`.
dmrt_status fail(dmrt_status s, const std::string &message);

inline dmrt_role toCRole(TensorRole r) {
  switch (r) {
  case TensorRole::Input: return DMRT_ROLE_INPUT;
  case TensorRole::Param: return DMRT_ROLE_PARAM;
  case TensorRole::GradOutput: return DMRT_ROLE_GRAD_OUTPUT;
  case TensorRole::Output: return DMRT_ROLE_OUTPUT;
  default: return DMRT_ROLE_GRAD;
  }
}

inline dmrt_dtype toCDType(DType t) {
  switch (t) {
  case DType::F16: return DMRT_DTYPE_F16;
  case DType::BF16: return DMRT_DTYPE_BF16;
  case DType::I32: return DMRT_DTYPE_I32;
  default: return DMRT_DTYPE_F32;
  }
}

/// The memory plan a run of `mode` uses (before planUsed); for a value
/// outside the enum DMRT_ERROR_INVALID_ARGUMENT, naming `function`.
inline dmrt_status planOfMode(const char *function, dmrt_mode mode, ArenaPlanKind &plan) {
  if (mode != DMRT_MODE_TRAIN && mode != DMRT_MODE_INFERENCE)
    return fail(DMRT_ERROR_INVALID_ARGUMENT,
                std::string(function) + ": unknown mode " + std::to_string(int(mode)));
  plan = mode == DMRT_MODE_INFERENCE ? ArenaPlanKind::Inference : ArenaPlanKind::Training;
  return DMRT_OK;
}

/// False for a value outside the enum.
inline bool fromCDType(int t, DType &out) {
  switch (t) {
  case DMRT_DTYPE_F32: out = DType::F32; return true;
  case DMRT_DTYPE_F16: out = DType::F16; return true;
  case DMRT_DTYPE_BF16: out = DType::BF16; return true;
  case DMRT_DTYPE_I32: out = DType::I32; return true;
  }
  return false;
}

} // namespace dmrt

/// Around every C entry point's body: nothing escapes.
#define DMRT_GUARD_BEGIN try {
#define DMRT_GUARD_END                                                                  \
  }                                                                                     \
  catch (const std::bad_alloc &) {                                                      \
    return dmrt::fail(DMRT_ERROR_INTERNAL, "out of host memory");                       \
  }                                                                                     \
  catch (const std::exception &e) {                                                     \
    return dmrt::fail(DMRT_ERROR_INTERNAL, std::string("internal error: ") + e.what()); \
  }                                                                                     \
  catch (...) {                                                                         \
    return dmrt::fail(DMRT_ERROR_INTERNAL, "internal error (unknown exception)");       \
  }

#endif // DMRT_DMRTLAYER_H
