//===- WholeStepUtil.h - Helpers of the whole-step GPU tests --------------===//
//
// For tests/gpu/WholeStep*.cpp: device buffers for a layer's caller
// buffers (NaN bytes until written), binding, uploading the eval file's
// inputs and one forward + backward with its results downloaded.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_WHOLESTEPUTIL_H
#define DMC_TESTS_GPU_WHOLESTEPUTIL_H

#include "runtime/Bundle.h"
#include "runtime/Harness.h"
#include "runtime/dmrt.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <string>
#include <vector>

namespace dmctest {
namespace util {

/// Device buffers for every caller buffer of a layer, freed on destruction.
struct Buffers {
  std::map<int32_t, void *> base; // dmrt_tensor_desc::buffer ->
  ~Buffers() {
    for (auto &kv : base)
      cudaFree(kv.second);
  }
};

inline bool cuda(cudaError_t e, const std::string &what, std::string &error) {
  if (e == cudaSuccess)
    return true;
  error = what + ": " + cudaGetErrorString(e);
  return false;
}

inline bool check(const dmrt::Status &s, const std::string &what, std::string &error) {
  if (s)
    return true;
  error = what + ": " + dmrt_status_name(s.code) + ": " + s.message;
  return false;
}

/// Allocates, fills with NaN bytes and binds every caller tensor.
inline bool bindAll(dmrt::Layer &layer, Buffers &buf, std::string &error) {
  for (const dmrt_tensor_desc &t : layer.tensors()) {
    void *&base = buf.base[t.buffer];
    if (!base && (!cuda(cudaMalloc(&base, size_t(t.buffer_bytes)), "cudaMalloc", error) ||
                  !cuda(cudaMemset(base, 0xFF, size_t(t.buffer_bytes)), "cudaMemset", error)))
      return false;
    if (!check(layer.bind(t.name, static_cast<char *>(base) + t.buffer_offset),
               std::string("bind ") + t.name, error))
      return false;
  }
  return true;
}

inline void *tensorPtr(dmrt::Layer &layer, Buffers &buf, const std::string &name) {
  dmrt_tensor_desc d;
  if (!layer.tensor(name, d))
    return nullptr;
  return static_cast<char *>(buf.base[d.buffer]) + d.buffer_offset;
}

/// Forward + backward with (seed, offset); every result's bytes by name.
inline bool step(dmrt::Layer &layer, Buffers &buf, const std::vector<std::string> &results,
          uint64_t seed, uint64_t offset, std::map<std::string, std::vector<uint8_t>> &out,
          std::string &error) {
  if (!check(layer.setSeed(seed, offset), "set seed", error) ||
      !check(layer.forward(nullptr), "forward", error) ||
      !check(layer.backward(nullptr), "backward", error) ||
      !cuda(cudaDeviceSynchronize(), "the step", error))
    return false;
  for (const std::string &n : results) {
    dmrt_tensor_desc d;
    layer.tensor(n, d);
    std::vector<uint8_t> &bytes = out[n];
    bytes.resize(size_t(d.bytes));
    if (!cuda(cudaMemcpy(bytes.data(), tensorPtr(layer, buf, n), bytes.size(),
                         cudaMemcpyDeviceToHost),
              "download " + n, error))
      return false;
  }
  return true;
}

/// Uploads the eval file's inputs into `layer`'s buffers; the names of the
/// results (outputs and gradients) into `results`.
inline bool uploadInputs(dmrt::Layer &layer, Buffers &buf, const dmrt::Bundle &b,
                  const std::vector<dmrt::StepBinding> &bindings,
                  std::vector<std::string> &results, int &uploaded, std::string &error) {
  for (const dmrt::StepBinding &sb : bindings) {
    const dmrt::BundleTensor *t = b.tensor(sb.tensor);
    if (!sb.input) {
      results.push_back(t->name);
      continue;
    }
    dmrt::Tensor v = dmrt::fromDoubles(t->name, t->dtype, t->shape, dmrt::toDoubles(*sb.value));
    if (!cuda(cudaMemcpy(tensorPtr(layer, buf, t->name), v.bytes.data(), v.bytes.size(),
                         cudaMemcpyHostToDevice),
              "upload " + t->name, error))
      return false;
    ++uploaded;
  }
  return true;
}

/// Loads the bundle and the eval file, binds the file's tensors to the
/// bundle's and reads the file's dropout seed (metadata "seed").
inline bool loadEvalStep(const std::string &bundleDir, const std::string &storagePath,
                         dmrt::Bundle &b, dmrt::TensorFile &storage,
                         std::vector<dmrt::StepBinding> &bindings, uint64_t &seed,
                         std::string &error) {
  if (!dmrt::loadBundle(bundleDir, b, error) ||
      !dmrt::readSafetensors(storagePath, storage, error) ||
      !dmrt::bindEvalFile(b, storage, storagePath, bindings, error))
    return false;
  auto s = storage.metadata.find("seed");
  if (s == storage.metadata.end() || !dmrt::parseU64(s->second, seed)) {
    error = storagePath + ": no unsigned 64-bit metadata \"seed\" (the dropout seed)";
    return false;
  }
  return true;
}

} // namespace util
} // namespace dmctest

#endif // DMC_TESTS_GPU_WHOLESTEPUTIL_H
