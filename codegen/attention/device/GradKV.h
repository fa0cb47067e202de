//===- GradKV.h - Attention backward: dK and dV, key-block-major ----*- CUDA -*-===//
//
// One block per (key tile of kBlockN keys, h, b); warp w owns R = 16 or 32
// keys k0 + Rw .. + R-1 (R = kBlockN / kWarps: one or two row blocks of
// 16) and accumulates their dK and dV (R x D each, f32) over
// query tiles of kBlockM queries (Q, dO double-buffered through cp.async;
// lse and Drow per tile staged in shared memory; Drow = dO . o per query,
// which grad-q computed and wrote), recomputing transposed
// scores so that keys stay in the mma's M dimension:
//
//   S^T = K Q^T;  P^T = 2^(S^T scale log2(e) - lse log2(e))   (masked -> 0)
//   dV += dropout(P)^T dO                        (the 1/(1-p) at the end)
//   dPd^T = V dO^T;  dP^T = dropout(dPd^T)
//   dS^T = P^T o (dP^T - Drow);  dK += dS^T Q;  finally dK *= scale
//
// Deterministic, no atomics: each dK/dV element is summed by one lane in a
// fixed order. Query tiles before the first that can see these keys
// (causal) are not visited; key tiles at or past lens[b] write zeros.
// With Cfg::kKeepBits the keep bits come from the forward's saved words
// (Masking.h SavedKeepKeyMajor: one 32-bit load per lane and 8 queries)
// instead of Philox.
//
// Per query tile: wait for its Q, dO (cp.async, issued a tile ahead) and
// barrier; issue the next tile's copies and lse and Drow loads; S^T, P^T,
// dV and dPd^T; dS^T and dK.
// Shared memory: K, V [kBlockN][D]; 2 stages of Q, dO [kBlockM][D] and of
// lse (log2 units), Drow [kBlockM] f32.
//
// With Cfg::kWgmma (sm_90a, D = 64, 4 warps of 16 keys: Wgmma.h) the four
// products are warpgroup MMA over the same tiles (from a 1024-byte
// boundary), a query tile in halves of 32 queries: each half's S^T and
// dPd^T are issued together (m64n32), the keep bits are expanded while they
// run, dV's product runs during dS^T. Whole
// 64-query tiles held 64 more score accumulators a thread: 196 registers and
// 2 blocks an SM with saved keep bits (1.02-1.07x mma.sync's time), against
// 161 and 3 in halves (0.79-0.93x).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_GRADKV_H
#define DMC_ATTENTION_DEVICE_GRADKV_H

#include "codegen/attention/device/Forward.h"
#include "codegen/attention/device/Wgmma.h"

