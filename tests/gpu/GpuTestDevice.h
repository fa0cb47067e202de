//===- GpuTestDevice.h - the device check every GPU test starts with ------===//
#ifndef DMC_TESTS_GPU_GPUTESTDEVICE_H
#define DMC_TESTS_GPU_GPUTESTDEVICE_H

#include "runtime/CudaDriver.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdio>

namespace dmc::test {

/// 0 when device 0 is usable (and printed), 77 (ctest's skip code) when there
/// is no CUDA device or no driver (dmrt::cudaErrorMeansNoDevice), 1 when a
/// GPU is there but unusable (e.g. cudaErrorInsufficientDriver with
/// libcuda.so.1 present: the driver is older than the runtime) or cannot be
/// queried. `needs` says what the test
/// needs a GPU for, in the skip message.
inline int checkGpuDevice(const char *needs) {
  int devices = 0;
  cudaError_t ce = cudaGetDeviceCount(&devices);
  if (ce != cudaSuccess &&
      !dmrt::cudaErrorMeansNoDevice(ce, dmrt::cudaDriverLibraryLoads())) {
    std::printf("FATAL: cudaGetDeviceCount: %s (%s): a CUDA error other than "
                "\"no device\" fails the test\n",
                cudaGetErrorName(ce), cudaGetErrorString(ce));
    return dmrt::deviceFailureExitCode(false);
  }
  if (ce != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (cudaGetDeviceCount: %s, %d devices%s); %s need a GPU\n",
                ce == cudaSuccess ? "ok" : cudaGetErrorName(ce), devices,
                dmrt::cudaDriverLibraryLoads() ? "" : ", libcuda.so.1 does not load", needs);
    return dmrt::deviceFailureExitCode(true);
  }
  cudaDeviceProp prop;
  if ((ce = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess) {
    std::printf("FATAL: cudaGetDeviceProperties: %s\n", cudaGetErrorString(ce));
    return 1;
  }
  std::printf("device 0: %s (sm_%d%d), cuBLASLt %zu\n", prop.name, prop.major, prop.minor,
              cublasLtGetVersion());
  return 0;
}

} // namespace dmc::test

#endif // DMC_TESTS_GPU_GPUTESTDEVICE_H
