//===- ManifestTarget.cpp - manifest.json through the format's codec ------===//
#include "tests/fuzz/FuzzTarget.h"
#include "tests/fuzz/targets/ManifestProperties.h"

namespace dmc::fuzz {

int runManifest(const uint8_t *data, size_t size) {
  static const char kTarget[] = "manifest", kName[] = "fuzz-manifest.json";
  std::string text(reinterpret_cast<const char *>(data), size), error;
  dmrt::Manifest m;
  if (!dmrt::parseManifest(text, kName, m, error)) {
    requireNamed(error, kName, kTarget);
    return 0;
  }
  checkAcceptedManifest(m, kTarget);
  return 0;
}

} // namespace dmc::fuzz
