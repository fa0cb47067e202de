//===- LayerBuffers.h - Device buffers for a layer's caller tensors -*- C++ -*-===//
//
// Header-only helpers over the C++ API (runtime/dmrt.hpp) for programs that
// allocate a layer's caller buffers themselves: dmc-run and the whole-step
// GPU tests (tests/gpu/WholeStep*.cpp). Link libdmrt (dmrt-c) and cudart.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_LAYERBUFFERS_H
#define DMRT_LAYERBUFFERS_H

#include "runtime/dmrt.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <string>

namespace dmrt {

/// "what: cudaErrorX (description)" into `error` unless e == cudaSuccess.
inline bool cudaOk(cudaError_t e, const std::string &what, std::string &error) {
  if (e == cudaSuccess)
    return true;
  error = what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return false;
}

/// "what: DMRT_ERROR_X: message" into `error` unless `s` is DMRT_OK.
inline bool statusOk(const Status &s, const std::string &what, std::string &error) {
  if (s)
    return true;
  error = what + ": " + dmrt_status_name(s.code) + ": " + s.message;
  return false;
}

/// One cudaMalloc per caller buffer of a layer (stacked parameters share
/// one), each filled with 0xFF bytes (NaN) and bound; freed on destruction.
class DeviceBuffers {
public:
  ~DeviceBuffers() {
    for (auto &kv : base_)
      cudaFree(kv.second);
  }
  bool allocateAndBind(Layer &layer, std::string &error) {
    for (const dmrt_tensor_desc &t : layer.tensors()) {
      void *&base = base_[t.buffer];
      if (!base && (!cudaOk(cudaMalloc(&base, size_t(t.buffer_bytes)), "cudaMalloc", error) ||
                    !cudaOk(cudaMemset(base, 0xFF, size_t(t.buffer_bytes)), "cudaMemset",
                            error)))
        return false;
      if (!statusOk(layer.bind(t.name, static_cast<char *>(base) + t.buffer_offset),
                    std::string("binding ") + t.name, error))
        return false;
    }
    return true;
  }
  /// The device address of tensor `name` (nullptr: unknown).
  void *ptr(const Layer &layer, const std::string &name) {
    dmrt_tensor_desc d;
    if (!layer.tensor(name, d))
      return nullptr;
    return static_cast<char *>(base_[d.buffer]) + d.buffer_offset;
  }

private:
  std::map<int32_t, void *> base_;
};

} // namespace dmrt

#endif // DMRT_LAYERBUFFERS_H
