//===- Bundle.h - Load and validate a layer bundle (OUT.dmlib) ----*- C++ -*-===//
//
// A bundle directory: manifest.json (read by the format's one codec,
// runtime/format/Manifest.h), the kernels' cubins and optional reference
// data. loadBundle reads and validates the manifest and checks that every
// kernel's cubin exists inside the bundle, with its recorded size and
// checksum (manifest version 4). Each cubin is read once: a caller that
// loads modules (the executor, the benchmark harness) asks loadBundle for
// the verified bytes (CubinImages) and hands them to the module cache
// instead of reading the files again. No exceptions leave this API.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_BUNDLE_H
#define DMRT_BUNDLE_H

#include "runtime/Safetensors.h"
#include "runtime/format/Manifest.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dmrt {

/// A manifest and the directory it was loaded from.
struct Bundle : Manifest {
  std::string dir; // the bundle directory ("" when parsed from text)

  /// dir + "/" + rel.
  std::string path(const std::string &rel) const;
};

/// A cubin as loadBundle read it: its bytes and their FNV-1a 64 checksum
/// (runtime/format/Checksum.h; the module cache's key).
struct CubinImage {
  std::vector<char> bytes;
  uint64_t checksum = 0;
};
/// By BundleKernel::cubin (the path relative to the bundle): one entry per
/// file, however many kernels it holds.
using CubinImages = std::map<std::string, CubinImage>;

/// Reads DIR/manifest.json, validates it, and checks that every kernel's cubin
/// exists inside the bundle and (version 4) has the recorded size and
/// FNV-1a 64 checksum. With `images`, every cubin's bytes (read once,
/// verified where the manifest records size and checksum) are put there.
/// CPU only: no CUDA call.
bool loadBundle(const std::string &dir, Bundle &out, std::string &error,
                CubinImages *images = nullptr);

} // namespace dmrt

#endif // DMRT_BUNDLE_H
