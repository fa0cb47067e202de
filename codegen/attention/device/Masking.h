//===- Masking.h - Causal / key-padding masks and dropout on fragments -*- CUDA -*-===//
//
// Score fragments are 16 x 8*NA f32 accumulators of one warp (Mma.h layout:
// element e of atom a sits at row g + 8*(e/2), column 8a + 2t + e%2). Two
// orientations:
//   query-major (Forward, GradQ): rows are queries, columns keys (S = Q K^T);
//   key-major (GradKV): rows are keys, columns queries (S^T = K Q^T).
//
// Dropout follows runtime/format/device/Philox.h: the element (b, h, j, k)
// has logical index n = b*sb + h*sh + j*sj + k*sk and is kept iff
// dropoutWord(seed, id, n) >= threshold. When the four elements of every
// Philox group are four consecutive keys of one row (sk == 1 and sb, sh, sj
// multiples of 4: Cfg::kDropoutGrouped), each lane runs one Philox call per
// 4 elements and the words travel between lanes by shuffles; otherwise each
// element draws its own word.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_MASKING_H
#define DMC_ATTENTION_DEVICE_MASKING_H

#include "codegen/attention/device/Mma.h"
#include "runtime/format/device/Philox.h"

namespace dmcattn {

DMC_ATTN_DEV float negInf() { return dmrt::bitsToFloat(0xFF800000u); }
DMC_ATTN_DEV float posInf() { return dmrt::bitsToFloat(0x7F800000u); }

/// One keep bit per fragment element: bit 4a + e.
template <int NA> struct KeepBits {
  uint32_t w[(NA * 4 + 31) / 32];
  DMC_ATTN_DEV bool keep(int a, int e) const {
    return (w[(4 * a + e) >> 5] >> ((4 * a + e) & 31)) & 1u;
  }
  DMC_ATTN_DEV void clear() {
    DMC_ATTN_UNROLL
    for (int i = 0; i < (NA * 4 + 31) / 32; ++i)
      w[i] = 0;
  }
  DMC_ATTN_DEV void set(int a, int e, bool k) {
    w[(4 * a + e) >> 5] |= (k ? 1u : 0u) << ((4 * a + e) & 31);
  }
};

/// s = s * scale * log2(e), then -inf where masked. Row 0 of the fragment is
/// position `row0`, column 0 is `col0`: rows are queries and columns keys
/// (query-major: Forward, GradQ) or, with KeyMajor, the other way round
/// (GradKV). Keys >= kLimit (Lk or lens[b]) and, when causal, keys > query
/// are masked.
template <class Cfg, bool KeyMajor, int NA>
DMC_ATTN_DEV void scaleMask(float (&s)[NA][4], int row0, int col0, int kLimit, bool needMask) {
  const int g = laneId() >> 2, t = laneId() & 3;
  DMC_ATTN_UNROLL
  for (int a = 0; a < NA; ++a)
    DMC_ATTN_UNROLL
    for (int e = 0; e < 4; ++e) {
      float x = s[a][e] * Cfg::kScaleLog2;
      if (needMask) {
        const int row = row0 + g + 8 * (e >> 1), col = col0 + 8 * a + 2 * t + (e & 1);
        const int key = KeyMajor ? row : col, query = KeyMajor ? col : row;
        if (key >= kLimit || (Cfg::kCausal && key > query))
          x = negInf();
      }
      s[a][e] = x;
    }
}

/// dmrt::dropoutWords (Philox4x32-10 on counter {group, id, "drop"}, key
/// seed), bit for bit, written with mul.wide.u32 and 32-bit words: the
/// shared version's 64-bit products compile to 64-bit arithmetic throughout.
DMC_ATTN_DEV void philoxWords(uint64_t seed, uint32_t id, uint64_t group, uint32_t (&out)[4]) {
  uint32_t c0 = (uint32_t)group, c1 = (uint32_t)(group >> 32), c2 = id, c3 = dmrt::kDropoutTag;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  DMC_ATTN_UNROLL
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += dmrt::kPhiloxW0;
      k1 += dmrt::kPhiloxW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulWide(dmrt::kPhiloxM0, c0, lo0, hi0);
    mulWide(dmrt::kPhiloxM1, c2, lo1, hi1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/// dmrt::dropoutWord: word n % 4 of group n / 4.
DMC_ATTN_DEV uint32_t dropoutWord(uint64_t seed, uint32_t id, uint64_t n) {
  uint32_t w[4];
  philoxWords(seed, id, n >> 2, w);
  const uint32_t i = (uint32_t)n & 3u;
  return i == 0 ? w[0] : i == 1 ? w[1] : i == 2 ? w[2] : w[3];
}

template <class Cfg> DMC_ATTN_DEV bool keepWord(uint32_t word) {
  return word >= Cfg::kDropThreshold;
}

/// Keep bits of a query-major fragment: row 0 is query `query0`, column 0 key
/// `key0` (a multiple of 4), of head (b, h).
template <class Cfg, int NA>
DMC_ATTN_DEV void dropoutQueryMajor(KeepBits<NA> &bits, uint64_t seed, int b, int h, int query0,
                                    int key0) {
  const int g = laneId() >> 2, t = laneId() & 3;
  const int64_t head = (int64_t)b * Cfg::kDropB + (int64_t)h * Cfg::kDropH;
  const int64_t rowG = head + (int64_t)(query0 + g) * Cfg::kDropJ;
  const int64_t rowG8 = rowG + 8 * Cfg::kDropJ;
  bits.clear();
  DMC_ATTN_UNROLL
  for (int a = 0; a < NA; ++a) {
    uint32_t word[4];
    if constexpr (Cfg::kDropoutGrouped) {
      // Lanes t and t^1 cover keys 4*(t/2) .. +3 of rows g and g+8: the even
      // lane draws row g's group, the odd one row g+8's, and each hands the
      // other the two words it needs.
      uint32_t w[4];
      const int64_t n = ((t & 1) ? rowG8 : rowG) + key0 + 8 * a + 4 * (t >> 1);
      philoxWords(seed, Cfg::kDropoutId, (uint64_t)n >> 2, w);
      const uint32_t r0 = shflXor((t & 1) ? w[0] : w[2], 1);
      const uint32_t r1 = shflXor((t & 1) ? w[1] : w[3], 1);
      word[0] = (t & 1) ? r0 : w[0];
      word[1] = (t & 1) ? r1 : w[1];
      word[2] = (t & 1) ? w[2] : r0;
      word[3] = (t & 1) ? w[3] : r1;
    } else {
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int64_t key = key0 + 8 * a + 2 * t + (e & 1);
        word[e] = dropoutWord(seed, Cfg::kDropoutId,
                              (uint64_t)((e < 2 ? rowG : rowG8) + key * Cfg::kDropK));
      }
    }
    DMC_ATTN_UNROLL
    for (int e = 0; e < 4; ++e)
      bits.set(a, e, keepWord<Cfg>(word[e]));
  }
}

/// Keep bits of a key-major fragment: row 0 is key `key0` (a multiple of 4),
/// column 0 query `query0`, of head (b, h).
template <class Cfg, int NA>
DMC_ATTN_DEV void dropoutKeyMajor(KeepBits<NA> &bits, uint64_t seed, int b, int h, int key0,
                                  int query0) {
  const int lane = laneId(), g = lane >> 2, t = lane & 3, gi = g & 3;
  const int64_t head = (int64_t)b * Cfg::kDropB + (int64_t)h * Cfg::kDropH;
  bits.clear();
  DMC_ATTN_UNROLL
  for (int a = 0; a < NA; ++a) {
    uint32_t word[4];
    const int64_t col = query0 + 8 * a + 2 * t;
    if constexpr (Cfg::kDropoutGrouped) {
      // The 4 lanes with the same t and g/4 hold keys 4*(g/4) .. +3 and
      // +8 .. +11 of columns 2t, 2t+1: 4 groups, G = column%2 + 2*(key half),
      // which is also the element index e. Lane gi draws group gi, then a
      // 4x4 transpose across those lanes (lane bits 2, 3) hands every lane
      // word gi of each group G into word[G].
      const int64_t key = key0 + (g & 4) + 8 * (gi >> 1);
      const int64_t n = head + key * Cfg::kDropK + (col + (gi & 1)) * Cfg::kDropJ;
      philoxWords(seed, Cfg::kDropoutId, (uint64_t)n >> 2, word);
      DMC_ATTN_UNROLL
      for (int bit = 0; bit < 2; ++bit) {
        const int m = 1 << bit;
        const bool hi = (gi >> bit) & 1;
        DMC_ATTN_UNROLL
        for (int w0 = 0; w0 < 4; ++w0) {
          if (w0 & m)
            continue;
          const int w1 = w0 | m;
          const uint32_t got = shflXor(hi ? word[w0] : word[w1], m << 2);
          if (hi)
            word[w0] = got;
          else
            word[w1] = got;
        }
      }
    } else {
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int64_t key = key0 + g + 8 * (e >> 1);
        word[e] = dropoutWord(seed, Cfg::kDropoutId,
                              (uint64_t)(head + key * Cfg::kDropK + (col + (e & 1)) * Cfg::kDropJ));
      }
    }
    DMC_ATTN_UNROLL
    for (int e = 0; e < 4; ++e)
      bits.set(a, e, keepWord<Cfg>(word[e]));
  }
}

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_MASKING_H
