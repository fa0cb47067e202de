//===- Forward.h - Fused attention forward (online softmax) ---------*- CUDA -*-===//
//
// One block per (query tile of kBlockM rows, h, b); warp w owns queries
// q0 + 16w .. +15. The block walks key tiles of kBlockN keys, K and V
// double-buffered through cp.async, and per warp keeps the running row max
// m, row sum l (f32) and the output accumulator O (16 x D, f32):
//
//   S = Q K^T                                  (mma, f32)
//   s = S * scale * log2(e), masked -> -inf    (folded into the exponent below)
//   m' = max(m, rowmax s); O *= 2^(m - m'); l = l 2^(m - m') + rowsum 2^(s - m')
//   O += dropout(2^(s - m')) V                 (kept P, the 1/(1-p) at the end)
//
// and finally o = O * keep / l, lse = (m + log2 l) ln 2. A row with every key
// masked (l = 0) gets o = 0 and lse = -inf. Key tiles past the last
// unmasked key (causal: past the tile's last query; padding: past lens[b])
// are not visited.
//
// With Cfg::kKeepBits the forward also writes the dropout mask AND the
// visibility of every element as int32 words (Masking.h): each visited key
// tile stores its kBlockN / 32 words of the warp's rows, read off the Philox
// row masks (key runs) or packed from the fragment's keep bits (Store.h
// storeRowKeepWords), and after the loop the warp zeros the
// words of the tiles it skipped, so every word of every row < Lq is written.
//
// Shared memory: Q [kBlockM][D], then 2 stages of K [kBlockN][D], V [kBlockN][D].
//
// With Cfg::kWgmma (sm_90a, D = 64, 4 warps: Wgmma.h) the block's warps are one
// warpgroup and both products are wgmma from the same tiles, placed at a
// 1024-byte boundary; the dropout draw runs while S = Q K^T is in flight.
// The warpgroup visits every key tile up to the block's last query together
// (wgmma is collective); with blockN >= blockM = 64 no warp's queries all
// precede a tile it visits, so none would skip one anyway.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_FORWARD_H
#define DMC_ATTENTION_DEVICE_FORWARD_H

#include "codegen/attention/device/Store.h"
#include "codegen/attention/device/Tile.h"
#include "codegen/attention/device/Wgmma.h"

