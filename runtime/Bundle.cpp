//===- Bundle.cpp - Load and validate a layer bundle ----------------------===//
#include "runtime/Bundle.h"

#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace dmrt {
namespace {

bool isDir(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool isFile(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

std::string Bundle::path(const std::string &rel) const {
  return dir.empty() ? rel : dir + "/" + rel;
}

bool loadBundle(const std::string &dir, Bundle &out, std::string &error) {
  if (!isDir(dir)) {
    error = dir + ": not a directory (expected a bundle OUT.dmlib)";
    return false;
  }
  std::string file = dir + "/manifest.json";
  std::ifstream is(file, std::ios::binary);
  if (!is) {
    error = file + ": cannot open";
    return false;
  }
  std::stringstream ss;
  ss << is.rdbuf();
  Bundle b;
  if (!parseManifest(ss.str(), file, b, error))
    return false;
  b.dir = dir;
  for (size_t i = 0; i < b.kernels.size(); ++i)
    if (!isFile(b.path(b.kernels[i].cubin))) {
      error = file + ": kernels[" + std::to_string(i) + "].cubin: file " +
              b.path(b.kernels[i].cubin) + " does not exist";
      return false;
    }
  out = std::move(b);
  return true;
}

} // namespace dmrt
