//===- Bundle.h - Load and validate a layer bundle (OUT.dmlib) ----*- C++ -*-===//
//
// A bundle directory: manifest.json (read by the format's one codec,
// runtime/format/Manifest.h), the kernels' cubins and optional reference
// data. loadBundle reads and validates the manifest and checks that every
// kernel's cubin exists inside the bundle, with its recorded size and
// checksum (manifest version 4). No exceptions leave this API.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_BUNDLE_H
#define DMRT_BUNDLE_H

#include "runtime/Safetensors.h"
#include "runtime/format/Manifest.h"

#include <string>

namespace dmrt {

/// A manifest and the directory it was loaded from.
struct Bundle : Manifest {
  std::string dir; // the bundle directory ("" when parsed from text)

  /// dir + "/" + rel.
  std::string path(const std::string &rel) const;
};

/// Reads DIR/manifest.json, validates it, and checks that every kernel's cubin
/// exists inside the bundle and (version 4) has the recorded size and
/// FNV-1a 64 checksum. CPU only: no CUDA call.
bool loadBundle(const std::string &dir, Bundle &out, std::string &error);

} // namespace dmrt

#endif // DMRT_BUNDLE_H
