//===- AttentionEmulationTest.cpp - The kernels' device code on the CPU ----===//
//
// Each case emits the three kernels' sources, reads their configs back
// (EmulatedConfig.h), runs the device templates in the warp emulator and
// compares every output with the double-precision reference, with the same
// tolerance as the GPU test; a planted ×1.05 in each output must fail. With
// saved keep bits the forward's bits must equal the reference's exactly,
// the backward runs from the reference bits, and a flipped bit must be
// caught in the forward's bits and in the backward's gradients.
//
//===----------------------------------------------------------------------===//

#include "WarpEmulator.h"

#include "EmulatedConfig.h"

#include "codegen/attention/AttentionProblem.h"
#include "runtime/Comparison.h"
#include "tests/gpu/AttentionReference.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

using namespace dmcgen;
using namespace dmc::attention_test;

namespace {

constexpr uint64_t kSeed = 0x5EED0123456789ull;

struct Tiles {
  AttentionTiles forward, gradKV, gradQ;
};

void registerInputs(const HostTensors &t) {
  dmcemu::clearBuffers();
  for (const auto *v : {&t.q, &t.k, &t.v, &t.o, &t.dO})
    dmcemu::registerBuffer(v->data(), v->size() * 2);
}

template <class Cfg>
void setConfig(const AttentionProblem &p, const AttentionTiles &tiles, AttentionKernelKind kind) {
  ASSERT_EQ(checkTiles(p, tiles, kind, TileLimits{kMaxSharedBytesSm90, true}), "");
  ASSERT_EQ(Cfg::set(configConstants(emitAttentionSource(p, tiles, kind, "emulated"))), "");
}

void expectMatch(const AttentionProblem &p, const char *what, const std::vector<double> &ref,
                 const std::vector<double> &got) {
  const double rtol = comparisonRtol(p, what);
  dmrt::Comparison c = dmrt::compareOutput(ref, got, rtol);
  EXPECT_TRUE(c.pass) << what << ": " << dmrt::describeComparison(c);
  std::printf("  %-4s %s\n", what, dmrt::describeComparison(c).c_str());
  std::vector<double> scaled = got;
  dmrt::plantFault(scaled, dmrt::PlantedFault::Scale);
  EXPECT_FALSE(dmrt::compareOutput(ref, scaled, rtol).pass) << what << " x1.05 not caught";
}

/// Keep-bit words start as this, so one the forward leaves unwritten fails
/// the exact compare (the reference could only hold it by a 2^-32 chance).
constexpr uint32_t kPoison = 0xA5A5A5A5u;

/// The backward kernels' outputs, in logical order.
struct Grads {
  std::vector<double> dK, dV, dQ, drow;
};

/// Runs GradQ and then GradKV (on GradQ's Drow, as the graph orders them) on
/// t (o, lse stored) and, with keep bits, `bits`.
template <class KV, class Q>
void runBackward(const AttentionProblem &p, const Tiles &tiles, const HostTensors &t,
                 const std::vector<uint32_t> &bits, Grads &out) {
  const uint32_t *b = bits.empty() ? nullptr : bits.data();
  registerInputs(t);
  setConfig<Q>(p, tiles.gradQ, AttentionKernelKind::GradQ);
  std::vector<uint16_t> dQ((size_t)spanOf(p.dQ, p.B, p.H, p.Lq, p.D), 0xFFFF);
  // NaN to start with: a query grad-q leaves unwritten fails.
  std::vector<float> drow((size_t)spanOf(p.drow, p.B, p.H, p.Lq),
                          std::numeric_limits<float>::quiet_NaN());
  AttentionLaunch l = launchGeometry(p, tiles.gradQ, AttentionKernelKind::GradQ);
  dmcemu::launch(l.grid, l.block[0], l.sharedBytes, [&](unsigned char *smem) {
    dmcattn::attentionGradQ<Q>(t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.dO.data(),
                               t.lse.data(), b, t.lens.data(), dQ.data(), drow.data(), kSeed,
                               smem);
  });
  out.dQ = gather(p, dQ, p.dQ, p.Lq);
  out.drow = gatherRows(p, drow, p.drow);

  setConfig<KV>(p, tiles.gradKV, AttentionKernelKind::GradKV);
  std::vector<uint16_t> dK((size_t)spanOf(p.dK, p.B, p.H, p.Lk, p.D), 0xFFFF);
  std::vector<uint16_t> dV((size_t)spanOf(p.dV, p.B, p.H, p.Lk, p.D), 0xFFFF);
  l = launchGeometry(p, tiles.gradKV, AttentionKernelKind::GradKV);
  dmcemu::launch(l.grid, l.block[0], l.sharedBytes, [&](unsigned char *smem) {
    dmcattn::attentionGradKV<KV>(t.q.data(), t.k.data(), t.v.data(), t.dO.data(), t.lse.data(),
                                 drow.data(), b, t.lens.data(), dK.data(), dV.data(), kSeed,
                                 smem);
  });
  out.dK = gather(p, dK, p.dK, p.Lk);
  out.dV = gather(p, dV, p.dV, p.Lk);
}

/// The forward's keep bits against the reference, exactly; a flipped bit in
/// them must fail the same compare.
void expectKeepBits(const AttentionProblem &p, const std::vector<uint32_t> &ref,
                    std::vector<uint32_t> got) {
  const std::vector<uint32_t> want = gatherKeepBits(p, ref);
  std::vector<uint32_t> have = gatherKeepBits(p, got);
  const std::string diff = compareKeepBits(p, want, have);
  EXPECT_EQ(diff, "") << "keep bits";
  std::printf("  bits %zu words %s\n", have.size(), diff.empty() ? "identical" : "DIFFER");
  have[have.size() / 2] ^= 1u << 7;
  EXPECT_NE(compareKeepBits(p, want, have), "") << "a flipped keep bit not caught";
}

/// The library's default tiles of the three kernels for `p`.
Tiles defaults(const AttentionProblem &p) {
  return {defaultTiles(p, AttentionKernelKind::Forward),
          defaultTiles(p, AttentionKernelKind::GradKV),
          defaultTiles(p, AttentionKernelKind::GradQ)};
}

template <class Fwd, class KV, class Q>
void runCase(const AttentionProblem &p, const std::vector<int32_t> &lens, const Tiles &tiles) {
  ASSERT_EQ(validate(p), "");
  const bool keep = usesKeepBits(p);
  HostTensors t;
  fillInputs(p, 0xA77E, lens, t);
  Outputs ref;
  referenceForward(p, t, kSeed, p.dropoutId, ref);
  const std::vector<uint32_t> refBits =
      keep ? referenceKeepBits(p, lens, kSeed, p.dropoutId) : std::vector<uint32_t>{};

  // Forward: every output element starts as NaN (keep bits as kPoison), so
  // one left unwritten fails.
  setConfig<Fwd>(p, tiles.forward, AttentionKernelKind::Forward);
  std::vector<uint16_t> o((size_t)spanOf(p.o, p.B, p.H, p.Lq, p.D), 0xFFFF);
  std::vector<float> lse((size_t)spanOf(p.lse, p.B, p.H, p.Lq),
                         std::numeric_limits<float>::quiet_NaN());
  std::vector<uint32_t> bits(refBits.size(), kPoison);
  registerInputs(t);
  AttentionLaunch l = launchGeometry(p, tiles.forward, AttentionKernelKind::Forward);
  dmcemu::launch(l.grid, l.block[0], l.sharedBytes, [&](unsigned char *smem) {
    dmcattn::attentionForward<Fwd>(t.q.data(), t.k.data(), t.v.data(), t.lens.data(), o.data(),
                                   lse.data(), keep ? bits.data() : nullptr, kSeed, smem);
  });
  expectMatch(p, "o", ref.o, gather(p, o, p.o, p.Lq));
  expectMatch(p, "lse", ref.lse, gatherLse(p, lse));
  if (keep)
    expectKeepBits(p, refBits, bits);

  // Backward from the reference's o, lse (and keep bits).
  storeForward(p, ref, t);
  referenceBackward(p, t, kSeed, p.dropoutId, ref);
  Grads got;
  runBackward<KV, Q>(p, tiles, t, refBits, got);
  expectMatch(p, "dK", ref.dK, got.dK);
  expectMatch(p, "dV", ref.dV, got.dV);
  expectMatch(p, "dQ", ref.dQ, got.dQ);
  expectMatch(p, "drow", ref.drow, got.drow);
  if (!keep)
    return;

  // The backward reads the bits, not Philox: with the bit of the kept,
  // visible element of the largest probability flipped it must match the
  // reference of the flipped bits and no longer the true one.
  const KeptElement e = heaviestKeptElement(p, t, refBits);
  ASSERT_GT(e.probability, 0.0);
  std::vector<uint32_t> flipped = refBits;
  flipped[e.word] ^= e.mask;
  Outputs wrong;
  referenceBackward(p, t, kSeed, p.dropoutId, wrong, &flipped);
  Grads fault;
  runBackward<KV, Q>(p, tiles, t, flipped, fault);
  std::printf("  flipped keep bit (b %lld, h %lld, j %lld, k %lld), P = %.3f:\n", (long long)e.b,
              (long long)e.h, (long long)e.j, (long long)e.k, e.probability);
  expectMatch(p, "dK", wrong.dK, fault.dK);
  expectMatch(p, "dV", wrong.dV, fault.dV);
  expectMatch(p, "dQ", wrong.dQ, fault.dQ);
  const bool caught = !dmrt::compareOutput(ref.dK, fault.dK, comparisonRtol(p, "dK")).pass ||
                      !dmrt::compareOutput(ref.dV, fault.dV, comparisonRtol(p, "dV")).pass ||
                      !dmrt::compareOutput(ref.dQ, fault.dQ, comparisonRtol(p, "dQ")).pass;
  EXPECT_TRUE(caught) << "a flipped keep bit given to the backward is not caught";
}

// Config types: <D, blockM, blockN, warps, bf16, causal, padding, dropout, key runs[,
// keep bits]>.

/// Lq != Lk, odd Lq; order bhjk with Lk = 44: Philox groups shared by lanes.
/// `scale` 0: the problem's own (1 / sqrt(D)).
void runCausalDropoutCrossAttention(double scale) {
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 37, 44, 32);
  if (scale != 0)
    p.scale = scale;
  p.causal = true;
  p.dropout = 0.15;
  p.dropoutId = 7;
  Tiles tiles{{32, 32, 2}, {32, 32, 2}, {32, 32, 2}};
  using Cfg = EmulatedConfig<32, 32, 32, 2, true, true, false, true, true>;
  runCase<Cfg, Cfg, Cfg>(p, {}, tiles);
}

