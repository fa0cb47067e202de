//===- BundleKernels.h - A bundle's steps made ready on one device -*- C++ -*-===//
//
// What the executor (whole phases, runtime/Executor.h) and the benchmark
// harness (one step at a time, runtime/Harness.h) share, so that both load
// and build everything once:
//  - each kernel's CUfunction, through the process-wide module cache
//    (runtime/ModuleCache.h) from the cubin bytes loadBundle read and
//    verified (CubinImages: no file is read again), and its launch shape;
//  - one cuBLASLt handle and workspace (GemmRunner::kWorkspaceBytes, zeroed
//    once), and each contraction's GemmRunner, whose descriptors are built
//    once and reused by every run.
// Steps are prepared one at a time (the harness reports a bad step and goes
// on; a prepared step is never prepared again) or all at once (the
// executor's open fails on the first bad one).
//
// The owner opens the CudaDriver, keeps it alive longer than this object,
// and destroys it (or calls close) with the driver's device current:
// modules unload in its context.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_BUNDLEKERNELS_H
#define DMRT_BUNDLEKERNELS_H

#include "runtime/Bundle.h"
#include "runtime/CudaDriver.h"
#include "runtime/GemmRunner.h"
#include "runtime/ModuleCache.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

namespace dmrt {

/// Grid and block of a kernel as cuLaunchKernel takes them.
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
};

class BundleKernels {
public:
  BundleKernels(const Bundle &b, CudaDriver &driver);
  ~BundleKernels() { close(); }
  BundleKernels(const BundleKernels &) = delete;
  BundleKernels &operator=(const BundleKernels &) = delete;

  /// Loads kernel `i`'s function (index into the manifest's kernels) from
  /// `images` unless it is loaded. CUDA_SUCCESS, or the failed driver
  /// call's status with `error` naming the kernel, its cubin and the
  /// driver's error (moduleErrorIsBundleFault tells whose fault it is).
  CUresult prepareKernel(size_t i, const CubinImages &images, std::string &error);
  /// Creates the cuBLASLt handle and its workspace unless they exist (a
  /// CUDA failure when this fails).
  bool prepareGemmContext(std::string &error);
  /// Builds contraction `i`'s GemmRunner unless it is built (needs
  /// prepareGemmContext). Fails, naming the contraction, on a descriptor or
  /// dtypes cuBLASLt cannot run (the bundle's fault). A contraction whose
  /// manifest names an algorithm (config.json's, from a tuning database)
  /// runs it when this GPU's cuBLASLt accepts it (GemmRunner::useAlgorithm);
  /// otherwise it runs the heuristic's, and a warning on stderr says why.
  bool prepareContraction(size_t i, std::string &error);
  /// Every kernel and contraction, and each contraction's heuristic best
  /// (GemmRunner::algorithms(1)); the first failure names its step.
  bool prepareAll(const CubinImages &images, std::string &error);

  /// Launches of kernel `i`: 1, or 2 when it has a finishing launch
  /// (BundleKernel::finishEntry), part 1, of the same parameters.
  int parts(size_t i) const { return b_.kernels[i].finishEntry.empty() ? 1 : 2; }
  CUfunction function(size_t i, int part = 0) const {
    return part ? finishFunctions_[i] : functions_[i];
  }
  const LaunchShape &shape(size_t i, int part = 0) const {
    return part ? finishShapes_[i] : shapes_[i];
  }
  /// Contraction `i`'s runner; null until prepared.
  GemmRunner *gemm(size_t i) const { return gemms_[i].get(); }
  bool hasGemmWorkspace() const { return workspace_ != nullptr; }
  /// The cuBLASLt workspace every contraction uses (null before
  /// prepareGemmContext): concurrent contractions must not share it.
  void *gemmWorkspace() const { return workspace_; }

  /// Launches prepared kernel `i` with cuLaunchKernel's parameter array
  /// `params` (copied before this returns), every part in order; allocates
  /// nothing unless it fails.
  bool launch(size_t i, void **params, cudaStream_t stream, std::string &error);
  /// Launches part `part` (< parts(i)) of prepared kernel `i` only.
  bool launchPart(size_t i, int part, void **params, cudaStream_t stream, std::string &error);

  /// Releases modules, runners, the handle and the workspace.
  void close();

private:
  const Bundle &b_;
  CudaDriver &driver_;
  std::unique_ptr<ModuleCache> modules_;
  std::vector<CUfunction> functions_;              ///< by kernel index; null: not loaded
  std::vector<LaunchShape> shapes_;                ///< by kernel index
  /// The finishing launch's, by kernel index (null / unused without one).
  std::vector<CUfunction> finishFunctions_;
  std::vector<LaunchShape> finishShapes_;
  std::vector<std::unique_ptr<GemmRunner>> gemms_; ///< by contraction index
  cublasLtHandle_t lt_ = nullptr;
  void *workspace_ = nullptr;
};

} // namespace dmrt

#endif // DMRT_BUNDLEKERNELS_H
