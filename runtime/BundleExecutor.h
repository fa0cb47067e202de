//===- BundleExecutor.h - Run every step of a bundle in order -----*- C++ -*-===//
//
// A whole training step on the GPU: every base tensor of the manifest gets its
// own device allocation (aliases are views into their base, Bundle::baseOf),
// every kernel's cubin is loaded through the CUDA driver API (CudaDriver, as
// the harness does) and every contraction gets a GemmRunner (cuBLASLt, the
// heuristic's best algorithm); run() launches manifest `steps` in order on
// one stream. Kernel parameters are those of docs/bundle-format.md: inputs,
// outputs, [workspace (zeroed once at open)], the 64-bit dropout seed.
//
// A contraction without a cuBLASLt form in the manifest (`unmappable`) runs
// only if the caller gives it a plan of GEMM calls (GemmCall: a descriptor
// and element offsets into a and b), e.g. one GEMM per slice of a shared
// outermost contracted dimension (tests/gpu/SlicedContraction.h); until the
// compiler's configuration makes every contraction mappable, whoever maps
// einsums (codegen/gemm) makes such plans, never the runtime.
//
// No timing and no per-step checking: that is the harness's job
// (runtime/Harness.h); this runs the layer as a library would.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_BUNDLEEXECUTOR_H
#define DMRT_BUNDLEEXECUTOR_H

#include "runtime/Bundle.h"
#include "runtime/CudaDriver.h"
#include "runtime/GemmRunner.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dmrt {

/// One cuBLASLt call of a contraction's plan: `gemm` over the contraction's
/// a, b and d starting at these element offsets.
struct GemmCall {
  GemmDescriptor gemm;
  int64_t aOffset = 0, bOffset = 0, dOffset = 0;
};
/// Contraction id -> the calls that compute it, in order.
using GemmPlans = std::map<int64_t, std::vector<GemmCall>>;

class BundleExecutor {
public:
  BundleExecutor() = default;
  ~BundleExecutor();
  BundleExecutor(const BundleExecutor &) = delete;
  BundleExecutor &operator=(const BundleExecutor &) = delete;

  /// Opens device `ordinal`, allocates every tensor of `b` (which must
  /// outlive the executor), loads its kernels and prepares its contractions
  /// (`plans` for those without a cuBLASLt form in the manifest).
  /// On failure noDevice() tells a missing driver/GPU from a real error.
  bool open(const Bundle &b, int ordinal, const GemmPlans &plans, std::string &error);
  bool noDevice() const { return driver_.noDevice(); }

  /// Sets every byte of every tensor to `byte` (0xFF: NaN in bf16, f16 and
  /// f32, so that elements no step writes show up in the results).
  bool fillAll(uint8_t byte, std::string &error);
  /// Copies host bytes (the tensor's dtype, row-major) into tensor `id`.
  bool upload(int64_t id, const std::vector<uint8_t> &bytes, std::string &error);
  /// Copies tensor `id` (tensor(id)->bytes bytes) to the host.
  bool download(int64_t id, std::vector<uint8_t> &bytes, std::string &error);

  /// Runs every step of the manifest in order with dropout seed `seed`,
  /// then synchronizes. Errors name the step.
  bool run(uint64_t seed, std::string &error);

  /// Device address of tensor `id` (its base's memory plus its offset).
  void *ptr(int64_t id) const;

private:
  struct LoadedKernel {
    CUfunction fn = nullptr;
    void *workspace = nullptr;
  };
  bool loadKernel(const BundleKernel &k, std::string &error);
  bool prepareContraction(const BundleContraction &c, const GemmPlans &plans,
                          std::string &error);
  bool launchKernel(const BundleKernel &k, uint64_t seed, std::string &error);
  bool runContraction(const BundleContraction &c, std::string &error);

  const Bundle *b_ = nullptr;
  CudaDriver driver_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void *gemmWorkspace_ = nullptr;
  std::map<int64_t, void *> base_;            // base tensor id -> memory
  std::vector<CUmodule> modules_;
  std::map<int64_t, LoadedKernel> kernels_;   // kernel id ->
  /// One cuBLASLt call of a contraction: the runner and its operands'
  /// element offsets (a slice of a split contraction).
  struct Gemm {
    std::unique_ptr<GemmRunner> runner;
    int64_t first = -1, second = -1; // cuBLASLt operands (after the swap)
    int64_t firstOffset = 0, secondOffset = 0, dOffset = 0;
  };
  bool addGemm(const BundleContraction &c, const GemmCall &call, std::string &error);
  std::map<int64_t, std::vector<Gemm>> gemms_; // contraction id -> calls in order
};

} // namespace dmrt

#endif // DMRT_BUNDLEEXECUTOR_H
