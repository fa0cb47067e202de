//===- DeviceGuard.cpp - Leave the caller's current device as it was -----===//
#include "runtime/DeviceGuard.h"

namespace dmrt {

const DeviceOps &cudaDeviceOps() {
  static const DeviceOps ops = {&cudaGetDevice, &cudaSetDevice, &cudaGetLastError};
  return ops;
}

DeviceGuard::DeviceGuard(const DeviceOps &ops) : ops_(ops) {
  saved_ = ops_.get(&savedDevice_) == cudaSuccess;
  if (!saved_)
    ops_.clear();
}

DeviceGuard::~DeviceGuard() {
  if (!saved_)
    return;
  int now = -1;
  // A callee may have switched without telling the guard: ask when `use` did not.
  bool differs = switched_ || ops_.get(&now) != cudaSuccess || now != savedDevice_;
  if (differs && ops_.set(savedDevice_) != cudaSuccess)
    ops_.clear(); // nothing to report from a destructor; keep no sticky last error
}

bool DeviceGuard::use(int device, std::string &error) {
  int now = -1;
  if (ops_.get(&now) == cudaSuccess && now == device)
    return true;
  cudaError_t e = ops_.set(device);
  if (e != cudaSuccess) {
    ops_.clear();
    error = "cudaSetDevice(" + std::to_string(device) + ") failed: " + cudaGetErrorName(e) +
            " (" + cudaGetErrorString(e) + ")";
    return false;
  }
  switched_ = true;
  return true;
}

} // namespace dmrt
