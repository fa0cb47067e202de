//===- WholeStepUtil.h - Helpers of the whole-step GPU tests --------------===//
//
// For tests/gpu/WholeStep*.cpp: uploading the eval file's inputs into a
// layer's caller buffers and one forward + backward with its results
// downloaded. The buffers themselves (NaN bytes until written, bound) are
// dmc-run's: runtime/LayerBuffers.h.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_WHOLESTEPUTIL_H
#define DMC_TESTS_GPU_WHOLESTEPUTIL_H

#include "runtime/Bundle.h"
#include "runtime/Harness.h"
#include "runtime/LayerBuffers.h"
#include "runtime/dmrt.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <string>
#include <vector>

namespace dmctest {
namespace util {

using Buffers = dmrt::DeviceBuffers;
using dmrt::cudaOk;
using dmrt::statusOk;

/// Forward + backward with (seed, offset); every result's bytes by name.
inline bool step(dmrt::Layer &layer, Buffers &buf, const std::vector<std::string> &results,
          uint64_t seed, uint64_t offset, std::map<std::string, std::vector<uint8_t>> &out,
          std::string &error) {
  if (!statusOk(layer.setSeed(seed, offset), "set seed", error) ||
      !statusOk(layer.forward(nullptr), "forward", error) ||
      !statusOk(layer.backward(nullptr), "backward", error) ||
      !cudaOk(cudaDeviceSynchronize(), "the step", error))
    return false;
  for (const std::string &n : results) {
    dmrt_tensor_desc d;
    layer.tensor(n, d);
    std::vector<uint8_t> &bytes = out[n];
    bytes.resize(size_t(d.bytes));
    if (!cudaOk(cudaMemcpy(bytes.data(), buf.ptr(layer, n), bytes.size(),
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
    if (!cudaOk(cudaMemcpy(buf.ptr(layer, t->name), v.bytes.data(), v.bytes.size(),
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
