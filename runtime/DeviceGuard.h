//===- DeviceGuard.h - Leave the caller's current device as it was -*- C++ -*-===//
//
// Every runtime entry point that touches the device runs under a
// DeviceGuard: it remembers the calling thread's current device
// (cudaGetDevice), switches to the layer's device only when it differs
// (`use`), and on destruction, whatever the return path, switches back when
// the current device is no longer the one it found (also after a callee
// such as CudaDriver::open switched it behind the guard's back). A
// framework that runs on device 1 (PyTorch's torch.cuda.set_device) thus
// never sees its current device changed by a layer on device 0.
//
// The CUDA calls are a table (DeviceOps) so that unit tests check the
// logic without a GPU. A failed cudaGetDevice at construction (no driver,
// no device) leaves nothing to restore and its error is cleared, so that
// the caller's next step reports the real cause (e.g. "no device").
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_DEVICEGUARD_H
#define DMRT_DEVICEGUARD_H

#include <cuda_runtime_api.h>

#include <string>

namespace dmrt {

/// The three CUDA runtime calls a DeviceGuard makes.
struct DeviceOps {
  cudaError_t (*get)(int *device);
  cudaError_t (*set)(int device);
  /// Clears the thread's last error after a failed get/set (cudaGetLastError).
  cudaError_t (*clear)();
};

/// cudaGetDevice, cudaSetDevice, cudaGetLastError.
const DeviceOps &cudaDeviceOps();

class DeviceGuard {
public:
  explicit DeviceGuard(const DeviceOps &ops = cudaDeviceOps());
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

  /// Makes `device` current if it is not; false with `error` when that fails.
  bool use(int device, std::string &error);
  /// Whether a current device was found to restore.
  bool saved() const { return saved_; }
  int savedDevice() const { return savedDevice_; }

private:
  const DeviceOps &ops_;
  bool saved_ = false;
  int savedDevice_ = 0;
  /// `use` switched: restore without asking the current device.
  bool switched_ = false;
};

} // namespace dmrt

#endif // DMRT_DEVICEGUARD_H