namespace dmcattn {

/// Keys [0, kLimit) are visible to head batch b: min(Lk, lens[b]) with key padding.
template <class Cfg> DMC_ATTN_DEV int keyLimit(const int32_t *lens, int b) {
  int limit = Cfg::kLk;
  if constexpr (Cfg::kKeyPadding) {
    const int len = lens[b];
    limit = len < 0 ? 0 : (len < limit ? len : limit);
  }
  return limit;
}

template <class Cfg>
DMC_ATTN_DEV void attentionForward(const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                   const int32_t *lens, uint16_t *o, float *lse, uint32_t *bits,
                                   uint64_t seed, unsigned char *smem) {
  constexpr bool Bf16 = Cfg::kBf16;
  constexpr int D = Cfg::kD, BM = Cfg::kBlockM, BN = Cfg::kBlockN, NT = 32 * Cfg::kWarps;
  static_assert(BM == 16 * Cfg::kWarps, "forward: each warp owns 16 queries");
  using QTile = SmemTile<BM, D>;
  using KVTile = SmemTile<BN, D>;
  constexpr int NA = BN / 8, DA = D / 8;
  constexpr bool Wg = Cfg::kWgmma;
  static_assert(!Wg || (D == 64 && BM == 64 && BN % 64 == 0),
                "wgmma forward: head dim 64, one warpgroup of 64 queries, key tiles of 64");

  // Heavy (late, under a causal mask) query tiles start first.
  int qTile, h, b;
  blockTile<Cfg::kCausal, true>(qTile, h, b);
  const int q0 = qTile * BM;
  const int lane = laneId(), warp = threadIndex() >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wq0 = q0 + 16 * warp; // this warp's first query

  const uint16_t *qHead = q + (int64_t)b * Cfg::kQb + (int64_t)h * Cfg::kQh;
  const uint16_t *kHead = k + (int64_t)b * Cfg::kKb + (int64_t)h * Cfg::kKh;
  const uint16_t *vHead = v + (int64_t)b * Cfg::kVb + (int64_t)h * Cfg::kVh;

  const int kLimit = keyLimit<Cfg>(lens, b);
  int kEnd = kLimit;
  if (Cfg::kCausal && q0 + BM < kEnd)
    kEnd = q0 + BM; // keys > the tile's last query are masked for every row
  const int nTiles = kEnd > 0 ? (kEnd + BN - 1) / BN : 0;

  // wgmma: the tiles start at a swizzle atom (sharedBytes adds the slack).
  const uint32_t qs = sharedAddress(Wg ? atomAligned(smem) : smem);
  const uint32_t kvs = qs + QTile::kBytes; // stage s: K at kvs + 2s*KV, V after it
  if (nTiles > 0) {
    QTile::template load<NT>(qs, qHead, Cfg::kQj, q0, Cfg::kLq);
    KVTile::template load<NT>(kvs, kHead, Cfg::kKk, 0, Cfg::kLk);
    KVTile::template load<NT>(kvs + KVTile::kBytes, vHead, Cfg::kVk, 0, Cfg::kLk);
    cpAsyncCommit();
  }

  float acc[DA][4];
  DMC_ATTN_UNROLL
  for (int a = 0; a < DA; ++a)
    acc[a][0] = acc[a][1] = acc[a][2] = acc[a][3] = 0.f;
  float mRow[2] = {negInf(), negInf()}, lRow[2] = {0.f, 0.f};

  for (int kt = 0; kt < nTiles; ++kt) {
    cpAsyncWait<0>();
    if constexpr (Wg)
      fenceProxyAsync(); // the landed tiles, visible to wgmma's reads
    syncThreads(); // tile kt landed; every warp is done with tile kt-1's stage
    if (kt + 1 < nTiles) {
      const uint32_t next = kvs + ((kt + 1) & 1) * 2 * KVTile::kBytes;
      KVTile::template load<NT>(next, kHead, Cfg::kKk, (kt + 1) * BN, Cfg::kLk);
      KVTile::template load<NT>(next + KVTile::kBytes, vHead, Cfg::kVk, (kt + 1) * BN,
                                Cfg::kLk);
      cpAsyncCommit();
    }
    const int k0 = kt * BN;
    if (!Wg && Cfg::kCausal && k0 > wq0 + 15)
      continue; // every key of this tile is after every query of this warp
    const uint32_t ks = kvs + (kt & 1) * 2 * KVTile::kBytes;
    const uint32_t vs = ks + KVTile::kBytes;

    const bool needMask = k0 + BN > kLimit || (Cfg::kCausal && k0 + BN - 1 > wq0);
    // Saving keep bits, the mask comes first: Philox is integer work
    // independent of the mma chain below, which the scheduler interleaves
    // with it (H200, B8 H16 D64 bf16: L512 0.0704 -> 0.0681 ms, L1024 causal
    // 0.1867 -> 0.1772). Drawing without saving, the mask stays after the
    // softmax: drawn first it made L1024 causal 0.154 -> 0.202 ms.
    float s[NA][4];
    DMC_ATTN_UNROLL
    for (int a = 0; a < NA; ++a)
      s[a][0] = s[a][1] = s[a][2] = s[a][3] = 0.f;
    if constexpr (Wg) { // in flight during the draw below
      wgmmaRowsRows<Bf16, NA>(s, qs, ks);
      wgmmaCommit();
    }
    KeepBits<NA> keep;
    if constexpr (Cfg::kDropout && Cfg::kKeepBits) {
      // With key runs the words come straight from the quad's row masks.
      RowKeepWords<NA> rows;
      dropoutQueryMajor<Cfg, NA, Cfg::kDropoutKeyRuns>(keep, seed, b, h, wq0, k0, &rows);
      if constexpr (!Cfg::kDropoutKeyRuns)
        packRowKeepWords(keep, rows);
      storeRowKeepWords<Cfg>(bits, b, h, wq0, k0, kLimit, needMask, rows);
    }

    if constexpr (Wg) {
      wgmmaWait<0>();
      pinAccumulators(s);
    } else {
      mmaRowsRows<Bf16, NA, D / 16, QTile, KVTile>(s, qs, 16 * warp, ks, 0);
    }
    // The test here as well as inside: the branch around the whole mask is
    // what ptxas schedules best for the forward (H200, B8 H16 L1024 D64
    // causal: 0.1222 -> 0.1090 ms), the test inside what keeps grad-kv's
    // registers down (maskScores).
    if (needMask)
      maskScores<Cfg, false>(s, wq0, k0, kLimit, needMask);

    // Online softmax: rows g (elements 0, 1) and g + 8 (elements 2, 3). The
    // max of the scaled scores from the raw ones: their max times a positive
    // scale, else the max of their negations times -scale (a constant: the
    // compiler keeps one branch).
    const float kSign = Cfg::kScaleLog2 > 0.f ? 1.f : -1.f;
    DMC_ATTN_UNROLL
    for (int half = 0; half < 2; ++half) {
      float mx = negInf();
      DMC_ATTN_UNROLL
      for (int a = 0; a < NA; ++a) {
        const float x0 = s[a][2 * half], x1 = s[a][2 * half + 1];
        mx = Cfg::kScaleLog2 > 0.f ? fmaxf(mx, fmaxf(x0, x1)) : fmaxf(mx, fmaxf(-x0, -x1));
      }
      const float mNew = fmaxf(mRow[half], quadMax(mx) * (kSign * Cfg::kScaleLog2));
      const float mUse = mNew == negInf() ? 0.f : mNew; // no (-inf) - (-inf)
      const float alpha = fastExp2(mRow[half] - mUse);
      mRow[half] = mNew;
      float sum = 0.f;
      DMC_ATTN_UNROLL
      for (int a = 0; a < NA; ++a) {
        s[a][2 * half] = scaledExp2<Cfg>(s[a][2 * half], mUse);
        s[a][2 * half + 1] = scaledExp2<Cfg>(s[a][2 * half + 1], mUse);
        sum += s[a][2 * half] + s[a][2 * half + 1];
      }
      lRow[half] = lRow[half] * alpha + sum; // this lane's columns only
      DMC_ATTN_UNROLL
      for (int a = 0; a < DA; ++a) {
        acc[a][2 * half] *= alpha;
        acc[a][2 * half + 1] *= alpha;
      }
    }

    if constexpr (Cfg::kDropout) {
      if constexpr (!Cfg::kKeepBits)
        dropoutQueryMajor<Cfg>(keep, seed, b, h, wq0, k0);
      DMC_ATTN_UNROLL
      for (int a = 0; a < NA; ++a)
        DMC_ATTN_UNROLL
        for (int e = 0; e < 4; ++e)
          s[a][e] = keep.keep(a, e) ? s[a][e] : 0.f;
    }
    if constexpr (Wg) {
      // Waited for here: the next tile's copies overwrite this stage's V.
      uint32_t p[NA / 2][4];
      packOperands<Bf16>(p, s);
      wgmmaRegsCols<Bf16>(acc, p, vs);
      wgmmaCommit();
      wgmmaWait<0>();
      pinAccumulators(acc);
    } else {
      mmaRegsCols<Bf16, DA, BN / 16, KVTile>(acc, s, vs, 0);
    }
  }
  if (nTiles > 0)
    cpAsyncWait<0>();
  if constexpr (Cfg::kKeepBits) {
    // The tiles visited above wrote words [0, visited * BN / 32) of this
    // warp's rows (causal: tiles with k0 <= wq0 + 15); zero the rest.
    int visited = nTiles;
    if (!Wg && Cfg::kCausal && (wq0 + 15) / BN + 1 < visited)
      visited = (wq0 + 15) / BN + 1;
    zeroKeepWords<Cfg>(bits, b, h, wq0, visited * (BN / 32));
  }

  uint16_t *oHead = o + (int64_t)b * Cfg::kOb + (int64_t)h * Cfg::kOh;
  float *lseHead = lse + (int64_t)b * Cfg::kLseB + (int64_t)h * Cfg::kLseH;
  float factor[2];
  DMC_ATTN_UNROLL
  for (int half = 0; half < 2; ++half) {
    const float l = quadSum(lRow[half]);
    factor[half] = l > 0.f ? Cfg::kKeepScale / l : 0.f;
    const int row = wq0 + g + 8 * half;
    if (t == 0 && row < Cfg::kLq)
      lseHead[(int64_t)row * Cfg::kLseJ] =
          l > 0.f ? (mRow[half] + log2f(l)) * 0.6931471805599453f : negInf();
  }
  DMC_ATTN_UNROLL
  for (int a = 0; a < DA; ++a) {
    acc[a][0] *= factor[0];
    acc[a][1] *= factor[0];
    acc[a][2] *= factor[1];
    acc[a][3] *= factor[1];
  }
  storeRows<Bf16>(oHead, Cfg::kOj, wq0, Cfg::kLq, acc, 1.f);
}

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_FORWARD_H
