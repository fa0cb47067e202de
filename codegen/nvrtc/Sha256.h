//===- Sha256.h - SHA-256 digest for cache keys -------------------*- C++ -*-===//
//
// FIPS 180-4 SHA-256, incremental. Used for the NVRTC cubin cache key and the
// integrity trailer of cache files; not for security.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_NVRTC_SHA256_H
#define DMC_CODEGEN_NVRTC_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dmcgen {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void update(const void *data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Appends the 8-byte length of `s`, then `s`: fields stay unambiguous
  /// ("ab","c" and "a","bc" hash differently).
  void updateField(std::string_view s);
  Digest finish();

  static Digest of(const void *data, size_t size);
  static std::string hex(const Digest &d);

private:
  void compress(const uint8_t block[64]);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

} // namespace dmcgen

#endif // DMC_CODEGEN_NVRTC_SHA256_H
