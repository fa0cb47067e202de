//===- ModuleCache.h - Each cubin loaded once per process and device -*- C++ -*-===//
//
// Cubins are loaded through the driver API (CudaDriver, seen here as a
// ModuleLoader so that tests can count loads without a GPU) from the bytes
// loadBundle read and checked (CubinImage): no file is read here. Two levels:
//
//  - ModuleRegistry::process(), one per process: the loaded CUmodules by
//    (device, cubin path, FNV-1a 64 of the cubin's bytes), each with a
//    reference count and its functions. Several layer instances of one
//    bundle (dmrt_open twice, e.g. one per transformer layer) share them;
//    the module is unloaded when the last reference goes. A mutex makes it
//    safe to open and close layers from several threads; loads run under
//    it. Keying by the bytes' checksum means a cubin rewritten in place is
//    loaded anew, never confused with the old one.
//  - ModuleCache, one per executor (or benchmark harness): the references
//    it holds, released on destruction, and its own (path, entry) ->
//    CUfunction table so that a launch takes no lock.
//
// Unloading needs the module's device current (the executor's destructor
// runs under a DeviceGuard) and its context alive: every ModuleCache must
// be destroyed before the CudaDriver (primary-context reference) it uses.
// Dynamic shared memory above 48 KiB: the kernel's limit is raised once per
// function (again only for a larger size).
//
// Every failure is a driver call's: it returns that call's CUresult and an
// error naming the cubin, the entry where there is one, the call, and the
// driver's error name and description; moduleErrorIsBundleFault
// (CudaDriver.h) tells a bad cubin from a device failure.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_MODULECACHE_H
#define DMRT_MODULECACHE_H

#include "runtime/Bundle.h"
#include "runtime/CudaDriver.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace dmrt {

/// Which loaded module: the same bytes from the same file on the same device.
struct ModuleKey {
  int device = 0;
  std::string path; ///< canonical (realpath) when the file exists
  uint64_t checksum = 0;
  bool operator<(const ModuleKey &o) const {
    return std::tie(device, path, checksum) < std::tie(o.device, o.path, o.checksum);
  }
};

class ModuleRegistry {
public:
  ModuleRegistry() = default;
  ModuleRegistry(const ModuleRegistry &) = delete;
  ModuleRegistry &operator=(const ModuleRegistry &) = delete;
  /// The process-wide registry (never destroyed: modules outliving main are
  /// the driver's to free at exit).
  static ModuleRegistry &process();

  /// One more reference to `key`'s module, loading `image` through `loader`
  /// when no instance holds it. The load's status; on failure `error` and
  /// no reference taken.
  CUresult acquire(const ModuleKey &key, const std::vector<char> &image,
                   ModuleLoader &loader, std::string &error);
  /// Function `entry` of an acquired module, its dynamic shared-memory limit
  /// raised to `sharedBytes` when above 48 KiB. The failed call's status
  /// (cuModuleGetFunction, cuFuncSetAttribute) with `error`.
  CUresult function(const ModuleKey &key, const std::string &entry, int64_t sharedBytes,
                    ModuleLoader &loader, CUfunction &out, std::string &error);
  /// Drops one reference; the last one unloads the module through `loader`.
  void release(const ModuleKey &key, ModuleLoader &loader);

  struct Stats {
    uint64_t loads = 0;   ///< modules loaded since the process started
    uint64_t unloads = 0; ///< modules unloaded since
    size_t live = 0;      ///< modules loaded now
  };
  Stats stats() const;
  /// References to `key` now (0: not loaded).
  size_t references(const ModuleKey &key) const;

private:
  struct Entry {
    CUmodule module = nullptr;
    size_t refs = 0;
    std::map<std::string, std::pair<CUfunction, int64_t>> functions; ///< entry -> (fn, shared limit set)
  };
  mutable std::mutex mutex_;
  std::map<ModuleKey, Entry> entries_;
  Stats stats_;
};

class ModuleCache {
public:
  /// Loads through `loader` on its device (ModuleLoader::device).
  explicit ModuleCache(ModuleLoader &loader,
                       ModuleRegistry &registry = ModuleRegistry::process())
      : loader_(loader), registry_(registry) {}
  ~ModuleCache();
  ModuleCache(const ModuleCache &) = delete;
  ModuleCache &operator=(const ModuleCache &) = delete;

  /// Function `entry` of the cubin at `path`, whose bytes are `image`
  /// (loadBundle's; sharedBytes: the kernel's dynamic shared memory).
  /// CUDA_SUCCESS, or the failed driver call's status with `error` naming
  /// the file, the entry, the call and the driver's error.
  CUresult function(const std::string &path, const CubinImage &image, const std::string &entry,
                    int64_t sharedBytes, CUfunction &out, std::string &error);
  /// Modules this cache holds a reference to.
  size_t loaded() const { return held_.size(); }

private:
  ModuleLoader &loader_;
  ModuleRegistry &registry_;
  std::map<std::string, ModuleKey> held_;                              // by path as asked
  std::map<std::pair<std::string, std::string>, CUfunction> functions_; // (path, entry)
};

} // namespace dmrt

#endif // DMRT_MODULECACHE_H