namespace dmcattn {

/// Where the wgmma grad-kv exchanges its keep bits (SavedKeepKeyMajor):
/// while each half's S^T and dPd^T run, or (causal) before the tile's
/// barrier. In the products' shadow bert-large's grad-kv took 86.1 us
/// against 89.2 (H200, 2026-11-29), but gpt2-medium's causal one needed 174
/// registers there, a block an SM fewer (209 us against 169).
template <class Cfg> constexpr bool kExchangeFirst = Cfg::kCausal;

/// One query tile of grad-kv with warpgroup MMA (Cfg::kWgmma), in halves of
/// 32 queries: each half's S^T and dPd^T are m64n32 products (16
/// accumulators each instead of 32 for the whole tile, beside dK's and dV's
/// 64). The tile's Q, dO are at qsT, dosT, its lse and Drow stages at lseS,
/// drowS; dk, dv the warp's accumulators. Starts after the barrier that
/// published the tile (and its lse and Drow); waits for its wgmma.
template <class Cfg, int NA>
DMC_ATTN_DEV void attentionGradKVWgmmaTile(float (&dk)[8][4], float (&dv)[8][4],
                                           const SavedKeepKeyMajor<Cfg, NA> &saved,
                                           uint32_t ks, uint32_t qsT, uint32_t dosT,
                                           const float *lseS, const float *drowS, int wk0,
                                           int qs0,
                                           int kLimit, int b, int h, uint64_t seed) {
  constexpr bool Bf16 = Cfg::kBf16;
  constexpr int BN = Cfg::kBlockN;
  constexpr int HA = 4;                 // atoms of 8 queries in a half
  constexpr uint32_t kHalf = 32 * 128; // a half's rows of Q or dO, bytes
  static_assert(NA % HA == 0 && SavedKeepKeyMajor<Cfg, NA>::CH == HA,
                "wgmma grad-kv: halves of 32 queries, one saved chunk each");
  using KVTile = SmemTile<BN, Cfg::kD>;
  const uint32_t vs = ks + KVTile::kBytes;
  const int t = laneId() & 3;
  DMC_ATTN_UNROLL
  for (int hf = 0; hf < NA / HA; ++hf) {
    const int q0 = qs0 + 32 * hf;
    const uint32_t qh = qsT + hf * kHalf, doh = dosT + hf * kHalf;
    float s[HA][4], dp[HA][4];
    DMC_ATTN_UNROLL
    for (int a = 0; a < HA; ++a)
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        s[a][e] = dp[a][e] = 0.f;
    wgmmaRowsRows<Bf16, HA>(s, ks, qh); // S^T = K Q^T
    wgmmaCommit();
    wgmmaRowsRows<Bf16, HA>(dp, vs, doh); // dPd^T = V dO^T
    wgmmaCommit();
    // While they run: the keep bits.
    KeepBits<HA, true> keep;
    if constexpr (Cfg::kKeepBits) {
      SavedKeepKeyMajor<Cfg, HA> part;
      part.mine[0] = saved.mine[hf];
      if constexpr (!kExchangeFirst<Cfg>)
        part.exchange(); // while S^T and dPd^T run
      part.expand(keep);
    } else if constexpr (Cfg::kDropout) {
      dropoutKeyMajor<Cfg>(keep, seed, b, h, wk0, q0);
    }
    wgmmaWait<1>(); // S^T landed (and the last half's dV, dK)
    pinAccumulators(s);
    const bool needMask = wk0 + 16 > kLimit || (Cfg::kCausal && wk0 + 15 > q0);
    maskScores<Cfg, true>(s, wk0, q0, kLimit, needMask);
    const float *lseH = lseS + 32 * hf, *drowH = drowS + 32 * hf;
    DMC_ATTN_UNROLL
    for (int a = 0; a < HA; ++a) {
      // Queries 8a + 2t and + 1: one 8-byte load of their lse (and of Drow below).
      const FloatPair l = loadPair(lseH + 8 * a + 2 * t);
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        s[a][e] = scaledExp2<Cfg>(s[a][e], e & 1 ? l.y : l.x); // P^T
    }
    uint32_t pd[HA / 2][4]; // dropout(P)^T with its 1/(1-p), rounded as dm.rounded
    if constexpr (Cfg::kDropout) {
      float kept[HA][4];
      DMC_ATTN_UNROLL
      for (int a = 0; a < HA; ++a)
        DMC_ATTN_UNROLL
        for (int e = 0; e < 4; ++e)
          kept[a][e] = keep.keep(a, e) ? s[a][e] * Cfg::kKeepScale : 0.f;
      packOperands<Bf16>(pd, kept);
    } else {
      packOperands<Bf16>(pd, s);
    }
    wgmmaRegsCols<Bf16>(dv, pd, doh); // dV += dropout(P)^T dO
    wgmmaCommit();
    wgmmaWait<1>(); // dPd^T landed; dV may still run
    pinAccumulators(dp);
    DMC_ATTN_UNROLL
    for (int a = 0; a < HA; ++a) {
      const FloatPair dr = loadPair(drowH + 8 * a + 2 * t);
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e) {
        // dS^T = P^T (dropout(dPd^T) - Drow), the 1/(1-p) in one fma.
        float d = dp[a][e];
        const float drow = e & 1 ? dr.y : dr.x;
        if constexpr (Cfg::kDropout)
          d = fmaf(keep.keep(a, e) ? d : 0.f, Cfg::kKeepScale, -drow);
        else
          d -= drow;
        s[a][e] = s[a][e] * d;
      }
    }
    uint32_t ds[HA / 2][4];
    packOperands<Bf16>(ds, s);
    wgmmaRegsCols<Bf16>(dk, ds, qh); // dK += dS^T Q
    wgmmaCommit();
  }
  wgmmaWait<0>(); // before the next tile's copies overwrite this stage
  pinAccumulators(dk);
  pinAccumulators(dv);
}

