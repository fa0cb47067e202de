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

/// Word `word` of row `row`'s keep words with the keys it may not see
/// cleared, on a tile that needs the mask: keys below kLimit and, causal, up
/// to the row's query.
template <class Cfg>
DMC_ATTN_DEV uint32_t visibleKeepWord(uint32_t w, int row, int word, int kLimit, bool needMask) {
  if (!needMask)
    return w;
  int limit = kLimit;
  if (Cfg::kCausal && row + 1 < limit)
    limit = row + 1;
  const int n = limit - 32 * word; // keys [32 word, limit) are visible
  return w & (n <= 0 ? 0u : n >= 32 ? ~0u : (1u << n) - 1u);
}

/// Writes a fragment's keep words (rows query0 + g, + 8; words key0/32 ..
/// + NA/4: RowKeepWords, from dropoutQueryMajor or packRowKeepWords), ANDed
/// with visibility (visibleKeepWord). One lane per (row, word) stores. With
/// Stage (Cfg::kStageKeepWords) they go to the warp's staged rows `stage`
/// ([16][kBitsWords] in shared memory, flushKeepWords writes them), else
/// straight to global memory.
template <class Cfg, int NA, bool Stage = false>
DMC_ATTN_DEV void storeRowKeepWords(uint32_t *words, int b, int h, int query0, int key0,
                                    int kLimit, bool needMask, const RowKeepWords<NA> &rows,
                                    uint32_t *stage = nullptr) {
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
      const uint32_t w = visibleKeepWord<Cfg>(rows.w[hf][i], row, word, kLimit, needMask);
      if constexpr (Stage)
        stage[(g + 8 * hf) * Cfg::kBitsWords + word] = w;
      else
        head[(int64_t)row * Cfg::kBitsJ + (int64_t)word * Cfg::kBitsW] = w;
    }
}

/// Zeros a warp's staged keep rows (the words of tiles it never visits stay 0).
template <class Cfg> DMC_ATTN_DEV void clearKeepStage(uint32_t *stage) {
  for (int i = laneId(); i < 16 * Cfg::kBitsWords; i += 32)
    stage[i] = 0u;
}

/// Writes a warp's staged keep rows (rows query0 .. + 15, < Lq) to global
/// memory, consecutive lanes on consecutive words of a row: whole sectors.
/// The block has synchronized since the last storeRowKeepWords.
template <class Cfg>
DMC_ATTN_DEV void flushKeepWords(uint32_t *words, int b, int h, int query0,
                                 const uint32_t *stage) {
  uint32_t *head = words + (int64_t)b * Cfg::kBitsB + (int64_t)h * Cfg::kBitsH;
  for (int i = laneId(); i < 16 * Cfg::kBitsWords; i += 32) {
    const int row = query0 + i / Cfg::kBitsWords, word = i % Cfg::kBitsWords;
    if (row < Cfg::kLq)
      head[(int64_t)row * Cfg::kBitsJ + (int64_t)word * Cfg::kBitsW] = stage[i];
  }
}

/// Zeros words [word0, kBitsWords) of the saved rows query0 .. + 15 (< Lq):
/// the key tiles a forward warp never visits (past the last visible key).
template <class Cfg>
DMC_ATTN_DEV void zeroKeepWords(uint32_t *words, int b, int h, int query0, int word0) {
  const int n = Cfg::kBitsWords - word0;
  if (n <= 0)
    return;
  uint32_t *head = words + (int64_t)b * Cfg::kBitsB + (int64_t)h * Cfg::kBitsH;
  // Consecutive lanes on consecutive words of a row: whole sectors per row.
  for (int i = laneId(); i < 16 * n; i += 32) {
    const int row = query0 + i / n, word = word0 + i % n;
    if (row < Cfg::kLq)
      head[(int64_t)row * Cfg::kBitsJ + (int64_t)word * Cfg::kBitsW] = 0u;
  }
}

/// The lse of query rows [q0, q0 + Rows) of head (b, h) as the backward
/// kernels stage it, thread tid holding rows tid, tid + NT, ...: fetched from
/// global memory into registers a tile ahead (so the load's latency hides
/// behind a tile of work), stored to shared memory in log2 units, +inf for
/// rows >= Lq and for lse = -inf so that exp2(s - lse) is 0 there.
template <class Cfg, int Rows, int NT> struct LseRows {
  static constexpr int kPerThread = (Rows + NT - 1) / NT;
  float v[kPerThread];

  DMC_ATTN_DEV void fetch(const float *lse, int b, int h, int q0) {
    const float *head = lse + (int64_t)b * Cfg::kLseB + (int64_t)h * Cfg::kLseH;
    DMC_ATTN_UNROLL
    for (int i = 0; i < kPerThread; ++i) {
      const int r = threadIndex() + i * NT;
      v[i] = r < Rows && q0 + r < Cfg::kLq ? head[(int64_t)(q0 + r) * Cfg::kLseJ] : negInf();
    }
  }
  DMC_ATTN_DEV void store(float *lseLog2) const {
    DMC_ATTN_UNROLL
    for (int i = 0; i < kPerThread; ++i) {
      const int r = threadIndex() + i * NT;
      if (r < Rows)
        lseLog2[r] = v[i] == negInf() ? posInf() : v[i] * 1.4426950408889634f;
    }
  }
};

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_STORE_H
