//===- ModuleCache.cpp - Each cubin loaded once ---------------------------===//
#include "runtime/ModuleCache.h"

#include <fstream>
#include <iterator>
#include <vector>

namespace dmrt {

ModuleCache::~ModuleCache() {
  for (auto &kv : modules_)
    driver_.unloadModule(kv.second);
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
  auto mod = modules_.find(path);
  if (mod == modules_.end()) {
    std::ifstream is(path, std::ios::binary);
    if (!is) {
      error = path + ": cannot open";
      return false;
    }
    std::vector<char> image((std::istreambuf_iterator<char>(is)),
                            std::istreambuf_iterator<char>());
    CUmodule m = nullptr;
    if (!driver_.loadModule(image, path, m, error)) {
      deviceError = true;
      return false;
    }
    mod = modules_.emplace(path, m).first;
  }
  CUfunction fn = nullptr;
  if (!driver_.getFunction(mod->second, entry, fn, error)) {
    error = path + ": " + error;
    return false;
  }
  if (sharedBytes > 48 * 1024 &&
      !driver_.setMaxDynamicShared(fn, static_cast<int>(sharedBytes), error)) {
    deviceError = true;
    return false;
  }
  functions_[{path, entry}] = fn;
  out = fn;
  return true;
}

} // namespace dmrt
