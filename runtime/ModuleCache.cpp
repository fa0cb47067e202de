//===- ModuleCache.cpp - Each cubin loaded once per process and device ----===//
#include "runtime/ModuleCache.h"

#include "runtime/format/Checksum.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace dmrt {

ModuleRegistry &ModuleRegistry::process() {
  static ModuleRegistry *registry = new ModuleRegistry;
  return *registry;
}

bool ModuleRegistry::acquire(const ModuleKey &key, const std::vector<char> &image,
                             ModuleLoader &loader, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    ++it->second.refs;
    return true;
  }
  CUmodule m = nullptr;
  if (!loader.loadModule(image, key.path, m, error))
    return false;
  Entry &e = entries_[key];
  e.module = m;
  e.refs = 1;
  ++stats_.loads;
  ++stats_.live;
  return true;
}

bool ModuleRegistry::function(const ModuleKey &key, const std::string &entry,
                              int64_t sharedBytes, ModuleLoader &loader, CUfunction &out,
                              bool &deviceError, std::string &error) {
  deviceError = false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    error = key.path + ": module not acquired (internal error)";
    return false;
  }
  auto fn = it->second.functions.find(entry);
  if (fn == it->second.functions.end()) {
    CUfunction f = nullptr;
    if (!loader.getFunction(it->second.module, entry, f, error)) {
      error = key.path + ": " + error;
      return false;
    }
    fn = it->second.functions.emplace(entry, std::make_pair(f, int64_t(48 * 1024))).first;
  }
  if (sharedBytes > fn->second.second) {
    if (!loader.setMaxDynamicShared(fn->second.first, static_cast<int>(sharedBytes), error)) {
      deviceError = true;
      return false;
    }
    fn->second.second = sharedBytes;
  }
  out = fn->second.first;
  return true;
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

bool ModuleCache::function(const std::string &path, const std::string &entry,
                           int64_t sharedBytes, CUfunction &out, bool &deviceError,
                           std::string &error) {
  deviceError = false;
  auto known = functions_.find({path, entry});
  if (known != functions_.end()) {
    out = known->second;
    return true;
  }
  auto held = held_.find(path);
  if (held == held_.end()) {
    std::ifstream is(path, std::ios::binary);
    if (!is) {
      error = path + ": cannot open";
      return false;
    }
    std::vector<char> image((std::istreambuf_iterator<char>(is)),
                            std::istreambuf_iterator<char>());
    if (is.bad()) {
      error = path + ": read error";
      return false;
    }
    ModuleKey key;
    key.device = loader_.device();
    char real[PATH_MAX];
    key.path = realpath(path.c_str(), real) ? std::string(real) : path;
    key.checksum = fnv1a64(image.data(), image.size());
    if (!registry_.acquire(key, image, loader_, error)) {
      deviceError = true;
      return false;
    }
    held = held_.emplace(path, key).first;
  }
  CUfunction fn = nullptr;
  if (!registry_.function(held->second, entry, sharedBytes, loader_, fn, deviceError, error))
    return false;
  functions_[{path, entry}] = fn;
  out = fn;
  return true;
}

} // namespace dmrt
