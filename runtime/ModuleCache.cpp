//===- ModuleCache.cpp - Each cubin loaded once per process and device ----===//
#include "runtime/ModuleCache.h"

#include <climits>
#include <cstdlib>

namespace dmrt {

ModuleRegistry &ModuleRegistry::process() {
  static ModuleRegistry *registry = new ModuleRegistry;
  return *registry;
}

CUresult ModuleRegistry::acquire(const ModuleKey &key, const std::vector<char> &image,
                                 ModuleLoader &loader, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    ++it->second.refs;
    return CUDA_SUCCESS;
  }
  CUmodule m = nullptr;
  if (CUresult r = loader.loadModule(image, m, error); r != CUDA_SUCCESS) {
    error = key.path + ": " + error;
    return r;
  }
  Entry &e = entries_[key];
  e.module = m;
  e.refs = 1;
  ++stats_.loads;
  ++stats_.live;
  return CUDA_SUCCESS;
}

CUresult ModuleRegistry::function(const ModuleKey &key, const std::string &entry,
                                  int64_t sharedBytes, ModuleLoader &loader, CUfunction &out,
                                  std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    error = key.path + ": module not acquired (internal error)";
    return CUDA_ERROR_INVALID_HANDLE;
  }
  std::string where = key.path + ", entry " + entry + ": ";
  auto fn = it->second.functions.find(entry);
  if (fn == it->second.functions.end()) {
    CUfunction f = nullptr;
    if (CUresult r = loader.getFunction(it->second.module, entry, f, error); r != CUDA_SUCCESS) {
      error = where + error;
      return r;
    }
    fn = it->second.functions.emplace(entry, std::make_pair(f, int64_t(48 * 1024))).first;
  }
  if (sharedBytes > fn->second.second) {
    if (CUresult r = loader.setMaxDynamicShared(fn->second.first, static_cast<int>(sharedBytes),
                                                error);
        r != CUDA_SUCCESS) {
      error = where + "dynamic shared memory of " + std::to_string(sharedBytes) + " bytes: " +
              error;
      return r;
    }
    fn->second.second = sharedBytes;
  }
  out = fn->second.first;
  return CUDA_SUCCESS;
}

void ModuleRegistry::release(const ModuleKey &key, ModuleLoader &loader) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end() || --it->second.refs > 0)
    return;
  loader.unloadModule(it->second.module);
  entries_.erase(it);
  ++stats_.unloads;
  --stats_.live;
}

ModuleRegistry::Stats ModuleRegistry::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

size_t ModuleRegistry::references(const ModuleKey &key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.refs;
}

ModuleCache::~ModuleCache() {
  for (auto &kv : held_)
    registry_.release(kv.second, loader_);
}

CUresult ModuleCache::function(const std::string &path, const CubinImage &image,
                               const std::string &entry, int64_t sharedBytes, CUfunction &out,
                               std::string &error) {
  auto known = functions_.find({path, entry});
  if (known != functions_.end()) {
    out = known->second;
    return CUDA_SUCCESS;
  }
  auto held = held_.find(path);
  if (held == held_.end()) {
    ModuleKey key;
    key.device = loader_.device();
    char real[PATH_MAX];
    key.path = realpath(path.c_str(), real) ? std::string(real) : path;
    key.checksum = image.checksum;
    if (CUresult r = registry_.acquire(key, image.bytes, loader_, error); r != CUDA_SUCCESS)
      return r;
    held = held_.emplace(path, key).first;
  }
  CUfunction fn = nullptr;
  if (CUresult r = registry_.function(held->second, entry, sharedBytes, loader_, fn, error);
      r != CUDA_SUCCESS)
    return r;
  functions_[{path, entry}] = fn;
  out = fn;
  return CUDA_SUCCESS;
}

} // namespace dmrt
