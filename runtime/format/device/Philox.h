//===- Philox.h - Counter-based RNG and the dropout mask ---------*- C++ -*-===//
//
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy
// as 1, 2, 3", SC'11) and the dropout decision built on it. Header-only; the
// same code runs on the host (reference runtime, tests) and inside generated
// CUDA kernels (nvcc or NVRTC), so host and device draw identical masks.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_PHILOX_H
#define DMRT_PHILOX_H

#include "runtime/format/device/Types.h"

namespace dmrt {

/// Philox round multipliers and Weyl-sequence key increments.
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

/// One Philox4x32 round on `c` in place with round key (k0, k1).
DMRT_HD inline void philox4x32Round(uint32_t c[4], uint32_t k0, uint32_t k1) {
  uint64_t p0 = (uint64_t)kPhiloxM0 * (uint64_t)c[0];
  uint64_t p1 = (uint64_t)kPhiloxM1 * (uint64_t)c[2];
  uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
  uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
  uint32_t n0 = hi1 ^ c[1] ^ k0;
  uint32_t n2 = hi0 ^ c[3] ^ k1;
  c[0] = n0;
  c[1] = lo1;
  c[2] = n2;
  c[3] = lo0;
}

/// Philox4x32 with 10 rounds: maps a 128-bit counter and a 64-bit key to 128
/// random bits. Matches Random123's philox4x32_R(10, ...) bit for bit.
DMRT_HD inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
                                  uint32_t out[4]) {
  uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { // the key is bumped between rounds, not before the first
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    philox4x32Round(c, k0, k1);
  }
  out[0] = c[0];
  out[1] = c[1];
  out[2] = c[2];
  out[3] = c[3];
}

/*
 * Dropout counter layout (the contract between codegen, the runtime and the
 * reference oracle; changing it changes every mask):
 *
 *   For a dropout op with integer id `opId` (uint32), run seed `seed` (uint64),
 *   and logical element index `n` (uint64; the row-major index of the element
 *   over the dims in the op's `order` attribute, which the frontend sets to
 *   the layout it builds and every later pass keeps, so the mask does not
 *   depend on the physical layout finally chosen):
 *
 *     counter = {lo32(n >> 2), hi32(n >> 2), opId, 0x64726f70 }   // "drop"
 *     key     = {lo32(seed),   hi32(seed)}
 *     word    = philox4x32_10(counter, key)[n & 3]
 *
 *   The element is kept iff word >= threshold, where
 *     threshold = dropoutThreshold(p)
 *               = 0                                          if p <= 0
 *               = min(0xFFFFFFFF, (uint32_t)floor(p * 2^32))  otherwise,
 *   computed in double. A kept element is scaled by 1 / (1 - p); a dropped
 *   element is 0. p must be in [0, 1).
 *
 *   Four consecutive logical elements share one Philox call, so a kernel that
 *   walks elements in logical order can draw once per four elements.
 */

/// The fourth counter word of every dropout draw: ASCII "drop".
constexpr uint32_t kDropoutTag = 0x64726f70u;

/// Keep threshold for drop probability `p` (see the layout comment above).
DMRT_HD inline uint32_t dropoutThreshold(double p) {
  if (!(p > 0.0)) // also maps NaN to "keep everything"
    return 0u;
  double t = p * 4294967296.0;
  if (t >= 4294967295.0)
    return 0xFFFFFFFFu;
  return (uint32_t)t; // truncation == floor for t >= 0
}

/// The random word that decides logical element `n` of dropout op `opId`.
DMRT_HD inline uint32_t dropoutWord(uint64_t seed, uint32_t opId, uint64_t n) {
  uint64_t block = n >> 2;
  uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), opId,
                     kDropoutTag};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  uint32_t out[4];
  philox4x32_10(ctr, key, out);
  return out[n & 3];
}

/// The four words of Philox group `group` (logical elements 4*group .. +3)
/// of dropout op `opId`: one call serves four consecutive elements.
DMRT_HD inline void dropoutWords(uint64_t seed, uint32_t opId, uint64_t group,
                                 uint32_t out[4]) {
  uint32_t ctr[4] = {(uint32_t)group, (uint32_t)(group >> 32), opId, kDropoutTag};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  philox4x32_10(ctr, key, out);
}

/// True iff logical element `n` survives dropout op `opId` under `threshold`
/// (from dropoutThreshold).
DMRT_HD inline bool dropoutKeep(uint64_t seed, uint32_t opId, uint64_t n,
                                uint32_t threshold) {
  return dropoutWord(seed, opId, n) >= threshold;
}

} // namespace dmrt

#endif // DMRT_PHILOX_H
