//===- CubinCache.h - On-disk cache of NVRTC cubins ---------------*- C++ -*-===//
//
// One file per compile, <dir>/<sha256-hex>.cubin: the cubin bytes followed by
// a 40-byte trailer (SHA-256 of the cubin, then the tag "dmccubn1"). A file
// that is short, mistagged, fails the digest or is not ELF is a miss and is
// overwritten. Writes go to a unique temp file in the same directory and are
// renamed into place, so concurrent compilers never see a partial entry.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_NVRTC_CUBINCACHE_H
#define DMC_CODEGEN_NVRTC_CUBINCACHE_H

#include <string>
#include <vector>

namespace dmcgen {

/// The file that holds the entry for `keyHex` under `dir`.
std::string cubinCachePath(const std::string &dir, const std::string &keyHex);

/// True and fills `cubin` when a valid entry exists.
bool readCachedCubin(const std::string &path, std::vector<char> &cubin);

/// Writes the entry atomically (creating `dir`); false with `error` set on failure.
bool writeCachedCubin(const std::string &dir, const std::string &path,
                      const std::vector<char> &cubin, std::string &error);

} // namespace dmcgen

#endif // DMC_CODEGEN_NVRTC_CUBINCACHE_H
