//===- ModuleCache.h - Each cubin loaded once ----------------------*- C++ -*-===//
//
// Loads a kernel's cubin through the driver API (CudaDriver) the first time
// its function is asked for and keeps the module until the cache is
// destroyed (which must happen before the driver's), so that the executor
// and the benchmark harness load each cubin once, however often they launch
// it. Raises the dynamic shared-memory limit for kernels above 48 KiB.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_MODULECACHE_H
#define DMRT_MODULECACHE_H

#include "runtime/CudaDriver.h"

#include <map>
#include <string>
#include <utility>

namespace dmrt {

class ModuleCache {
public:
  explicit ModuleCache(CudaDriver &driver) : driver_(driver) {}
  ~ModuleCache();
  ModuleCache(const ModuleCache &) = delete;
  ModuleCache &operator=(const ModuleCache &) = delete;

  /// Function `entry` of the cubin at `path` (sharedBytes: its dynamic shared
  /// memory). False with `error` naming the file; `deviceError` tells a
  /// failed driver call on a readable file (e.g. a cubin for another arch,
  /// or the shared-memory attribute) from an unreadable file.
  bool function(const std::string &path, const std::string &entry, int64_t sharedBytes,
                CUfunction &out, bool &deviceError, std::string &error);
  /// Modules loaded so far.
  size_t loaded() const { return modules_.size(); }

private:
  CudaDriver &driver_;
  std::map<std::string, CUmodule> modules_;                         // by path
  std::map<std::pair<std::string, std::string>, CUfunction> functions_; // (path, entry)
};

} // namespace dmrt

#endif // DMRT_MODULECACHE_H
