//===- Store.h - Accumulator fragments to global memory; lse rows ---*- CUDA -*-===//
//
// Stores of a warp's 16 x D f32 accumulator (Mma.h C layout) as bf16/f16
// rows of a global tensor, the forward's saved keep-bit words, and the lse
// rows the backward kernels stage in shared memory (in log2 units).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_STORE_H
#define DMC_ATTENTION_DEVICE_STORE_H

#include "codegen/attention/device/Masking.h"

namespace dmcattn {

/// Writes acc * factor (16 rows x 8*NA columns) to rows row0.. of `base`
/// (row stride `rowStride` elements); rows >= rowLimit are skipped.
template <bool Bf16, int NA>
DMC_ATTN_DEV void storeRows(uint16_t *base, int64_t rowStride, int row0, int rowLimit,
                            const float (&acc)[NA][4], float factor) {
  const int g = laneId() >> 2, t = laneId() & 3;
  DMC_ATTN_UNROLL
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + g + 8 * half;
    if (row >= rowLimit)
      continue;
    uint16_t *dst = base + (int64_t)row * rowStride + 2 * t;
    DMC_ATTN_UNROLL
    for (int a = 0; a < NA; ++a)
      *reinterpret_cast<uint32_t *>(dst + 8 * a) =
          pack2<Bf16>(acc[a][2 * half] * factor, acc[a][2 * half + 1] * factor);
  }
}

/// Writes a fragment's keep words (rows query0 + g, + 8; words key0/32 ..
/// + NA/4: RowKeepWords, from dropoutQueryMajor or packRowKeepWords), ANDed
/// with visibility on a tile that needs the mask: keys below kLimit and,
/// causal, up to the row's query. One lane per (row, word) stores.
template <class Cfg, int NA>
DMC_ATTN_DEV void storeRowKeepWords(uint32_t *words, int b, int h, int query0, int key0,
                                    int kLimit, bool needMask, const RowKeepWords<NA> &rows) {
  constexpr int NW = NA / 4;
  const int g = laneId() >> 2, t = laneId() & 3;
  uint32_t *head = words + (int64_t)b * Cfg::kBitsB + (int64_t)h * Cfg::kBitsH;
  DMC_ATTN_UNROLL
  for (int hf = 0; hf < 2; ++hf)
    DMC_ATTN_UNROLL
    for (int i = 0; i < NW; ++i) {
      const int row = query0 + g + 8 * hf, word = (key0 >> 5) + i;
      if (t != (hf * NW + i) % 4 || row >= Cfg::kLq || word >= Cfg::kBitsWords)
        continue;
      uint32_t w = rows.w[hf][i];
      if (needMask) { // keys [32 word, limit) are visible
        int limit = kLimit;
        if (Cfg::kCausal && row + 1 < limit)
          limit = row + 1;
        const int n = limit - 32 * word;
        w &= n <= 0 ? 0u : n >= 32 ? ~0u : (1u << n) - 1u;
      }
      head[(int64_t)row * Cfg::kBitsJ + (int64_t)word * Cfg::kBitsW] = w;
    }
}

/// Zeros words [word0, kBitsWords) of the saved rows query0 .. + 15 (< Lq):
/// the key tiles a forward warp never visits (past the last visible key).
/// Lane l takes words word0 + l, + 32, ... of all 16 rows: consecutive lanes
/// store consecutive words of a row (whole sectors), with no division by the
/// run-time word count (the form that divided per element took a division
/// and a remainder for every word: part of why gpt2-medium's causal forward
/// saving its keep bits executed 13% more instructions than drawing).
///
/// Words where queries are closer than words ((b, h, w, j): kBitsJ < kBitsW)
/// go the other way round: lane l takes row l % 16 of words word0 + l / 16,
/// + 2, ..., so that each store covers 16 queries' words of two columns.
template <class Cfg>
DMC_ATTN_DEV void zeroKeepWords(uint32_t *words, int b, int h, int query0, int word0) {
  uint32_t *head = words + (int64_t)b * Cfg::kBitsB + (int64_t)h * Cfg::kBitsH;
  const int rows = Cfg::kLq - query0 < 16 ? Cfg::kLq - query0 : 16;
  if (Cfg::kBitsJ < Cfg::kBitsW) { // constants on the device (variables in the emulator)
    const int r = laneId() & 15;
    uint32_t *row = head + (int64_t)(query0 + r);
    for (int word = word0 + (laneId() >> 4); r < rows && word < Cfg::kBitsWords; word += 2)
      row[(int64_t)word * Cfg::kBitsW] = 0u;
  } else {
    for (int word = word0 + laneId(); word < Cfg::kBitsWords; word += 32) {
      uint32_t *column = head + (int64_t)word * Cfg::kBitsW + (int64_t)query0 * Cfg::kBitsJ;
      for (int r = 0; r < rows; ++r)
        column[(int64_t)r * Cfg::kBitsJ] = 0u;
    }
  }
}

/// A per-query f32 statistic of rows [q0, q0 + Rows) of head (b, h) as the
/// backward kernels stage it, thread tid holding rows tid, tid + NT, ...:
/// fetched from global memory into registers a tile ahead (so the load's
/// latency hides behind a tile of work), then stored to shared memory.
/// Lse (the forward's log-sum-exp): stored in log2 units, +inf for rows >= Lq
/// and for lse = -inf so that exp2(s - lse) is 0 there. Otherwise Drow
/// (grad-q's dO . o, for grad-kv): stored as it is, 0 for rows >= Lq.
template <class Cfg, int Rows, int NT, bool Lse> struct QueryRows {
  static constexpr int kPerThread = (Rows + NT - 1) / NT;
  float v[kPerThread];

  DMC_ATTN_DEV void fetch(const float *rows, int b, int h, int q0) {
    const int64_t sb = Lse ? Cfg::kLseB : Cfg::kDrowB, sh = Lse ? Cfg::kLseH : Cfg::kDrowH,
                  sj = Lse ? Cfg::kLseJ : Cfg::kDrowJ;
    const float *head = rows + (int64_t)b * sb + (int64_t)h * sh;
    DMC_ATTN_UNROLL
    for (int i = 0; i < kPerThread; ++i) {
      const int r = threadIndex() + i * NT;
      v[i] = r < Rows && q0 + r < Cfg::kLq ? head[(int64_t)(q0 + r) * sj]
                                           : (Lse ? negInf() : 0.f);
    }
  }
  DMC_ATTN_DEV void store(float *out) const {
    DMC_ATTN_UNROLL
    for (int i = 0; i < kPerThread; ++i) {
      const int r = threadIndex() + i * NT;
      if (r < Rows)
        out[r] = !Lse ? v[i] : v[i] == negInf() ? posInf() : v[i] * 1.4426950408889634f;
    }
  }
};
template <class Cfg, int Rows, int NT> using LseRows = QueryRows<Cfg, Rows, NT, true>;
template <class Cfg, int Rows, int NT> using DrowRows = QueryRows<Cfg, Rows, NT, false>;

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_STORE_H
