//===- GradQ.h - Attention backward: dQ, query-block-major ----------*- CUDA -*-===//
//
// One block per (query tile of kBlockM rows, h, b); warp w owns queries
// q0 + 16w .. +15 and accumulates their dQ (16 x D, f32) over key tiles of
// kBlockN keys (K, V double-buffered through cp.async), recomputing:
//
//   S  = Q K^T;  P = 2^(S scale log2(e) - lse log2(e))    (masked -> 0)
//   dPd = dO V^T;  dP = dropout(dPd) (kept * 1/(1-p), dropped 0)
//   dS = P o (dP - Drow),  Drow[j] = dO[j,:] . o[j,:]
//   dQ += dS K;  finally dQ *= scale
//
// Drow is also written out (f32, every query of the tile, keys or none):
// grad-kv, which runs after, reads it instead of recomputing it per key block.
//
// Deterministic: every dQ element is summed by one lane in a fixed order.
// With Cfg::kKeepBits the keep bits come from the forward's saved words
// (Masking.h SavedKeepQueryMajor: a lane loads the words of its two rows,
// a key tile ahead)
// instead of Philox.
// Shared memory: Q, dO, o [kBlockM][D]; 2 stages of K, V [kBlockN][D];
// lse (log2 units) and Drow [kBlockM] f32, Drow from the o and dO tiles before
// the first key tile.
//
// With Cfg::kWgmma (sm_90a, D = 64, 4 warps: Wgmma.h) the three products are
// warpgroup MMA over the same tiles (from a 1024-byte boundary): S and dPd
// are issued together, the keep bits expand (or Philox draws) while they
// run, and the softmax of S overlaps dPd.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_GRADQ_H
#define DMC_ATTENTION_DEVICE_GRADQ_H

#include "codegen/attention/device/Forward.h"
#include "codegen/attention/device/Wgmma.h"

