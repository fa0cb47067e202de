//===- Store.h - Accumulator fragments to global memory; lse rows ---*- CUDA -*-===//
//
// Stores of a warp's 16 x D f32 accumulator (Mma.h C layout) as bf16/f16
// rows of a global tensor, and the lse rows the backward kernels stage in
// shared memory (in log2 units).
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
