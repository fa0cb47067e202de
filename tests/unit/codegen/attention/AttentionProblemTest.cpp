//===- AttentionProblemTest.cpp - Validation, tiles, geometry, emitted source -===//

#include "codegen/attention/AttentionProblem.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <functional>

using namespace dmcgen;

namespace {

AttentionProblem base() { return contiguousProblem(dmrt::DType::BF16, 2, 3, 97, 97, 64); }

bool mentions(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST(AttentionProblem, ContiguousProblemIsValid) {
  AttentionProblem p = base();
  EXPECT_EQ(validate(p), "");
  EXPECT_EQ(p.q.p, 1);
  EXPECT_EQ(p.q.row, 64);
  EXPECT_EQ(p.q.h, 97 * 64);
  EXPECT_EQ(p.q.b, 3 * 97 * 64);
  EXPECT_EQ(p.dropoutStrides.k, 1);
  EXPECT_EQ(p.dropoutStrides.j, 97);
  EXPECT_EQ(p.dropoutStrides.b, 3 * 97 * 97);
  EXPECT_DOUBLE_EQ(p.scale, 0.125);
}

TEST(AttentionProblem, RowMajorStridesFollowTheOrder) {
  AttentionStrides s;
  ASSERT_EQ(rowMajorStrides("bjhp", 2, 12, 197, 64, s), "");
  EXPECT_EQ(s.p, 1);
  EXPECT_EQ(s.h, 64);
  EXPECT_EQ(s.row, 12 * 64);
  EXPECT_EQ(s.b, 197 * 12 * 64);
  EXPECT_TRUE(mentions(rowMajorStrides("bjxp", 1, 1, 1, 16, s), "unknown dim 'x'"));
  EXPECT_TRUE(mentions(rowMajorStrides("bhh", 1, 1, 1, 16, s), "4 dims"));
  EXPECT_TRUE(mentions(rowMajorStrides("bhhp", 1, 1, 1, 16, s), "twice"));
}

/// Each broken field gets an error naming the field and the bad value.
TEST(AttentionProblem, ValidateNamesFieldAndValue) {
  struct Case {
    std::function<void(AttentionProblem &)> breakIt;
    std::vector<std::string> mentions;
  };
  const Case cases[] = {
      {[](AttentionProblem &p) { p.dtype = dmrt::DType::F32; }, {"dtype f32", "bf16", "f16"}},
      {[](AttentionProblem &p) { p.D = 72; }, {"head dim D = 72", "multiple of 16", "128"}},
      {[](AttentionProblem &p) { p.D = 256; }, {"D = 256", "[16, 128]"}},
      {[](AttentionProblem &p) { p.D = 0; }, {"D = 0"}},
      {[](AttentionProblem &p) { p.B = 0; }, {"B = 0", "[1, 65535]"}},
      {[](AttentionProblem &p) { p.H = 70000; }, {"H = 70000"}},
      {[](AttentionProblem &p) { p.Lq = 0; }, {"Lq = 0"}},
      {[](AttentionProblem &p) { p.Lk = -3; }, {"Lk = -3"}},
      {[](AttentionProblem &p) { p.q.p = 2; }, {"q.p stride is 2", "must be 1"}},
      {[](AttentionProblem &p) { p.dV.p = 0; }, {"dV.p stride is 0"}},
      {[](AttentionProblem &p) { p.k.row = 100; }, {"k.k stride is 100", "multiple of 8"}},
      {[](AttentionProblem &p) { p.dO.h = -64; }, {"dO.h stride is -64", ">= 0"}},
      {[](AttentionProblem &p) { p.lse.j = -1; }, {"lse.j stride is -1"}},
      {[](AttentionProblem &p) { p.scale = 0; }, {"scale = 0"}},
      {[](AttentionProblem &p) { p.scale = 1.0 / 0.0; }, {"scale = inf"}},
      {[](AttentionProblem &p) { p.dropout = 1.0; }, {"dropout p = 1", "[0, 1)"}},
      {[](AttentionProblem &p) { p.dropout = -0.5; }, {"dropout p = -0.5"}},
      {[](AttentionProblem &p) {
         p.dropout = 0.1;
         p.dropoutStrides.j = -4;
       },
       {"dropoutStrides.j = -4"}},
      {[](AttentionProblem &p) {
         p.dropout = 0.1;
         p.keepBits = true;
         p.bits.h = -1;
       },
       {"bits.h stride is -1", ">= 0"}},
      {[](AttentionProblem &p) {
         p.dropout = 0.1;
         p.keepBits = true;
         p.bits.w = 0; // Lk = 97: 4 words a row
       },
       {"bits.w stride is 0", "4 elements"}},
      {[](AttentionProblem &p) {
         p.dropout = 0.1;
         p.keepBits = true;
         p.bits.j = 0;
       },
       {"bits.j stride is 0", "97 elements"}},
  };
  for (const Case &c : cases) {
    AttentionProblem p = base();
    c.breakIt(p);
    const std::string e = validate(p);
    ASSERT_FALSE(e.empty());
    for (const std::string &m : c.mentions)
      EXPECT_TRUE(mentions(e, m)) << "'" << e << "' should mention '" << m << "'";
  }
}

TEST(AttentionProblem, KeepBitsStrides) {
  AttentionProblem p = base();
  EXPECT_EQ(keepBitsWords(p), 4); // ceil(97 / 32)
  EXPECT_EQ(p.bits.w, 1);
  EXPECT_EQ(p.bits.j, 4);
  EXPECT_EQ(p.bits.h, 97 * 4);
  EXPECT_EQ(p.bits.b, 3 * 97 * 4);
  // Without dropout keepBits means nothing: no strides are checked.
  p.keepBits = true;
  p.bits = {0, 0, 0, 0};
  EXPECT_FALSE(usesKeepBits(p));
  EXPECT_EQ(validate(p), "");
  // One word a row needs no word stride; a size-1 dim no stride either.
  AttentionProblem one = contiguousProblem(dmrt::DType::BF16, 1, 2, 10, 32, 64);
  one.dropout = 0.1;
  one.keepBits = true;
  one.bits = {0, 10, 1, 0};
  EXPECT_EQ(validate(one), "");
}

TEST(AttentionProblem, SupportedHeadDims) {
  for (int64_t d : {16, 32, 48, 64, 80, 96, 112, 128}) {
    AttentionProblem p = contiguousProblem(dmrt::DType::F16, 1, 1, 10, 10, d);
    EXPECT_EQ(validate(p), "") << d;
    for (auto kind : {AttentionKernelKind::Forward, AttentionKernelKind::GradKV,
                      AttentionKernelKind::GradQ})
      EXPECT_EQ(checkTiles(p, defaultTiles(p, kind), kind), "") << d << kernelKindName(kind);
  }
}

TEST(AttentionTiles, RejectionsSayWhy) {
  AttentionProblem p = base();
  using K = AttentionKernelKind;
  EXPECT_TRUE(mentions(checkTiles(p, {64, 64, 2}, K::Forward), "blockM == 16 * warps = 32"));
  EXPECT_TRUE(mentions(checkTiles(p, {64, 48, 2}, K::GradKV),
                       "blockN == 16 * warps = 32 or 32 * warps = 64"));
  EXPECT_TRUE(mentions(checkTiles(p, {24, 64, 4}, K::Forward), "blockM = 24"));
  EXPECT_TRUE(mentions(checkTiles(p, {64, 64, 3}, K::GradQ), "warps = 3"));
  AttentionProblem big = contiguousProblem(dmrt::DType::BF16, 1, 1, 512, 512, 128);
  EXPECT_TRUE(
      mentions(checkTiles(big, {128, 64, 4}, K::GradKV, TileLimits{64 * 1024}), "shared memory"));
  EXPECT_TRUE(mentions(checkTiles(big, {128, 64, 4}, K::GradKV), "accumulators"));
  AttentionProblem bad = p;
  bad.D = 20;
  EXPECT_TRUE(mentions(checkTiles(bad, {64, 64, 4}, K::GradQ), "invalid problem"));
  // A forward that writes keep bits writes whole 32-key words per key tile;
  // the backward kernels read any tile.
  AttentionProblem keep = p;
  keep.dropout = 0.1;
  keep.keepBits = true;
  const std::string why = checkTiles(keep, {64, 16, 4}, K::Forward);
  EXPECT_TRUE(mentions(why, "blockN = 16")) << why;
  EXPECT_TRUE(mentions(why, "multiple of 32")) << why;
  EXPECT_TRUE(mentions(why, "keep bits")) << why;
  EXPECT_TRUE(mentions(checkTiles(keep, {64, 48, 4}, K::Forward), "multiple of 32"));
  EXPECT_EQ(checkTiles(keep, {64, 32, 4}, K::Forward), "");
  EXPECT_EQ(checkTiles(keep, {64, 16, 4}, K::GradQ), "");
  keep.keepBits = false;
  EXPECT_EQ(checkTiles(keep, {64, 16, 4}, K::Forward), "");
}

TEST(AttentionTiles, GradKVWarpsOwnOneOrTwoRowBlocks) {
  AttentionProblem p = base();
  using K = AttentionKernelKind;
  EXPECT_EQ(rowBlocksPerWarp({64, 64, 4}, K::GradKV), 1);
  EXPECT_EQ(rowBlocksPerWarp({32, 128, 4}, K::GradKV), 2);
  EXPECT_EQ(rowBlocksPerWarp({32, 256, 4}, K::GradKV), 0);
  // Query-major kernels: 16 queries a warp only.
  EXPECT_EQ(rowBlocksPerWarp({128, 64, 4}, K::GradQ), 0);
  EXPECT_TRUE(mentions(checkTiles(p, {128, 64, 4}, K::Forward), "each warp owns 16 queries"));
  EXPECT_EQ(checkTiles(p, {32, 128, 4}, K::GradKV), "");
  EXPECT_EQ(checkTiles(p, {32, 64, 2}, K::GradKV), "");
  // Two blocks of 16 x (64 + 64) accumulators: 256 per thread.
  const std::string why = checkTiles(p, {64, 128, 4}, K::GradKV);
  EXPECT_TRUE(mentions(why, "256 f32 accumulators")) << why;
  EXPECT_TRUE(mentions(why, "two row blocks")) << why;
  // Listed after every one-block tile (then come tiles with more blocks an SM).
  auto all = tileCandidates(p, K::GradKV);
  all.erase(std::remove_if(all.begin(), all.end(),
                           [](const TileCandidate &c) { return c.tiles.minBlocks > 0; }),
            all.end());
  size_t firstTwo = all.size();
  for (size_t i = 0; i < all.size(); ++i)
    if (rowBlocksPerWarp(all[i].tiles, K::GradKV) == 2 && firstTwo == all.size())
      firstTwo = i;
  ASSERT_LT(firstTwo, all.size());
  for (size_t i = firstTwo; i < all.size(); ++i)
    EXPECT_EQ(rowBlocksPerWarp(all[i].tiles, K::GradKV), 2) << i;
}

TEST(AttentionTiles, WgmmaTilesOnlyWhereTheTargetHasThem) {
  AttentionProblem p = base();
  using K = AttentionKernelKind;
  const TileLimits sm90a{kMaxSharedBytesSm90, true};
  const AttentionTiles wg{64, 64, 4, true};
  for (K kind : {K::Forward, K::GradKV, K::GradQ}) {
    EXPECT_TRUE(mentions(checkTiles(p, wg, kind), "need an sm_90a target")) << kernelKindName(kind);
    EXPECT_EQ(checkTiles(p, wg, kind, sm90a), "") << kernelKindName(kind);
    // Without wgmma the candidates are the 64 mma.sync tiles; with it two
    // wgmma tiles follow them (each listed, feasible or not, with its reason).
    auto plain = tileCandidates(p, kind), all = tileCandidates(p, kind, sm90a);
    auto hinted = [](std::vector<TileCandidate> &v) { // those with more blocks an SM last
      v.erase(std::remove_if(v.begin(), v.end(),
                             [](const TileCandidate &c) { return c.tiles.minBlocks > 0; }),
              v.end());
    };
    hinted(plain);
    hinted(all);
    ASSERT_EQ(plain.size(), 64u);
    ASSERT_EQ(all.size(), 66u);
    for (size_t i = 0; i < plain.size(); ++i)
      EXPECT_EQ(all[i].tiles, plain[i].tiles) << i;
    EXPECT_TRUE(all[64].tiles.wgmma && all[65].tiles.wgmma);
    for (const TileCandidate &c : all)
      EXPECT_EQ(c.rejected, checkTiles(p, c.tiles, kind, sm90a));
  }
  // One warpgroup owns 64 rows of the block-major dim; the other a multiple of 64.
  std::string why = checkTiles(p, {64, 32, 4, true}, K::Forward, sm90a);
  EXPECT_TRUE(mentions(why, "forward needs blockM 64 with 4 warps")) << why;
  EXPECT_TRUE(mentions(why, "blockN a multiple of 64")) << why;
  why = checkTiles(p, {64, 128, 4, true}, K::GradKV, sm90a);
  EXPECT_TRUE(mentions(why, "grad-kv needs blockN 64")) << why;
  EXPECT_EQ(checkTiles(p, {64, 128, 4, true}, K::GradQ, sm90a), "");
  // grad-kv's 128-query tiles hold 2 x 64 + 64 accumulators too many.
  EXPECT_TRUE(mentions(checkTiles(p, {128, 64, 4, true}, K::GradKV, sm90a), "accumulators"));
  AttentionProblem d128 = contiguousProblem(dmrt::DType::BF16, 1, 1, 128, 128, 128);
  EXPECT_TRUE(mentions(checkTiles(d128, wg, K::GradQ, sm90a), "head dim 128, must be 64"));
  // The wgmma tiles take an atom's slack of shared memory to align.
  EXPECT_EQ(sharedBytes(p, wg, K::Forward), sharedBytes(p, {64, 64, 4}, K::Forward) + 1024);
}

TEST(AttentionTiles, WgmmaDefaultsOnSm90aHeadDim64) {
  using K = AttentionKernelKind;
  const TileLimits sm90a{kMaxSharedBytesSm90, true};
  AttentionProblem p = base();
  p.dropout = 0.1;
  for (K kind : {K::Forward, K::GradKV, K::GradQ}) {
    EXPECT_EQ(defaultTiles(p, kind, sm90a), (AttentionTiles{64, 64, 4, true}));
    EXPECT_FALSE(defaultTiles(p, kind).wgmma); // no sm_90a: mma.sync
  }
  p.keepBits = true; // reading saved keep bits too
  for (K kind : {K::Forward, K::GradKV, K::GradQ})
    EXPECT_EQ(defaultTiles(p, kind, sm90a), (AttentionTiles{64, 64, 4, true}));
  AttentionProblem d128 = contiguousProblem(dmrt::DType::BF16, 1, 1, 128, 128, 128);
  EXPECT_FALSE(defaultTiles(d128, K::Forward, sm90a).wgmma);
}

TEST(AttentionTiles, CandidatesIncludeDefaultsAndReasons) {
  AttentionProblem keep = base();
  keep.dropout = 0.1;
  keep.keepBits = true;
  for (const AttentionProblem &p : {base(), keep}) {
    for (auto kind : {AttentionKernelKind::Forward, AttentionKernelKind::GradKV,
                      AttentionKernelKind::GradQ}) {
      auto all = tileCandidates(p, kind);
      // The 64 tilings, then feasible ones again with more blocks an SM.
      ASSERT_GE(all.size(), 64u);
      for (size_t n = 64; n < all.size(); ++n) {
        EXPECT_GT(all[n].tiles.minBlocks, 0);
        EXPECT_EQ(all[n].rejected, "");
      }
      all.resize(64);
      int feasible = 0;
      bool hasDefault = false;
      for (const TileCandidate &c : all) {
        EXPECT_EQ(c.tiles.minBlocks, 0);
        feasible += c.rejected.empty();
        hasDefault |= c.rejected.empty() && c.tiles == defaultTiles(p, kind);
        EXPECT_EQ(c.rejected, checkTiles(p, c.tiles, kind));
      }
      EXPECT_TRUE(hasDefault) << kernelKindName(kind) << (p.keepBits ? " keep bits" : "");
      EXPECT_GE(feasible, 4) << kernelKindName(kind);
      EXPECT_LT(feasible, 64) << kernelKindName(kind);
    }
  }
}

TEST(AttentionTiles, MoreBlocksAnSmWhereRegistersAndSharedMemoryAllow) {
  using K = AttentionKernelKind;
  const TileLimits sm90a{kMaxSharedBytesSm90, true};
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 8, 16, 512, 512, 64);
  p.dropout = 0.1;
  p.keepBits = true;
  const AttentionTiles wg{64, 64, 4, true};
  EXPECT_EQ(hintedBlocks(K::Forward, 4), 3); // 168 registers a thread
  EXPECT_EQ(hintedBlocks(K::GradKV, 4), 0);  // ptxas's choice
  // The forward's wgmma tiles at 4 blocks an SM: 128 registers, 4 x 42 KiB.
  AttentionTiles four = wg;
  four.minBlocks = 4;
  EXPECT_EQ(checkTiles(p, four, K::Forward, sm90a), "");
  auto has = [&](K kind, const AttentionTiles &t) {
    for (const TileCandidate &c : tileCandidates(p, kind, sm90a))
      if (c.tiles == t)
        return c.rejected.empty();
    return false;
  };
  EXPECT_TRUE(has(K::Forward, four));
  EXPECT_TRUE(has(K::Forward, wg));
  // grad-kv's 50 KiB of shared memory (no o tiles: Drow comes from grad-q)
  // would fit 4 blocks an SM, but at 128 registers ptxas serializes its
  // wgmma; grad-q's 58 KiB fit 3, so no 4 either.
  EXPECT_FALSE(has(K::GradKV, four));
  EXPECT_TRUE(mentions(checkTiles(p, four, K::GradKV, sm90a),
                       "grad-kv's warpgroup MMA needs more (ptxas serializes it)"));
  EXPECT_FALSE(has(K::GradQ, four));
  EXPECT_TRUE(mentions(checkTiles(p, four, K::GradQ, sm90a),
                       "min_blocks = 4 blocks of 58880 bytes of shared memory do not fit an SM "
                       "(3 do)"));
  AttentionTiles five = wg;
  five.minBlocks = 5;
  EXPECT_TRUE(mentions(checkTiles(p, five, K::Forward, sm90a),
                       "min_blocks = 5 blocks of 128 threads leave 102 registers a thread "
                       "(at least 128)"));
  AttentionTiles negative = wg;
  negative.minBlocks = -1;
  EXPECT_TRUE(mentions(checkTiles(p, negative, K::Forward, sm90a), "min_blocks = -1: must be 0"));
  // The knob is the launch bounds' minimum; without it the forward keeps
  // its hint and the backward kernels none.
  EXPECT_TRUE(mentions(emitAttentionSource(p, four, K::Forward, "f"), "__launch_bounds__(128, 4)"));
  EXPECT_TRUE(mentions(emitAttentionSource(p, wg, K::Forward, "f"), "__launch_bounds__(128, 3)"));
  EXPECT_TRUE(mentions(emitAttentionSource(p, wg, K::GradQ, "f"), "__launch_bounds__(128)\n"));
  AttentionTiles q3 = wg;
  q3.minBlocks = 3;
  EXPECT_TRUE(mentions(emitAttentionSource(p, q3, K::GradQ, "f"), "__launch_bounds__(128, 3)"));
}

TEST(AttentionLaunch, GeometryCoversEveryRow) {
  AttentionProblem p = contiguousProblem(dmrt::DType::BF16, 2, 3, 197, 130, 64);
  AttentionLaunch f = launchGeometry(p, {128, 64, 8}, AttentionKernelKind::Forward);
  EXPECT_EQ(f.grid[0], 2u); // ceil(197 / 128)
  EXPECT_EQ(f.grid[1], 3u);
  EXPECT_EQ(f.grid[2], 2u);
  EXPECT_EQ(f.block[0], 256u);
  EXPECT_EQ(f.block[1] * f.block[2], 1u);
  // Q 128 rows + 2 stages of K, V 64 rows, 128 bytes a row.
  EXPECT_EQ(f.sharedBytes, (128u + 4 * 64u) * 128u);
  AttentionLaunch kv = launchGeometry(p, {64, 64, 4}, AttentionKernelKind::GradKV);
  EXPECT_EQ(kv.grid[0], 3u); // ceil(130 / 64): key tiles
  EXPECT_EQ(kv.block[0], 128u);
  // K, V + 2 stages of Q, dO; 2 stages of lse and Drow.
  EXPECT_EQ(kv.sharedBytes, (2 * 64u + 4 * 64u) * 128u + 4 * 4 * 64u);
  AttentionLaunch q = launchGeometry(p, {64, 64, 4}, AttentionKernelKind::GradQ);
  EXPECT_EQ(q.grid[0], 4u); // ceil(197 / 64)
  // Q, dO, o + 2 stages of K, V; lse and Drow.
  EXPECT_EQ(q.sharedBytes, (3 * 64u + 4 * 64u) * 128u + 2 * 4 * 64u);
  // Odd head dims pad rows to 8 chunks (D = 48: 96 bytes -> 128).
  AttentionProblem d48 = contiguousProblem(dmrt::DType::BF16, 1, 1, 64, 64, 48);
  EXPECT_EQ(sharedBytes(d48, {64, 64, 4}, AttentionKernelKind::Forward), (5 * 64u) * 128u);
}

TEST(AttentionSource, ParametersFollowTheKernelAbi) {
  AttentionProblem p = base();
  p.keyPadding = true;
  EXPECT_EQ(kernelInputs(p, AttentionKernelKind::Forward),
            (std::vector<std::string>{"q", "k", "v", "lens"}));
  EXPECT_EQ(kernelInputs(p, AttentionKernelKind::GradQ),
            (std::vector<std::string>{"q", "k", "v", "o", "dO", "lse", "lens"}));
  EXPECT_EQ(kernelOutputs(p, AttentionKernelKind::GradKV), (std::vector<std::string>{"dK", "dV"}));
  std::string fwd = emitAttentionSource(p, defaultTiles(p, AttentionKernelKind::Forward),
                                        AttentionKernelKind::Forward, "attn_fwd");
  EXPECT_TRUE(mentions(fwd, "attn_fwd(\n    const uint16_t *__restrict__ q,\n    const uint16_t "
                            "*__restrict__ k,\n    const uint16_t *__restrict__ v,\n    const "
                            "int32_t *__restrict__ lens,\n    uint16_t *__restrict__ o,\n    "
                            "float *__restrict__ lse,\n    unsigned long long seed)"))
      << fwd;
  std::string kv = emitAttentionSource(p, defaultTiles(p, AttentionKernelKind::GradKV),
                                       AttentionKernelKind::GradKV, "attn_kv");
  EXPECT_TRUE(mentions(kv, "lens,\n    uint16_t *__restrict__ dK,\n    uint16_t *__restrict__ "
                           "dV,\n    unsigned long long seed)"))
      << kv;
  p.keyPadding = false;
  std::string q = emitAttentionSource(p, defaultTiles(p, AttentionKernelKind::GradQ),
                                      AttentionKernelKind::GradQ, "attn_q");
  EXPECT_FALSE(mentions(q, "lens,"));
  EXPECT_TRUE(mentions(q, "const float *__restrict__ lse,\n    uint16_t *__restrict__ dQ"));
}

TEST(AttentionSource, KeepBitsParametersAndConfig) {
  AttentionProblem p = base();
  p.dropout = 0.1;
  p.keepBits = true;
  p.bits = {2000, 500, 5, 1}; // padded rows
  using K = AttentionKernelKind;
  EXPECT_EQ(kernelOutputs(p, K::Forward), (std::vector<std::string>{"o", "lse", "bits"}));
  EXPECT_EQ(kernelInputs(p, K::Forward), (std::vector<std::string>{"q", "k", "v"}));
  p.keyPadding = true;
  EXPECT_EQ(kernelInputs(p, K::GradKV),
            (std::vector<std::string>{"q", "k", "v", "dO", "lse", "drow", "bits", "lens"}));
  EXPECT_EQ(kernelInputs(p, K::GradQ),
            (std::vector<std::string>{"q", "k", "v", "o", "dO", "lse", "bits", "lens"}));
  EXPECT_EQ(kernelOutputs(p, K::GradQ), (std::vector<std::string>{"dQ", "drow"}));

  std::string fwd = emitAttentionSource(p, defaultTiles(p, K::Forward), K::Forward, "f");
  EXPECT_TRUE(mentions(fwd, "float *__restrict__ lse,\n    unsigned *__restrict__ bits,\n    "
                            "unsigned long long seed)"))
      << fwd;
  EXPECT_TRUE(mentions(fwd, "(q, k, v, lens, o, lse, bits, seed, smem)")) << fwd;
  EXPECT_TRUE(mentions(fwd, "kKeepBits = true"));
  EXPECT_TRUE(mentions(fwd, "kBitsB = 2000ll"));
  EXPECT_TRUE(mentions(fwd, "kBitsH = 500ll"));
  EXPECT_TRUE(mentions(fwd, "kBitsJ = 5ll"));
  EXPECT_TRUE(mentions(fwd, "kBitsW = 1ll"));
  EXPECT_TRUE(mentions(fwd, "kBitsWords = 4;"));
  std::string kv = emitAttentionSource(p, defaultTiles(p, K::GradKV), K::GradKV, "kv");
  EXPECT_TRUE(mentions(kv, "const float *__restrict__ lse,\n    const float *__restrict__ "
                           "drow,\n    const unsigned *__restrict__ bits,\n    const int32_t "
                           "*__restrict__ lens,\n    uint16_t *__restrict__ dK"))
      << kv;
  EXPECT_TRUE(mentions(kv, "(q, k, v, dO, lse, drow, bits, lens, dK, dV, seed, smem)")) << kv;
  p.keyPadding = false;
  std::string q = emitAttentionSource(p, defaultTiles(p, K::GradQ), K::GradQ, "q");
  EXPECT_TRUE(mentions(q, "const unsigned *__restrict__ bits,\n    uint16_t *__restrict__ "
                          "dQ,\n    float *__restrict__ drow,\n    unsigned long long seed)"))
      << q;
  EXPECT_TRUE(mentions(q, "(q, k, v, o, dO, lse, bits, nullptr, dQ, drow, seed, smem)")) << q;

  // Without dropout there is nothing to save: no parameter, kKeepBits false.
  p.dropout = 0;
  EXPECT_EQ(kernelOutputs(p, K::Forward), (std::vector<std::string>{"o", "lse"}));
  EXPECT_EQ(kernelInputs(p, K::GradQ),
            (std::vector<std::string>{"q", "k", "v", "o", "dO", "lse"}));
  fwd = emitAttentionSource(p, defaultTiles(p, K::Forward), K::Forward, "f");
  EXPECT_FALSE(mentions(fwd, "bits,"));
  EXPECT_TRUE(mentions(fwd, "kKeepBits = false"));
  EXPECT_TRUE(mentions(fwd, "(q, k, v, nullptr, o, lse, nullptr, seed, smem)")) << fwd;
}

TEST(AttentionSource, ConfigCarriesTheProblem) {
  AttentionProblem p = base();
  p.dropout = 0.1;
  p.dropoutId = 42;
  p.causal = true;
  std::string s = emitAttentionSource(p, {128, 64, 8}, AttentionKernelKind::Forward, "f");
  EXPECT_TRUE(mentions(s, "#include \"codegen/attention/device/Forward.h\""));
  EXPECT_TRUE(mentions(s, "kCausal = true"));
  EXPECT_TRUE(mentions(s, "kDropoutId = 42u"));
  EXPECT_TRUE(mentions(s, "kDropThreshold = 6553u")); // floor(0.1 * 2^32)
  EXPECT_TRUE(mentions(s, "kScale = 0x1p-3f"));
  EXPECT_TRUE(mentions(s, "kLq = 97"));
  EXPECT_TRUE(mentions(s, "kKk = 64ll"));
  // The forward asks for blocks per SM at 168 registers a thread: 256
  // threads -> 1; 128 -> 3. The backward kernels leave it to ptxas.
  EXPECT_TRUE(mentions(s, "__launch_bounds__(256, 1)"));
  EXPECT_TRUE(mentions(emitAttentionSource(p, {64, 64, 4}, AttentionKernelKind::Forward, "f"),
                       "__launch_bounds__(128, 3)"));
  EXPECT_TRUE(mentions(emitAttentionSource(p, {64, 64, 4}, AttentionKernelKind::GradQ, "f"),
                       "__launch_bounds__(128)\n"));
  // Keys are the dropout index's unit stride (Lk = 97: rows not 4-aligned),
  // so lanes share Philox groups along runs of keys; with sk != 1 they do not.
  EXPECT_TRUE(mentions(s, "kDropoutKeyRuns = true"));
  p.dropoutStrides = {3 * 97 * 97, 97 * 97, 1, 97};
  s = emitAttentionSource(p, {128, 64, 8}, AttentionKernelKind::Forward, "f");
  EXPECT_TRUE(mentions(s, "kDropoutKeyRuns = false"));
}

} // namespace