TEST(AttentionEmulation, CausalDropoutCrossAttentionBf16) { runCausalDropoutCrossAttention(0); }

TEST(AttentionEmulation, NegativeScaleCausalDropout) {
  // The kernels scale inside the exponent: a negative scale turns the row max
  // of the raw scores into their min and the masked score into +inf.
  runCausalDropoutCrossAttention(-0.2);
}

TEST(AttentionEmulation, KeyPaddingUnalignedDropoutF16) {
  // Lk = 45: rows of the dropout index are not 4-aligned, so runs of keys
  // start mid-group (one fragment's query-major rows NA = 2, key-major NA = 4
  // and 2); batch 0 has no key at all (o = 0, lse = -inf).
  AttentionProblem p = contiguousProblem(dmrt::DType::F16, 2, 1, 45, 45, 64);
  p.keyPadding = true;
  p.dropout = 0.2;
  p.dropoutId = 3;
  Tiles tiles{{32, 16, 2}, {32, 32, 2}, {16, 32, 1}};
  runCase<EmulatedConfig<64, 32, 16, 2, false, false, true, true, true>,
          EmulatedConfig<64, 32, 32, 2, false, false, true, true, true>,
          EmulatedConfig<64, 16, 32, 1, false, false, true, true, true>>(p, {0, 29}, tiles);
}

