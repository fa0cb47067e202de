//===- Bundle.cpp - Load and validate a layer bundle ----------------------===//
#include "runtime/Bundle.h"

#include "runtime/format/Checksum.h"

#include <fstream>
#include <iterator>
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

bool loadBundle(const std::string &dir, Bundle &out, std::string &error,
                CubinImages *images) {
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
  CubinImages read; // each file once, whichever kernels share it
  for (size_t i = 0; i < b.kernels.size(); ++i) {
    const BundleKernel &k = b.kernels[i];
    std::string where = file + ": kernels[" + std::to_string(i) + "].cubin: file " +
                        b.path(k.cubin);
    if (!isFile(b.path(k.cubin))) {
      error = where + " does not exist";
      return false;
    }
    // Before version 4 no size or checksum is recorded: read only for `images`.
    if (k.cubinBytes < 0 && !images)
      continue;
    auto [it, added] = read.try_emplace(k.cubin);
    CubinImage &image = it->second;
    if (added) {
      std::ifstream cs(b.path(k.cubin), std::ios::binary);
      image.bytes.assign(std::istreambuf_iterator<char>(cs), std::istreambuf_iterator<char>());
      if (!cs.good() && !cs.eof()) {
        error = where + ": cannot read";
        return false;
      }
      image.checksum = fnv1a64(image.bytes.data(), image.bytes.size());
    }
    if (k.cubinBytes < 0)
      continue;
    if (int64_t(image.bytes.size()) != k.cubinBytes) {
      error = where + " has " + std::to_string(image.bytes.size()) +
              " bytes, the manifest says " + std::to_string(k.cubinBytes) +
              " (truncated or replaced?)";
      return false;
    }
    if (image.checksum != k.cubinChecksum) {
      error = where + " has FNV-1a 64 checksum " + checksumHex(image.checksum) +
              ", the manifest says " + checksumHex(k.cubinChecksum) + " (modified?)";
      return false;
    }
  }
  out = std::move(b);
  if (images)
    *images = std::move(read);
  return true;
}

} // namespace dmrt