namespace dmcattn {

template <class Cfg>
DMC_ATTN_DEV void attentionGradQ(const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                 const uint16_t *o, const uint16_t *dO, const float *lse,
                                 const uint32_t *bits, const int32_t *lens, uint16_t *dQ,
                                 float *drow, uint64_t seed, unsigned char *smem) {
  constexpr bool Bf16 = Cfg::kBf16;
  constexpr int D = Cfg::kD, BM = Cfg::kBlockM, BN = Cfg::kBlockN, NT = 32 * Cfg::kWarps;
  static_assert(BM == 16 * Cfg::kWarps, "grad-q: each warp owns 16 queries");
  using QTile = SmemTile<BM, D>;
  using KVTile = SmemTile<BN, D>;
  constexpr int NA = BN / 8, DA = D / 8;
  constexpr bool Wg = Cfg::kWgmma;
  static_assert(!Wg || (D == 64 && BM == 64 && BN % 64 == 0),
                "wgmma grad-q: head dim 64, one warpgroup of 64 queries, key tiles of 64");

  int qTile, h, b;
  blockTile<Cfg::kCausal, true>(qTile, h, b);
  const int q0 = qTile * BM;
  const int lane = laneId(), warp = threadIndex() >> 5;
  const int g = lane >> 2;
  const int wq0 = q0 + 16 * warp;

  const uint16_t *kHead = k + (int64_t)b * Cfg::kKb + (int64_t)h * Cfg::kKh;
  const uint16_t *vHead = v + (int64_t)b * Cfg::kVb + (int64_t)h * Cfg::kVh;

  const int kLimit = keyLimit<Cfg>(lens, b);
  int kEnd = kLimit;
  if (Cfg::kCausal && q0 + BM < kEnd)
    kEnd = q0 + BM;
  const int nTiles = kEnd > 0 ? (kEnd + BN - 1) / BN : 0;

  unsigned char *tiles = Wg ? atomAligned(smem) : smem; // wgmma: from a swizzle atom
  const uint32_t qs = sharedAddress(tiles);
  const uint32_t dos = qs + QTile::kBytes, os = dos + QTile::kBytes;
  const uint32_t kvs = os + QTile::kBytes; // stage s: K at kvs + 2s*KV, V after it
  float *lseS = reinterpret_cast<float *>(tiles + 3 * QTile::kBytes + 4 * KVTile::kBytes);
  float *drowS = lseS + BM;
  LseRows<Cfg, BM, NT> lseRows;
  auto loadRows = [&](bool withQ) { // this tile's Q (for the products), dO and o
    if (withQ)
      QTile::template load<NT>(qs, q + (int64_t)b * Cfg::kQb + (int64_t)h * Cfg::kQh, Cfg::kQj,
                               q0, Cfg::kLq);
    QTile::template load<NT>(dos, dO + (int64_t)b * Cfg::kDOb + (int64_t)h * Cfg::kDOh,
                             Cfg::kDOj, q0, Cfg::kLq);
    QTile::template load<NT>(os, o + (int64_t)b * Cfg::kOb + (int64_t)h * Cfg::kOh, Cfg::kOj,
                             q0, Cfg::kLq);
  };
  // Drow = o . dO of the tile's queries from the tiles in shared memory,
  // written out for grad-kv (after a barrier that published o and dO).
  auto rowDotOut = [&] {
    QTile::template rowDot<NT, Bf16>(drowS, tiles + 2 * QTile::kBytes, tiles + QTile::kBytes);
    syncThreads(); // Drow visible
    if (const int r = threadIndex(); r < BM && q0 + r < Cfg::kLq)
      drow[(int64_t)b * Cfg::kDrowB + (int64_t)h * Cfg::kDrowH +
           (int64_t)(q0 + r) * Cfg::kDrowJ] = drowS[r];
  };
  if (nTiles > 0) {
    loadRows(true);
    KVTile::template load<NT>(kvs, kHead, Cfg::kKk, 0, Cfg::kLk);
    KVTile::template load<NT>(kvs + KVTile::kBytes, vHead, Cfg::kVk, 0, Cfg::kLk);
    cpAsyncCommit();
    lseRows.fetch(lse, b, h, q0);
  }

  float dq[DA][4];
  DMC_ATTN_UNROLL
  for (int a = 0; a < DA; ++a)
    dq[a][0] = dq[a][1] = dq[a][2] = dq[a][3] = 0.f;
  float lseRow[2] = {0.f, 0.f}, drowRow[2] = {0.f, 0.f};

  // Saved keep bits: the words of key tile kt + 1 load during tile kt.
  SavedKeepQueryMajor<Cfg, NA> keepNext;
  if constexpr (Cfg::kKeepBits)
    if (nTiles > 0)
      keepNext.load(bits, b, h, wq0, 0);

  for (int kt = 0; kt < nTiles; ++kt) {
    const SavedKeepQueryMajor<Cfg, NA> keepNow = keepNext;
    if constexpr (Cfg::kKeepBits)
      if (kt + 1 < nTiles)
        keepNext.load(bits, b, h, wq0, (kt + 1) * BN);
    cpAsyncWait<0>();
    if constexpr (Wg)
      fenceProxyAsync(); // the landed tiles, visible to wgmma's reads
    syncThreads(); // tile kt (and Q, dO, o) visible; tile kt-1's stage free
    if (kt == 0) {
      lseRows.store(lseS);
      rowDotOut(); // Drow, and a barrier: it and the lse visible
      lseRow[0] = lseS[16 * warp + g];
      lseRow[1] = lseS[16 * warp + g + 8];
      drowRow[0] = drowS[16 * warp + g];
      drowRow[1] = drowS[16 * warp + g + 8];
    }
    if (kt + 1 < nTiles) {
      const uint32_t next = kvs + ((kt + 1) & 1) * 2 * KVTile::kBytes;
      KVTile::template load<NT>(next, kHead, Cfg::kKk, (kt + 1) * BN, Cfg::kLk);
      KVTile::template load<NT>(next + KVTile::kBytes, vHead, Cfg::kVk, (kt + 1) * BN,
                                Cfg::kLk);
      cpAsyncCommit();
    }
    const int k0 = kt * BN;
    if (!Wg && Cfg::kCausal && k0 > wq0 + 15)
      continue; // (wgmma: collective; no warp of 16 queries precedes a tile of BN >= 64)
    const uint32_t ks = kvs + (kt & 1) * 2 * KVTile::kBytes;
    const uint32_t vs = ks + KVTile::kBytes;

    float s[NA][4], dp[NA][4];
    DMC_ATTN_UNROLL
    for (int a = 0; a < NA; ++a)
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        s[a][e] = dp[a][e] = 0.f;
    if constexpr (Wg) { // S, then dPd, in flight during the mask's integer work
      wgmmaRowsRows<Bf16, NA>(s, qs, ks);
      wgmmaCommit();
      wgmmaRowsRows<Bf16, NA>(dp, dos, vs);
      wgmmaCommit();
    }
    KeepBits<NA> keep;
    if constexpr (Cfg::kKeepBits)
      keepNow.expand(keep, k0);
    if constexpr (Wg) {
      if constexpr (!Cfg::kKeepBits && Cfg::kDropout)
        dropoutQueryMajor<Cfg>(keep, seed, b, h, wq0, k0);
      wgmmaWait<1>(); // S landed; dPd may still run
      pinAccumulators(s);
    } else {
      mmaRowsRows<Bf16, NA, D / 16, QTile, KVTile>(s, qs, 16 * warp, ks, 0);
    }
    const bool needMask = k0 + BN > kLimit || (Cfg::kCausal && k0 + BN - 1 > wq0);
    maskScores<Cfg, false>(s, wq0, k0, kLimit, needMask);
    DMC_ATTN_UNROLL
    for (int a = 0; a < NA; ++a)
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        s[a][e] = scaledExp2<Cfg>(s[a][e], lseRow[e >> 1]); // P
    if constexpr (Wg) {
      wgmmaWait<0>();
      pinAccumulators(dp);
    } else {
      mmaRowsRows<Bf16, NA, D / 16, QTile, KVTile>(dp, dos, 16 * warp, vs, 0);
      if constexpr (!Cfg::kKeepBits && Cfg::kDropout)
        dropoutQueryMajor<Cfg>(keep, seed, b, h, wq0, k0);
    }
    DMC_ATTN_UNROLL
    for (int a = 0; a < NA; ++a)
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e) {
        // dS = P (dropout(dPd) - Drow), the dropout's 1/(1-p) in one fma.
        float d = dp[a][e];
        if constexpr (Cfg::kDropout)
          d = fmaf(keep.keep(a, e) ? d : 0.f, Cfg::kKeepScale, -drowRow[e >> 1]);
        else
          d -= drowRow[e >> 1];
        s[a][e] = s[a][e] * d;
      }
    if constexpr (Wg) {
      uint32_t ds[NA / 2][4];
      packOperands<Bf16>(ds, s);
      wgmmaRegsCols<Bf16>(dq, ds, ks);
      wgmmaCommit();
      wgmmaWait<0>(); // before the next tile's copies overwrite this stage's K
      pinAccumulators(dq);
    } else {
      mmaRegsCols<Bf16, DA, BN / 16, KVTile>(dq, s, ks, 0);
    }
  }
  if (nTiles > 0) {
    cpAsyncWait<0>();
  } else { // no key visible: dQ is 0, Drow all the same
    loadRows(false);
    cpAsyncCommit();
    cpAsyncWait<0>();
    syncThreads();
    rowDotOut();
  }

  storeRows<Bf16>(dQ + (int64_t)b * Cfg::kDQb + (int64_t)h * Cfg::kDQh, Cfg::kDQj, wq0,
                  Cfg::kLq, dq, Cfg::kScale);
}

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_GRADQ_H