TEST(AttentionEmulation, TransposedLayoutsKeyMajorDropoutOrder) {
  // q, o, dO, dQ "bjhp"; k, v, dK, dV "bkhp"; dropout order "bhkj" (sk = Lq).
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 2, 2, 24, 40, 16);
  for (AttentionStrides *s : {&p.q, &p.o, &p.dO, &p.dQ})
    ASSERT_EQ(rowMajorStrides("bjhp", 2, 2, 24, 16, *s), "");
  for (AttentionStrides *s : {&p.k, &p.v, &p.dK, &p.dV})
    ASSERT_EQ(rowMajorStrides("bkhp", 2, 2, 40, 16, *s), "");
  p.dropout = 0.1;
  p.dropoutStrides = {2 * 24 * 40, 24 * 40, 1, 24};
  Tiles tiles{{32, 32, 2}, {16, 32, 2}, {32, 16, 2}};
  runCase<EmulatedConfig<16, 32, 32, 2, true, false, false, true, false>,
          EmulatedConfig<16, 16, 32, 2, true, false, false, true, false>,
          EmulatedConfig<16, 32, 16, 2, true, false, false, true, false>>(p, {}, tiles);
}

TEST(AttentionEmulation, KeepBitsKeyMajorDropoutOrderCausal) {
  // Dropout order "bhkj" (sk = Lq): no runs of keys, so the forward packs
  // the saved words from the fragment's keep bits (and ANDs visibility on
  // the causal diagonal) instead of reading them off the row masks.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 2, 2, 24, 40, 16);
  p.causal = true;
  p.dropout = 0.1;
  p.dropoutStrides = {2 * 24 * 40, 24 * 40, 1, 24};
  p.keepBits = true;
  Tiles tiles{{32, 32, 2}, {16, 32, 2}, {32, 16, 2}};
  runCase<EmulatedConfig<16, 32, 32, 2, true, true, false, true, false, true>,
          EmulatedConfig<16, 16, 32, 2, true, true, false, true, false, true>,
          EmulatedConfig<16, 32, 16, 2, true, true, false, true, false, true>>(p, {}, tiles);
}

