//===- Checksum.h - FNV-1a 64 of a bundle file ---------------------*- C++ -*-===//
//
// The checksum the manifest (version 4) records for each cubin: 64-bit FNV-1a
// over the file's bytes (offset basis 0xcbf29ce484222325, prime
// 0x100000001b3), written as 16 lower-case hex digits. Not cryptographic: it
// catches truncated, replaced and edited files, not an adversary. The
// compiler computes it when writing a bundle, the runtime when opening one.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_CHECKSUM_H
#define DMRT_FORMAT_CHECKSUM_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace dmrt {

inline uint64_t fnv1a64(const void *data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/// 16 lower-case hex digits.
inline std::string checksumHex(uint64_t h) {
  static const char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4)
    s[i] = digits[h & 15];
  return s;
}

/// Inverse of checksumHex: exactly 16 hex digits (either case).
inline bool parseChecksumHex(const std::string &s, uint64_t &out) {
  if (s.size() != 16)
    return false;
  uint64_t h = 0;
  for (char c : s) {
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0)
      return false;
    h = h << 4 | uint64_t(v);
  }
  out = h;
  return true;
}

} // namespace dmrt

#endif // DMRT_FORMAT_CHECKSUM_H
