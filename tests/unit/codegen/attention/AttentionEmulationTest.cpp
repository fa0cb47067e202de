//===- AttentionEmulationTest.cpp - The kernels' device code on the CPU ----===//
//
// Each case emits the three kernels' sources, reads their configs back
// (EmulatedConfig.h), runs the device templates in the warp emulator and
// compares every output with the double-precision reference, with the same
// tolerance as the GPU test; a planted ×1.05 in each output must fail.
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
  ASSERT_EQ(checkTiles(p, tiles, kind), "");
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

template <class Fwd, class KV, class Q>
void runCase(const AttentionProblem &p, const std::vector<int32_t> &lens, const Tiles &tiles) {
  ASSERT_EQ(validate(p), "");
  HostTensors t;
  fillInputs(p, 0xA77E, lens, t);
  Outputs ref;
  referenceForward(p, t, kSeed, p.dropoutId, ref);

  // Forward: every output element starts as NaN, so one left unwritten fails.
  setConfig<Fwd>(p, tiles.forward, AttentionKernelKind::Forward);
  std::vector<uint16_t> o((size_t)spanOf(p.o, p.B, p.H, p.Lq, p.D), 0xFFFF);
  std::vector<float> lse((size_t)spanOf(p.lse, p.B, p.H, p.Lq),
                         std::numeric_limits<float>::quiet_NaN());
  registerInputs(t);
  AttentionLaunch l = launchGeometry(p, tiles.forward, AttentionKernelKind::Forward);
  dmcemu::launch(l.grid, l.block[0], l.sharedBytes, [&](unsigned char *smem) {
    dmcattn::attentionForward<Fwd>(t.q.data(), t.k.data(), t.v.data(), t.lens.data(), o.data(),
                                   lse.data(), kSeed, smem);
  });
  expectMatch(p, "o", ref.o, gather(p, o, p.o, p.Lq));
  expectMatch(p, "lse", ref.lse, gatherLse(p, lse));

  // Backward from the reference's o and lse.
  storeForward(p, ref, t);
  referenceBackward(p, t, kSeed, p.dropoutId, ref);
  registerInputs(t);
  setConfig<KV>(p, tiles.gradKV, AttentionKernelKind::GradKV);
  std::vector<uint16_t> dK((size_t)spanOf(p.dK, p.B, p.H, p.Lk, p.D), 0xFFFF);
  std::vector<uint16_t> dV((size_t)spanOf(p.dV, p.B, p.H, p.Lk, p.D), 0xFFFF);
  l = launchGeometry(p, tiles.gradKV, AttentionKernelKind::GradKV);
  dmcemu::launch(l.grid, l.block[0], l.sharedBytes, [&](unsigned char *smem) {
    dmcattn::attentionGradKV<KV>(t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.dO.data(),
                                 t.lse.data(), t.lens.data(), dK.data(), dV.data(), kSeed,
                                 smem);
  });
  expectMatch(p, "dK", ref.dK, gather(p, dK, p.dK, p.Lk));
  expectMatch(p, "dV", ref.dV, gather(p, dV, p.dV, p.Lk));

  setConfig<Q>(p, tiles.gradQ, AttentionKernelKind::GradQ);
  std::vector<uint16_t> dQ((size_t)spanOf(p.dQ, p.B, p.H, p.Lq, p.D), 0xFFFF);
  l = launchGeometry(p, tiles.gradQ, AttentionKernelKind::GradQ);
  dmcemu::launch(l.grid, l.block[0], l.sharedBytes, [&](unsigned char *smem) {
    dmcattn::attentionGradQ<Q>(t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.dO.data(),
                               t.lse.data(), t.lens.data(), dQ.data(), kSeed, smem);
  });
  expectMatch(p, "dQ", ref.dQ, gather(p, dQ, p.dQ, p.Lq));
}

TEST(AttentionEmulation, PhiloxMatchesTheRuntime) {
  // The kernels' 32-bit Philox against runtime/format/device/Philox.h.
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 2000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t seed = x ^ (x >> 29), n = i < 1000 ? (uint64_t)i : x >> (i % 40);
    const uint32_t id = (uint32_t)(x >> 40) % 97;
    uint32_t got[4], want[4];
    dmcattn::philoxWords(seed, id, n >> 2, got);
    dmrt::dropoutWords(seed, id, n >> 2, want);
    for (int w = 0; w < 4; ++w)
      ASSERT_EQ(got[w], want[w]) << "seed " << seed << " group " << (n >> 2) << " word " << w;
    ASSERT_EQ(dmcattn::dropoutWord(seed, id, n), dmrt::dropoutWord(seed, id, n)) << n;
  }
}

// Config types: <D, blockM, blockN, warps, bf16, causal, padding, dropout, key runs>.

TEST(AttentionEmulation, CausalDropoutCrossAttentionBf16) {
  // Lq != Lk, odd Lq; order bhjk with Lk = 44: Philox groups shared by lanes.
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 1, 2, 37, 44, 32);
  p.causal = true;
  p.dropout = 0.15;
  p.dropoutId = 7;
  Tiles tiles{{32, 32, 2}, {32, 32, 2}, {32, 32, 2}};
  runCase<EmulatedConfig<32, 32, 32, 2, true, true, false, true, true>,
          EmulatedConfig<32, 32, 32, 2, true, true, false, true, true>,
          EmulatedConfig<32, 32, 32, 2, true, true, false, true, true>>(p, {}, tiles);
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

TEST(AttentionEmulation, HeadDim128DefaultTilesCausalPadding) {
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 2, 1, 70, 70, 128);
  p.causal = true;
  p.keyPadding = true;
  Tiles tiles{defaultTiles(p, AttentionKernelKind::Forward),
              defaultTiles(p, AttentionKernelKind::GradKV),
              defaultTiles(p, AttentionKernelKind::GradQ)};
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
  Tiles tiles{defaultTiles(p, AttentionKernelKind::Forward),
              defaultTiles(p, AttentionKernelKind::GradKV),
              defaultTiles(p, AttentionKernelKind::GradQ)};
  runCase<EmulatedConfig<64, 64, 64, 4, true, false, false, true, true>,
          EmulatedConfig<64, 64, 64, 4, true, false, false, true, true>,
          EmulatedConfig<64, 64, 32, 4, true, false, false, true, true>>(p, {}, tiles);
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

} // namespace
