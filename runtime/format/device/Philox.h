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
#ifdef __CUDA_ARCH__
  // On the GPU each product's two halves as two 32-bit multiplies (high and
  // low): the same words, and a dropout kernel about 10% faster on an H200
  // than with one 64-bit product (gelu + dropout over 16.8M bf16: 27.0 -> 24.0
  // us, 2026-11-26).
  uint32_t hi0 = __umulhi(kPhiloxM0, c[0]), lo0 = kPhiloxM0 * c[0];
  uint32_t hi1 = __umulhi(kPhiloxM1, c[2]), lo1 = kPhiloxM1 * c[2];
#else
  uint64_t p0 = (uint64_t)kPhiloxM0 * (uint64_t)c[0];
  uint64_t p1 = (uint64_t)kPhiloxM1 * (uint64_t)c[2];
  uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
  uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
#endif
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
 *     counter = {lo32(n >> 3), hi32(n >> 3), opId, 0x64726f70 }   // "drop"
 *     key     = {lo32(seed),   hi32(seed)}
 *     word    = philox4x32_10(counter, key)[(n & 7) >> 1]
 *     draw    = (word >> (16 * (n & 1))) & 0xFFFF     // low half: even n
 *
 *   The element is kept iff draw >= threshold, where
 *     threshold = dropoutThreshold(p)
 *               = 0                              if p <= 0
 *               = (uint32_t)floor(p * 65536)     otherwise (at most 65535),
 *   computed in double. A kept element is scaled by 1 / (1 - p); a dropped
 *   element is 0. p must be in [0, 1). The keep probability is
 *   1 - threshold / 65536, within 2^-16 of 1 - p.
 *
 *   Eight consecutive logical elements share one Philox call (16 random bits
 *   each), so a kernel that walks elements in logical order draws once per
 *   eight elements.
 */

/// The fourth counter word of every dropout draw: ASCII "drop".
constexpr uint32_t kDropoutTag = 0x64726f70u;
/// Logical elements one Philox call decides.
constexpr unsigned kDropoutGroup = 8;

/// Keep threshold for drop probability `p` (see the layout comment above).
DMRT_HD inline uint32_t dropoutThreshold(double p) {
  if (!(p > 0.0)) // also maps NaN to "keep everything"
    return 0u;
  double t = p * 65536.0;
  if (t >= 65535.0)
    return 0xFFFFu;
  return (uint32_t)t; // truncation == floor for t >= 0
}

/// The four words of Philox group `group` (logical elements 8*group .. +7)
/// of dropout op `opId`: one call serves eight consecutive elements.
DMRT_HD inline void dropoutWords(uint64_t seed, uint32_t opId, uint64_t group,
                                 uint32_t out[4]) {
  uint32_t ctr[4] = {(uint32_t)group, (uint32_t)(group >> 32), opId, kDropoutTag};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  philox4x32_10(ctr, key, out);
}

/// The 16-bit draw of element `i` (0..7) of a group's words.
DMRT_HD inline uint32_t dropoutHalf(const uint32_t words[4], unsigned i) {
  return (words[(i & 7u) >> 1] >> (16u * (i & 1u))) & 0xFFFFu;
}

/// The 16-bit draw that decides logical element `n` of dropout op `opId`.
DMRT_HD inline uint32_t dropoutWord(uint64_t seed, uint32_t opId, uint64_t n) {
  uint32_t out[4];
  dropoutWords(seed, opId, n >> 3, out);
  return dropoutHalf(out, (unsigned)(n & 7u));
}

/// The keep decisions of a group's eight elements as one byte, element i in
/// bit i (saved keep bits: element 8 g + i of the dropout's order is bit
/// 8 g + i of the little-endian bit stream).
DMRT_HD inline uint32_t dropoutKeepByte(const uint32_t words[4], uint32_t threshold) {
  uint32_t byte = 0;
  for (unsigned i = 0; i < kDropoutGroup; ++i)
    byte |= (dropoutHalf(words, i) >= threshold ? 1u : 0u) << i;
  return byte;
}

/// True iff logical element `n` survives dropout op `opId` under `threshold`
/// (from dropoutThreshold).
DMRT_HD inline bool dropoutKeep(uint64_t seed, uint32_t opId, uint64_t n,
                                uint32_t threshold) {
  return dropoutWord(seed, opId, n) >= threshold;
}

} // namespace dmrt

#endif // DMRT_PHILOX_H