TEST(AttentionEmulation, HeadDim128DefaultTilesCausalPadding) {
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 2, 1, 70, 70, 128);
  p.causal = true;
  p.keyPadding = true;
  Tiles tiles = defaults(p);
  ASSERT_EQ(tiles.forward, (AttentionTiles{64, 64, 4}));
  ASSERT_EQ(tiles.gradKV, (AttentionTiles{32, 64, 4}));
  ASSERT_EQ(tiles.gradQ, (AttentionTiles{64, 64, 4}));
  runCase<EmulatedConfig<128, 64, 64, 4, true, true, true, false, false>,
          EmulatedConfig<128, 32, 64, 4, true, true, true, false, false>,
          EmulatedConfig<128, 64, 64, 4, true, true, true, false, false>>(p, {70, 37}, tiles);
}

TEST(AttentionEmulation, Length197AlignedDropoutDefaultTiles) {
  // L = 197 (several key tiles, a partial last one) with dropout rows padded
  // to 200 (sj = 200): every run of keys starts on a Philox group.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 197, 197, 64);
  p.dropout = 0.1;
  p.dropoutStrides = {2 * 197 * 200, 197 * 200, 200, 1};
  Tiles tiles = defaults(p);
  runCase<EmulatedConfig<64, 64, 64, 4, true, false, false, true, true>,
          EmulatedConfig<64, 64, 64, 4, true, false, false, true, true>,
          EmulatedConfig<64, 64, 64, 4, true, false, false, true, true>>(p, {}, tiles);
}

TEST(AttentionEmulation, Length197UnalignedDropoutVitTiles) {
  // vit-base's own dropout order, bhjk with L = 197 (sj = 197, sh = 197^2):
  // every row starts at a different offset in its Philox group; 32 x 32
  // tiles (query-major NA = 4, key-major NA = 4), two heads of two batches.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 2, 2, 197, 197, 64);
  p.dropout = 0.1;
  p.dropoutId = 11;
  Tiles tiles{{32, 32, 2}, {32, 32, 2}, {32, 32, 2}};
  runCase<EmulatedConfig<64, 32, 32, 2, true, false, false, true, true>,
          EmulatedConfig<64, 32, 32, 2, true, false, false, true, true>,
          EmulatedConfig<64, 32, 32, 2, true, false, false, true, true>>(p, {}, tiles);
}

TEST(AttentionEmulation, GradKVTwoRowBlocksKeyPaddingDropout) {
  // grad-kv warps of 32 keys (two row blocks, blockN = 32 * warps): Lk = 45
  // ends inside a warp's second block; batch 0 has no key; Philox drawn.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 2, 2, 45, 45, 32);
  p.keyPadding = true;
  p.dropout = 0.2;
  p.dropoutId = 3;
  Tiles tiles{{32, 32, 2}, {16, 64, 2}, {32, 32, 2}};
  ASSERT_EQ(rowBlocksPerWarp(tiles.gradKV, AttentionKernelKind::GradKV), 2);
  runCase<EmulatedConfig<32, 32, 32, 2, true, false, true, true, true>,
          EmulatedConfig<32, 16, 64, 2, true, false, true, true, true>,
          EmulatedConfig<32, 32, 32, 2, true, false, true, true, true>>(p, {0, 29}, tiles);
}

