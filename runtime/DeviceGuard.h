//===- DeviceGuard.h - Leave the caller's current device as it was -*- C++ -*-===//
//
// Every runtime entry point that touches the device runs under a
// DeviceGuard: it asks the calling thread's current device once, at
// construction (cudaGetDevice: the only one it makes), switches to the
// layer's device only when that differs (`use`), and on destruction,
// whatever the return path, switches back when it switched. A callee that
// makes another device current behind the guard's back (CudaDriver::open)
// is announced with `assumeSwitched`: the guard then restores without
// asking. A framework that runs on device 1 (PyTorch's
// torch.cuda.set_device) thus never sees its current device changed by a
// layer on device 0.
//
// Between construction and `use` nothing may switch devices unannounced:
// `use` trusts the device the constructor found, which is what keeps every
// C API entry point at one cudaGetDevice.
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
inline const DeviceOps &cudaDeviceOps();

class DeviceGuard {
public:
  explicit DeviceGuard(const DeviceOps &ops = cudaDeviceOps());
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

  /// Makes `device` current if it is not; false with `error` when that fails.
  bool use(int device, std::string &error);
  /// A callee may make another device current: restore on destruction.
  void assumeSwitched() { current_ = -1; }
  /// Whether a current device was found to restore.
  bool saved() const { return saved_; }
  int savedDevice() const { return savedDevice_; }

private:
  const DeviceOps &ops_;
  bool saved_ = false;
  int savedDevice_ = 0;
  /// The device current now as far as the guard knows (-1: unknown, after
  /// assumeSwitched or a failed get).
  int current_ = -1;
};

//===- Implementation (header-only: small, and inlined at each entry point) ===//

inline const DeviceOps &cudaDeviceOps() {
  static const DeviceOps ops = {&cudaGetDevice, &cudaSetDevice, &cudaGetLastError};
  return ops;
}

inline DeviceGuard::DeviceGuard(const DeviceOps &ops) : ops_(ops) {
  saved_ = ops_.get(&savedDevice_) == cudaSuccess;
  if (saved_)
    current_ = savedDevice_;
  else
    ops_.clear();
}

inline DeviceGuard::~DeviceGuard() {
  if (saved_ && current_ != savedDevice_ && ops_.set(savedDevice_) != cudaSuccess)
    ops_.clear(); // nothing to report from a destructor; keep no sticky last error
}

inline bool DeviceGuard::use(int device, std::string &error) {
  if (current_ == device)
    return true;
  cudaError_t e = ops_.set(device);
  if (e != cudaSuccess) {
    ops_.clear(); // a failed cudaSetDevice leaves the current device as it was
    error = "cudaSetDevice(" + std::to_string(device) + ") failed: " + cudaGetErrorName(e) +
            " (" + cudaGetErrorString(e) + ")";
    return false;
  }
  current_ = device;
  return true;
}

} // namespace dmrt

#endif // DMRT_DEVICEGUARD_H