template <class Cfg>
DMC_ATTN_DEV void attentionGradKV(const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                  const uint16_t *dO, const float *lse, const float *drow,
                                  const uint32_t *bits, const int32_t *lens, uint16_t *dK,
                                  uint16_t *dV, uint64_t seed, unsigned char *smem) {
  constexpr bool Bf16 = Cfg::kBf16;
  constexpr int D = Cfg::kD, BM = Cfg::kBlockM, BN = Cfg::kBlockN, NT = 32 * Cfg::kWarps;
  // MB row blocks of 16 keys a warp: each Q / dO fragment loaded from shared
  // memory then serves MB mma instead of one.
  constexpr int MB = BN / (16 * Cfg::kWarps);
  static_assert(MB * 16 * Cfg::kWarps == BN && (MB == 1 || MB == 2),
                "grad-kv: each warp owns 16 or 32 keys");
  using QTile = SmemTile<BM, D>;
  using KVTile = SmemTile<BN, D>;
  constexpr int NA = BM / 8, DA = D / 8;
  constexpr bool Wg = Cfg::kWgmma;
  static_assert(!Wg || (D == 64 && BN == 64 && MB == 1 && BM % 64 == 0),
                "wgmma grad-kv: head dim 64, one warpgroup of 64 keys, query tiles of 64");

  int kTile, h, b;
  blockTile<Cfg::kCausal, false>(kTile, h, b);
  const int k0 = kTile * BN;
  const int warp = threadIndex() >> 5;
  const int wk0 = k0 + 16 * MB * warp; // this warp's first key

  const uint16_t *qHead = q + (int64_t)b * Cfg::kQb + (int64_t)h * Cfg::kQh;
  const uint16_t *dOHead = dO + (int64_t)b * Cfg::kDOb + (int64_t)h * Cfg::kDOh;

  const int kLimit = keyLimit<Cfg>(lens, b);
  // Causal: query j sees key k only when k <= j, so tiles before the one
  // holding query k0 contribute nothing.
  const int qBegin = Cfg::kCausal ? k0 / BM * BM : 0;
  const int nTiles = (k0 >= kLimit || qBegin >= Cfg::kLq) ? 0 : (Cfg::kLq - qBegin + BM - 1) / BM;

  unsigned char *tiles = Wg ? atomAligned(smem) : smem; // wgmma: from a swizzle atom
  const uint32_t ks = sharedAddress(tiles);
  const uint32_t vs = ks + KVTile::kBytes;
  // Stage s: Q, dO at (2s + 0, 1) tiles past the query-tile offset.
  constexpr int kQueryTiles = 2 * KVTile::kBytes;
  const uint32_t qdo = ks + kQueryTiles;
  float *stats = reinterpret_cast<float *>(tiles + kQueryTiles + 4 * QTile::kBytes); // lse, Drow
  auto loadQueryTile = [&](int stage, int qs0) {
    const uint32_t dst = qdo + stage * 2 * QTile::kBytes;
    QTile::template load<NT>(dst, qHead, Cfg::kQj, qs0, Cfg::kLq);
    QTile::template load<NT>(dst + QTile::kBytes, dOHead, Cfg::kDOj, qs0, Cfg::kLq);
    cpAsyncCommit();
  };
  LseRows<Cfg, BM, NT> lseNext;
  DrowRows<Cfg, BM, NT> drowNext;
  if (nTiles > 0) {
    KVTile::template load<NT>(ks, k + (int64_t)b * Cfg::kKb + (int64_t)h * Cfg::kKh, Cfg::kKk,
                              k0, Cfg::kLk);
    KVTile::template load<NT>(vs, v + (int64_t)b * Cfg::kVb + (int64_t)h * Cfg::kVh, Cfg::kVk,
                              k0, Cfg::kLk);
    loadQueryTile(0, qBegin);
    lseNext.fetch(lse, b, h, qBegin);
    drowNext.fetch(drow, b, h, qBegin);
  }

  float dk[MB][DA][4], dv[MB][DA][4];
  DMC_ATTN_UNROLL
  for (int m = 0; m < MB; ++m)
    DMC_ATTN_UNROLL
    for (int a = 0; a < DA; ++a)
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        dk[m][a][e] = dv[m][a][e] = 0.f;

  // Saved keep bits: the words of query tile qt + 1 load during tile qt.
  SavedKeepKeyMajor<Cfg, NA> savedNext[MB];
  if constexpr (Cfg::kKeepBits)
    if (nTiles > 0)
      DMC_ATTN_UNROLL
      for (int m = 0; m < MB; ++m)
        savedNext[m].load(bits, b, h, wk0 + 16 * m, qBegin);

  for (int qt = 0; qt < nTiles; ++qt) {
    const int stage = qt & 1;
    const int qs0 = qBegin + qt * BM;
    SavedKeepKeyMajor<Cfg, NA> saved[MB];
    DMC_ATTN_UNROLL
    for (int m = 0; m < MB; ++m) {
      saved[m] = savedNext[m];
      if constexpr (Cfg::kKeepBits && (!Wg || kExchangeFirst<Cfg>))
        saved[m].exchange(); // beside the wait for the tile below
    }
    if constexpr (Cfg::kKeepBits)
      if (qt + 1 < nTiles)
        DMC_ATTN_UNROLL
        for (int m = 0; m < MB; ++m)
          savedNext[m].load(bits, b, h, wk0 + 16 * m, qs0 + BM);
    float *lseS = stats + stage * 2 * BM, *drowS = lseS + BM;
    const uint32_t qsT = qdo + stage * 2 * QTile::kBytes;
    const uint32_t dosT = qsT + QTile::kBytes;
    lseNext.store(lseS); // stage last read two tiles ago, before the last barrier
    drowNext.store(drowS);
    cpAsyncWait<0>();
    if constexpr (Wg)
      fenceProxyAsync(); // the landed tiles, visible to wgmma's reads
    syncThreads(); // tile qt, its lse and Drow visible; every warp is done with stage qt-1
    if (qt + 1 < nTiles) {
      loadQueryTile(stage ^ 1, qs0 + BM);
      lseNext.fetch(lse, b, h, qs0 + BM);
      drowNext.fetch(drow, b, h, qs0 + BM);
    }
    if constexpr (Wg) {
      attentionGradKVWgmmaTile<Cfg, NA>(dk[0], dv[0], saved[0], ks, qsT, dosT, lseS, drowS,
                                        wk0, qs0, kLimit, b, h, seed);
    } else {
      // Straight-line for every warp: a warp whose keys are all masked for this
      // tile (past lens[b], or causally after every query) gets P = 0 from the
      // mask and adds exact zeros; no branch splits the keep bits' live range.
      const int t = laneId() & 3;
      float s[MB][NA][4], dp[MB][NA][4];
      DMC_ATTN_UNROLL
      for (int m = 0; m < MB; ++m)
        DMC_ATTN_UNROLL
        for (int a = 0; a < NA; ++a)
          DMC_ATTN_UNROLL
          for (int e = 0; e < 4; ++e)
            s[m][a][e] = dp[m][a][e] = 0.f;
      // The mask first: integer work independent of the mma chain below.
      // (Saved keep bits: loaded a tile ahead, exchanged before the barrier.)
      KeepBits<NA, true> keep[MB];
      if constexpr (!Cfg::kKeepBits && Cfg::kDropout)
        DMC_ATTN_UNROLL
        for (int m = 0; m < MB; ++m)
          dropoutKeyMajor<Cfg>(keep[m], seed, b, h, wk0 + 16 * m, qs0);
      mmaRowsRows<Bf16, MB, NA, D / 16, KVTile, QTile>(s, ks, 16 * MB * warp, qsT, 0);
      DMC_ATTN_UNROLL
      for (int m = 0; m < MB; ++m) {
        const int mk0 = wk0 + 16 * m;
        const bool needMask = mk0 + 16 > kLimit || (Cfg::kCausal && mk0 + 15 > qs0);
        maskScores<Cfg, true>(s[m], mk0, qs0, kLimit, needMask);
      }
      DMC_ATTN_UNROLL
      for (int m = 0; m < MB; ++m)
        DMC_ATTN_UNROLL
        for (int a = 0; a < NA; ++a)
          DMC_ATTN_UNROLL
          for (int e = 0; e < 4; ++e)
            s[m][a][e] = scaledExp2<Cfg>(s[m][a][e], lseS[8 * a + 2 * t + (e & 1)]); // P^T
      if constexpr (Cfg::kKeepBits)
        DMC_ATTN_UNROLL
        for (int m = 0; m < MB; ++m)
          saved[m].expand(keep[m]);
      if constexpr (Cfg::kDropout) {
        DMC_ATTN_UNROLL
        for (int m = 0; m < MB; ++m)
          DMC_ATTN_UNROLL
          for (int a = 0; a < NA; ++a)
            DMC_ATTN_UNROLL
            for (int e = 0; e < 4; ++e)
              // dropout(P)^T with its 1/(1-p): rounded to bf16/f16 for the mma
              // as the region's dropout op is (dm.rounded), so the reference
              // models this rounding exactly.
              dp[m][a][e] = keep[m].keep(a, e) ? s[m][a][e] * Cfg::kKeepScale : 0.f;
        mmaRegsCols<Bf16, MB, DA, BM / 16, QTile>(dv, dp, dosT, 0);
        DMC_ATTN_UNROLL
        for (int m = 0; m < MB; ++m)
          DMC_ATTN_UNROLL
          for (int a = 0; a < NA; ++a)
            dp[m][a][0] = dp[m][a][1] = dp[m][a][2] = dp[m][a][3] = 0.f;
      } else {
        mmaRegsCols<Bf16, MB, DA, BM / 16, QTile>(dv, s, dosT, 0);
      }
      mmaRowsRows<Bf16, MB, NA, D / 16, KVTile, QTile>(dp, vs, 16 * MB * warp, dosT, 0);
      DMC_ATTN_UNROLL
      for (int m = 0; m < MB; ++m)
        DMC_ATTN_UNROLL
        for (int a = 0; a < NA; ++a)
          DMC_ATTN_UNROLL
          for (int e = 0; e < 4; ++e) {
            float d = dp[m][a][e];
            const float drow = drowS[8 * a + 2 * t + (e & 1)];
            if constexpr (Cfg::kDropout)
              d = fmaf(keep[m].keep(a, e) ? d : 0.f, Cfg::kKeepScale, -drow);
            else
              d -= drow;
            s[m][a][e] = s[m][a][e] * d; // dS^T
          }
      mmaRegsCols<Bf16, MB, DA, BM / 16, QTile>(dk, s, qsT, 0);
    }
  }
  if (nTiles > 0)
    cpAsyncWait<0>();

  DMC_ATTN_UNROLL
  for (int m = 0; m < MB; ++m) {
    storeRows<Bf16>(dK + (int64_t)b * Cfg::kDKb + (int64_t)h * Cfg::kDKh, Cfg::kDKk,
                    wk0 + 16 * m, Cfg::kLk, dk[m], Cfg::kScale);
    storeRows<Bf16>(dV + (int64_t)b * Cfg::kDVb + (int64_t)h * Cfg::kDVh, Cfg::kDVk,
                    wk0 + 16 * m, Cfg::kLk, dv[m], 1.f);
  }
}

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_GRADKV_H