// Saved keep bits: the forward writes them, the backward reads them.

TEST(AttentionEmulation, KeepBitsGradKVTwoRowBlocksCausal) {
  // bert-large's candidate shape scaled down: grad-kv 32 x 128 with 4 warps
  // of 32 keys, saved keep bits, causal with Lq != Lk.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 70, 150, 64);
  p.causal = true;
  p.dropout = 0.1;
  p.dropoutId = 5;
  p.keepBits = true;
  Tiles tiles{{64, 64, 4}, {32, 128, 4}, {64, 64, 4}};
  runCase<EmulatedConfig<64, 64, 64, 4, true, true, false, true, true, true>,
          EmulatedConfig<64, 32, 128, 4, true, true, false, true, true, true>,
          EmulatedConfig<64, 64, 64, 4, true, true, false, true, true, true>>(p, {}, tiles);
}

TEST(AttentionEmulation, KeepBitsCausalDropout) {
  // Lq != Lk, odd Lq; the causal forward skips key tiles past each warp's
  // last query, whose words it must still zero. GradQ with 16-key tiles reads
  // half words.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 37, 77, 32);
  p.causal = true;
  p.dropout = 0.15;
  p.dropoutId = 7;
  p.keepBits = true;
  Tiles tiles{{32, 32, 2}, {32, 32, 2}, {32, 16, 2}};
  using Kv = EmulatedConfig<32, 32, 32, 2, true, true, false, true, true, true>;
  runCase<Kv, Kv, EmulatedConfig<32, 32, 16, 2, true, true, false, true, true, true>>(p, {},
                                                                                     tiles);
}

/// Causal with Lk = 1100: 35 words a row, and every query (< Lq <= 40) sees
/// at most its first two, so each forward warp zeros words 2 .. 34 of its
/// rows, more than a warp's lanes (zeroKeepWords' later passes over the words).
void runCausalZerosManyWords(int lq, uint32_t dropoutId, bool queryContiguous) {
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 1, lq, 1100, 32);
  p.causal = true;
  p.dropout = 0.1;
  p.dropoutId = dropoutId;
  p.keepBits = true;
  if (queryContiguous)
    p.bits = queryContiguousKeepBits(p);
  Tiles tiles{{32, 32, 2}, {32, 32, 2}, {32, 32, 2}};
  using Cfg = EmulatedConfig<32, 32, 32, 2, true, true, false, true, true, true>;
  runCase<Cfg, Cfg, Cfg>(p, {}, tiles);
}

TEST(AttentionEmulation, KeepBitsCausalZerosMoreThanAWarpOfWords) {
  // Words (b, h, j, w): lane l takes words word0 + l, + 32, ... of all rows.
  runCausalZerosManyWords(40, 5, false);
}

TEST(AttentionEmulation, KeepBitsCausalZerosWordsQueryContiguous) {
  // Words (b, h, w, j): lane l takes row l % 16 of every second word from
  // word0 + l / 16. Lq = 37: the last warp's rows past Lq stay untouched.
  runCausalZerosManyWords(37, 9, true);
}

TEST(AttentionEmulation, KeepBitsKeyPaddingUnalignedF16) {
  // Lk = 45: two words a row, the second holding 13 keys; batch 0 has no
  // key (every word 0, nothing visited); bits laid out (b, h, w, j): the word
  // stride is not 1.
  AttentionProblem p = contiguousProblem(dmrt::DType::F16, 2, 1, 45, 45, 64);
  p.keyPadding = true;
  p.dropout = 0.2;
  p.dropoutId = 3;
  p.keepBits = true;
  p.bits = queryContiguousKeepBits(p);
  Tiles tiles{{32, 64, 2}, {32, 32, 2}, {16, 32, 1}};
  runCase<EmulatedConfig<64, 32, 64, 2, false, false, true, true, true, true>,
          EmulatedConfig<64, 32, 32, 2, false, false, true, true, true, true>,
          EmulatedConfig<64, 16, 32, 1, false, false, true, true, true, true>>(p, {0, 29},
                                                                               tiles);
}

