//===- AttentionGpu.h - Attention kernels compiled, loaded and launched -*- C++ -*-===//
//
// What the GPU test and its benchmark mode share: NVRTC compilation of a
// problem's kernels for the device's architecture, loading through the
// runtime's CudaDriver, device buffers, and launches with the kernel ABI's
// parameters (tensor pointers in order, then the seed).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_ATTENTIONGPU_H
#define DMC_TESTS_GPU_ATTENTIONGPU_H

#include "codegen/attention/AttentionProblem.h"
#include "runtime/CudaDriver.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace dmc::attention_test {

/// The NVRTC architecture for compute capability major.minor ("sm_90a" for
/// 9.0, "sm_80" for 8.x but 8.9, ...); "" when the kernels do not support it.
std::string archFor(int major, int minor);

/// A device allocation, freed with the object.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  /// Allocates `bytes` (at least 16) filled with 0xFF (NaN as bf16, f16, f32).
  bool allocate(size_t bytes, std::string &error);
  bool upload(const void *host, size_t bytes, std::string &error);
  bool download(void *host, size_t bytes, std::string &error) const;
  void *get() const { return ptr_; }

private:
  void *ptr_ = nullptr;
};

/// One kernel of one problem, compiled and loaded.
struct LoadedKernel {
  dmcgen::AttentionKernelKind kind = dmcgen::AttentionKernelKind::Forward;
  dmcgen::AttentionTiles tiles;
  dmcgen::AttentionLaunch geometry;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
};

/// Compiles `kinds` of `p` with `tiles` (one per kind) for `arch` on
/// `threads` NVRTC threads and loads them; on failure `error` names the kernel.
bool buildKernels(dmrt::CudaDriver &driver, const dmcgen::AttentionProblem &p,
                  const std::vector<dmcgen::AttentionKernelKind> &kinds,
                  const std::vector<dmcgen::AttentionTiles> &tiles, const std::string &arch,
                  std::vector<LoadedKernel> &out, std::string &error);
void unloadKernels(dmrt::CudaDriver &driver, std::vector<LoadedKernel> &kernels);

/// Launches `k` on `stream` with `pointers` (the ABI's tensors in order) and `seed`.
bool launchKernel(dmrt::CudaDriver &driver, const LoadedKernel &k,
                  const std::vector<void *> &pointers, unsigned long long seed,
                  cudaStream_t stream, std::string &error);

/// "what: cudaErrorX (description)" unless `e` is cudaSuccess.
bool cudaOk(cudaError_t e, const char *what, std::string &error);

} // namespace dmc::attention_test

#endif // DMC_TESTS_GPU_ATTENTIONGPU_H
