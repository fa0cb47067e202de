//===- BundleTarget.cpp - A bundle directory through loadBundle ------------===//
//
// The input is a bundle in one buffer: manifest.json up to the first NUL byte,
// then the bytes of the one cubin file the directory holds, k0.cubin (absent
// when the input has no NUL). It is written into a private directory and
// loaded as dmrt_open loads it: loadBundle (manifest, cubins inside the
// bundle, their sizes and checksums, each read once), then the plan and the
// bindings (ManifestProperties.h). The seeds are real bundles' manifests with
// every kernel pointing at k0.cubin and its size and checksum
// (tests/fuzz/make-corpus.sh).
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzTarget.h"
#include "tests/fuzz/targets/ManifestProperties.h"

#include "runtime/Bundle.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace dmc::fuzz {

namespace {

constexpr char kTarget[] = "bundle";

void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  os.write(reinterpret_cast<const char *>(data), std::streamsize(size));
  require(bool(os), kTarget, "cannot write " + path);
}

} // namespace

int runBundle(const uint8_t *data, size_t size) {
  static const std::string dir = [] {
    std::string d = scratchDir() + "/bundle";
    std::error_code ec;
    std::filesystem::create_directory(d, ec);
    require(!ec, kTarget, "cannot create " + d + ": " + ec.message());
    return d;
  }();
  const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
  size_t manifestBytes = nul ? size_t(nul - data) : size;
  writeFile(dir + "/manifest.json", data, manifestBytes);
  std::string cubin = dir + "/k0.cubin";
  if (nul)
    writeFile(cubin, nul + 1, size - manifestBytes - 1);
  else
    std::remove(cubin.c_str());

  dmrt::Bundle b;
  dmrt::CubinImages images;
  std::string error;
  if (!dmrt::loadBundle(dir, b, error, &images)) {
    requireNamed(error, dir, kTarget);
    return 0;
  }
  for (const dmrt::BundleKernel &k : b.kernels) {
    auto it = images.find(k.cubin);
    require(it != images.end(), kTarget, "kernel " + k.name + "'s cubin was not read");
    if (k.cubinBytes >= 0)
      require(int64_t(it->second.bytes.size()) == k.cubinBytes, kTarget,
              "kernel " + k.name + "'s cubin has another size than the manifest says");
  }
  checkAcceptedManifest(b, kTarget);
  return 0;
}

} // namespace dmc::fuzz