TEST(AttentionEmulation, KeepBitsLength197VitDefaultTiles) {
  // vit-base's dropout order bhjk with L = 197 (7 words a row, the last
  // holding 5 keys) and the default tiles.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 197, 197, 64);
  p.dropout = 0.1;
  p.dropoutId = 11;
  p.keepBits = true;
  Tiles tiles = defaults(p);
  runCase<EmulatedConfig<64, 64, 64, 4, true, false, false, true, true, true>,
          EmulatedConfig<64, 64, 64, 4, true, false, false, true, true, true>,
          EmulatedConfig<64, 64, 64, 4, true, false, false, true, true, true>>(p, {}, tiles);
}

// The wgmma tiles (sm_90a: one warpgroup of 64 rows, device/Wgmma.h).

TEST(AttentionEmulation, WgmmaCausalKeepBits) {
  // Lq = Lk = 150: three tiles each way, the last partial; causal with saved
  // keep bits laid out (b, h, w, j).
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 150, 150, 64);
  p.causal = true;
  p.dropout = 0.1;
  p.dropoutId = 4;
  p.keepBits = true;
  p.bits = queryContiguousKeepBits(p);
  Tiles tiles{{64, 64, 4, true}, {64, 64, 4, true}, {64, 64, 4, true}};
  using Cfg = EmulatedConfig<64, 64, 64, 4, true, true, false, true, true, true, true>;
  runCase<Cfg, Cfg, Cfg>(p, {}, tiles);
}

/// Not causal, wgmma 64x64 tiles of 4 warps for every kernel, saved keep bits:
/// grad-kv exchanges them while each half's products run (kExchangeFirst).
void runWgmmaKeepBitsNotCausal(int batch, int heads, int lq, int lk, double dropout,
                               uint32_t dropoutId) {
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, batch, heads, lq, lk, 64);
  p.dropout = dropout;
  p.dropoutId = dropoutId;
  p.keepBits = true;
  Tiles tiles{{64, 64, 4, true}, {64, 64, 4, true}, {64, 64, 4, true}};
  using Cfg = EmulatedConfig<64, 64, 64, 4, true, false, false, true, true, true, true>;
  runCase<Cfg, Cfg, Cfg>(p, {}, tiles);
}

// Lq = Lk = 150: the keys' last tile is partial, so scores are masked.
TEST(AttentionEmulation, WgmmaKeepBitsPartialTiles) {
  runWgmmaKeepBitsNotCausal(1, 2, 150, 150, 0.1, 9);
}

// Lk = 128 in whole key tiles: no score can be masked (keysMayBeMasked), so no
// kernel tests for it.
TEST(AttentionEmulation, WgmmaKeepBitsWholeTiles) {
  runWgmmaKeepBitsNotCausal(2, 1, 96, 128, 0.15, 10);
}

TEST(AttentionEmulation, WgmmaTiles128PaddingDrawnF16) {
  // f16, key tiles of 128 (two 64-wide wgmma a product; grad-kv's 128-query
  // tiles would hold 192 accumulators), Lk = 200 with key padding (batch 0
  // no key at all), dropout drawn again by every kernel.
  AttentionProblem p = contiguousProblem(dmrt::DType::F16, 2, 1, 70, 200, 64);
  p.keyPadding = true;
  p.dropout = 0.2;
  p.dropoutId = 6;
  Tiles tiles{{64, 128, 4, true}, {64, 64, 4, true}, {64, 128, 4, true}};
  using Rows = EmulatedConfig<64, 64, 128, 4, false, false, true, true, true, false, true>;
  runCase<Rows, EmulatedConfig<64, 64, 64, 4, false, false, true, true, true, false, true>,
          Rows>(p, {0, 150}, tiles);
}

TEST(AttentionEmulation, WgmmaCausalCrossNoDropout) {
  // Lq 100 != Lk 130, causal, no dropout (P itself is dV's operand).
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 100, 130, 64);
  p.causal = true;
  Tiles tiles{{64, 64, 4, true}, {64, 64, 4, true}, {64, 64, 4, true}};
  using Cfg = EmulatedConfig<64, 64, 64, 4, true, true, false, false, false, false, true>;
  runCase<Cfg, Cfg, Cfg>(p, {}, tiles);
}

} // namespace
