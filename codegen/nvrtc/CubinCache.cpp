//===- CubinCache.cpp - On-disk cache of NVRTC cubins ---------------------===//

#include "codegen/nvrtc/CubinCache.h"

#include "codegen/nvrtc/Sha256.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace fs = std::filesystem;

namespace dmcgen {

namespace {

constexpr char kTag[8] = {'d', 'm', 'c', 'c', 'u', 'b', 'n', '1'};
constexpr size_t kTrailerSize = 32 + sizeof kTag;

bool isElf(const char *p, size_t n) {
  return n >= 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

/// A name no other thread or process uses for its temp file at the same time.
std::string uniqueTempName(const std::string &path) {
  static std::atomic<unsigned long> counter{0};
  std::ostringstream s;
  s << path << ".tmp." << ::getpid() << '.'
    << std::hash<std::thread::id>{}(std::this_thread::get_id()) << '.'
    << counter++;
  return s.str();
}

} // namespace

std::string cubinCachePath(const std::string &dir, const std::string &keyHex) {
  return (fs::path(dir) / (keyHex + ".cubin")).string();
}

bool readCachedCubin(const std::string &path, std::vector<char> &cubin) {
  // Sized read of a regular file only: libstdc++ throws from
  // istreambuf_iterator when `path` is, say, a directory.
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return false;
  uintmax_t size = fs::file_size(path, ec);
  if (ec || size <= kTrailerSize || size > (uintmax_t(1) << 31))
    return false;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::vector<char> bytes((size_t)size);
  in.read(bytes.data(), (std::streamsize)size);
  if (in.gcount() != (std::streamsize)size)
    return false;
  size_t n = bytes.size() - kTrailerSize;
  const char *trailer = bytes.data() + n;
  if (std::memcmp(trailer + 32, kTag, sizeof kTag) != 0)
    return false;
  Sha256::Digest digest = Sha256::of(bytes.data(), n);
  if (std::memcmp(trailer, digest.data(), digest.size()) != 0)
    return false;
  if (!isElf(bytes.data(), n))
    return false;
  bytes.resize(n);
  cubin = std::move(bytes);
  return true;
}

bool writeCachedCubin(const std::string &dir, const std::string &path,
                      const std::vector<char> &cubin, std::string &error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create cache directory '" + dir + "': " + ec.message();
    return false;
  }
  std::string tmp = uniqueTempName(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    Sha256::Digest digest = Sha256::of(cubin.data(), cubin.size());
    out.write(cubin.data(), (std::streamsize)cubin.size());
    out.write(reinterpret_cast<const char *>(digest.data()), digest.size());
    out.write(kTag, sizeof kTag);
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      error = "cannot write cache file '" + tmp + "'";
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    error = "cannot rename '" + tmp + "' to '" + path + "': " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

} // namespace dmcgen
