//===- GemmAlgorithmsTest.cpp - cuBLASLt algorithm configurations (CPU) ---===//
//
// Names, descriptions, candidates from capabilities, deduplication and the
// round-robin selection of GemmRunner::enumerateAlgorithms; the algorithm
// sweep's summary. No GPU: `accept` stands in for cublasLtMatmulAlgoCheck.
//
#include "runtime/GemmAlgorithms.h"
#include "runtime/Harness.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace dmrt;

namespace {

GemmAlgoConfig cfg(int32_t id, uint32_t tile, uint32_t stages = 0,
                   int32_t splitK = 1, uint32_t swizzle = 0) {
  GemmAlgoConfig c;
  c.algoId = id;
  c.tile = tile;
  c.stages = stages;
  c.splitK = splitK;
  c.reduction = splitK > 1 ? uint32_t(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE)
                           : uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE);
  c.swizzle = swizzle;
  return c;
}

} // namespace

TEST(GemmAlgorithms, Names) {
  // From the toolkit's cublasLt.h (generated table).
  EXPECT_EQ(tileName(CUBLASLT_MATMUL_TILE_128x256), "128x256");
  EXPECT_EQ(tileName(CUBLASLT_MATMUL_TILE_8x8), "8x8");
  EXPECT_EQ(tileName(CUBLASLT_MATMUL_TILE_UNDEFINED), "undefined");
  EXPECT_EQ(tileName(CUBLASLT_MATMUL_TILE_END), "tile#" +
                std::to_string(int(CUBLASLT_MATMUL_TILE_END)));
  EXPECT_EQ(stagesName(CUBLASLT_MATMUL_STAGES_64x3), "64x3");
  EXPECT_EQ(stagesName(CUBLASLT_MATMUL_STAGES_128xAUTO), "128xAUTO");
  EXPECT_EQ(stagesName(CUBLASLT_MATMUL_STAGES_UNDEFINED), "undefined");
  EXPECT_EQ(stagesName(100000), "stages#100000");
  EXPECT_EQ(clusterShapeName(CUBLASLT_CLUSTER_SHAPE_AUTO), "auto");
  EXPECT_EQ(clusterShapeName(CUBLASLT_CLUSTER_SHAPE_2x1x1), "2x1x1");
  EXPECT_EQ(clusterShapeName(CUBLASLT_CLUSTER_SHAPE_1x15x1), "1x15x1");
  EXPECT_EQ(clusterShapeName(1), "cluster#1"); // no enumerator has value 1
  EXPECT_EQ(reductionSchemeName(CUBLASLT_REDUCTION_SCHEME_NONE), "none");
  EXPECT_EQ(reductionSchemeName(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE),
            "compute-type");
  EXPECT_EQ(reductionSchemeName(CUBLASLT_REDUCTION_SCHEME_MASK),
            "inplace|compute-type|output-type");
  EXPECT_EQ(reductionSchemeName(CUBLASLT_REDUCTION_SCHEME_INPLACE | 8),
            "inplace|scheme#8");
  EXPECT_EQ(bytesName(0), "0");
  EXPECT_EQ(bytesName(4u << 20), "4MiB");
  EXPECT_EQ(bytesName(1536 * 1024), "1536KiB");
  EXPECT_EQ(bytesName(1000), "1000B");
}

TEST(GemmAlgorithms, Describe) {
  GemmAlgoConfig c = cfg(21, CUBLASLT_MATMUL_TILE_128x128,
                         CUBLASLT_MATMUL_STAGES_32x5);
  EXPECT_EQ(describeAlgorithm(c, 0),
            "algo=21 tile=128x128 stages=32x5 splitk=1 swizzle=0 ws=0");
  c.splitK = 4;
  c.reduction = CUBLASLT_REDUCTION_SCHEME_INPLACE;
  c.swizzle = 1;
  EXPECT_EQ(describeAlgorithm(c, 2u << 20),
            "algo=21 tile=128x128 stages=32x5 splitk=4/inplace swizzle=1 ws=2MiB");
  c = cfg(66, CUBLASLT_MATMUL_TILE_128x256, CUBLASLT_MATMUL_STAGES_64xAUTO);
  c.customOption = 1;
  c.innerShape = CUBLASLT_MATMUL_INNER_SHAPE_MMA16816;
  c.clusterShape = CUBLASLT_CLUSTER_SHAPE_1x2x1;
  EXPECT_EQ(describeAlgorithm(c, 1024),
            "algo=66 tile=128x256 stages=64xAUTO splitk=1 swizzle=0 custom=1 "
            "inner=4 cluster=1x2x1 ws=1KiB");
}

TEST(GemmAlgorithms, KeyAndEquality) {
  GemmAlgoConfig a = cfg(1, 20), b = a;
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a.sameKey(b));
  // The inner shape: not part of the key (the enumeration leaves it to
  // cuBLASLt), but of equality.
  b.innerShape = 3;
  EXPECT_TRUE(a.sameKey(b));
  EXPECT_FALSE(a == b);
  for (int field = 0; field < 8; ++field) {
    GemmAlgoConfig c = a;
    switch (field) {
    case 0: c.algoId = 2; break;
    case 1: c.tile = 21; break;
    case 2: c.stages = 5; break;
    case 3: c.splitK = 2; break;
    case 4: c.reduction = 1; break;
    case 5: c.swizzle = 1; break;
    case 6: c.customOption = 1; break;
    case 7: c.clusterShape = CUBLASLT_CLUSTER_SHAPE_2x1x1; break;
    }
    EXPECT_FALSE(a.sameKey(c)) << field;
    EXPECT_TRUE(a != c) << field;
  }
}

TEST(GemmAlgorithms, PickReductionScheme) {
  EXPECT_EQ(pickReductionScheme(0), uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE));
  EXPECT_EQ(pickReductionScheme(CUBLASLT_REDUCTION_SCHEME_MASK),
            uint32_t(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE));
  EXPECT_EQ(pickReductionScheme(CUBLASLT_REDUCTION_SCHEME_INPLACE |
                                CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE),
            uint32_t(CUBLASLT_REDUCTION_SCHEME_INPLACE));
  EXPECT_EQ(pickReductionScheme(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE),
            uint32_t(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE));
}

TEST(GemmAlgorithms, CandidatesFromCapabilities) {
  GemmAlgoCaps caps;
  caps.tiles = {20, 23, 20}; // a repeat is dropped
  caps.stages = {9, 15};
  caps.splitK = true;
  caps.reductionMask = CUBLASLT_REDUCTION_SCHEME_INPLACE |
                       CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  caps.swizzle = true;
  std::vector<GemmAlgoConfig> c = candidateConfigs(6, caps);
  // 2 tiles x 2 stages x split-k {1, 2, 4} x swizzle {0, 1}.
  ASSERT_EQ(c.size(), 2u * 2 * 3 * 2);
  // Order: tiles fastest, then stages, split-k, swizzle.
  EXPECT_EQ(c[0], cfg(6, 20, 9));
  EXPECT_EQ(c[1], cfg(6, 23, 9));
  EXPECT_EQ(c[2], cfg(6, 20, 15));
  EXPECT_EQ(c[3], cfg(6, 23, 15));
  EXPECT_EQ(c[4], cfg(6, 20, 9, 2)); // compute-type reduction preferred
  EXPECT_EQ(c[8], cfg(6, 20, 9, 4));
  EXPECT_EQ(c[12], cfg(6, 20, 9, 1, 1));
  EXPECT_EQ(c.back(), cfg(6, 23, 15, 4, 1));
  for (const GemmAlgoConfig &x : c) {
    EXPECT_EQ(x.algoId, 6);
    EXPECT_EQ(x.reduction == CUBLASLT_REDUCTION_SCHEME_NONE, x.splitK == 1);
    EXPECT_EQ(x.clusterShape, 0); // AUTO
  }
  EXPECT_EQ(dedupConfigs(c).size(), c.size()); // all distinct

  // No split-k support, or no reduction scheme: split-k 1 only. No swizzle.
  GemmAlgoCaps plain = caps;
  plain.splitK = false;
  plain.swizzle = false;
  EXPECT_EQ(candidateConfigs(6, plain).size(), 4u);
  plain.splitK = true;
  plain.reductionMask = 0;
  EXPECT_EQ(candidateConfigs(6, plain).size(), 4u);
  // Options: split-k values (< 1 and repeats ignored), no swizzle.
  GemmCandidateOptions opt;
  opt.splitK = {0, 1, 8, 8, -2};
  opt.swizzle = false;
  c = candidateConfigs(6, caps, opt);
  ASSERT_EQ(c.size(), 2u * 2 * 2);
  EXPECT_EQ(c[4].splitK, 8);
  // Custom options 0..max (at most opt.maxCustomOptions of them) and
  // cluster shapes: slower than stages and tiles, faster than split-k.
  GemmAlgoCaps sm90;
  sm90.tiles = {20, 23};
  sm90.stages = {35};
  sm90.customOptionMax = 5;
  sm90.clusterShapes = {CUBLASLT_CLUSTER_SHAPE_AUTO, CUBLASLT_CLUSTER_SHAPE_2x1x1,
                        CUBLASLT_CLUSTER_SHAPE_2x1x1};
  c = candidateConfigs(66, sm90);
  ASSERT_EQ(c.size(), 2u * 1 * 4 * 2); // tiles x stages x custom 0..3 x 2 shapes
  EXPECT_EQ(c[0].customOption, 0u);
  EXPECT_EQ(c[0].clusterShape, CUBLASLT_CLUSTER_SHAPE_AUTO);
  EXPECT_EQ(c[1].tile, 23u);
  EXPECT_EQ(c[2].customOption, 1u);
  EXPECT_EQ(c[2].tile, 20u);
  EXPECT_EQ(c[7].customOption, 3u);
  EXPECT_EQ(c[8].customOption, 0u);
  EXPECT_EQ(c[8].clusterShape, CUBLASLT_CLUSTER_SHAPE_2x1x1);
  GemmCandidateOptions oneCustom;
  oneCustom.maxCustomOptions = 1;
  EXPECT_EQ(candidateConfigs(66, sm90, oneCustom).size(), 2u * 2);
  // Empty capability lists (and UNDEFINED alone): one UNDEFINED candidate.
  GemmAlgoCaps none;
  c = candidateConfigs(3, none);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0], cfg(3, 0, 0));
}

TEST(GemmAlgorithms, HeuristicClusterShapes) {
  GemmAlgoConfig h0 = cfg(66, 20), h1 = cfg(66, 23), h2 = cfg(21, 20);
  h0.clusterShape = CUBLASLT_CLUSTER_SHAPE_2x4x1;
  h1.clusterShape = CUBLASLT_CLUSTER_SHAPE_1x1x1;
  // Id 66 uses clusters: AUTO, the heuristic's shapes, then the defaults.
  std::vector<uint16_t> want{
      CUBLASLT_CLUSTER_SHAPE_AUTO, CUBLASLT_CLUSTER_SHAPE_2x4x1,
      CUBLASLT_CLUSTER_SHAPE_1x1x1, CUBLASLT_CLUSTER_SHAPE_2x1x1,
      CUBLASLT_CLUSTER_SHAPE_1x2x1, CUBLASLT_CLUSTER_SHAPE_2x2x1};
  EXPECT_EQ(heuristicClusterShapes(66, {h0, h1, h2}), want);
  // Ids the heuristic did not return with a cluster: AUTO alone (empty).
  EXPECT_TRUE(heuristicClusterShapes(21, {h0, h1, h2}).empty());
  EXPECT_TRUE(heuristicClusterShapes(23, {h0, h1, h2}).empty());
  EXPECT_TRUE(heuristicClusterShapes(66, {}).empty());
}

TEST(GemmAlgorithms, Dedup) {
  std::vector<GemmAlgoConfig> list{cfg(1, 20), cfg(1, 21), cfg(1, 20),
                                   cfg(2, 20), cfg(1, 21, 0, 2)};
  GemmAlgoConfig heurLike = cfg(2, 20);
  heurLike.innerShape = CUBLASLT_MATMUL_INNER_SHAPE_MMA16816; // same key
  std::vector<GemmAlgoConfig> out = dedupConfigs(list, {heurLike});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], cfg(1, 20));
  EXPECT_EQ(out[1], cfg(1, 21));
  EXPECT_EQ(out[2], cfg(1, 21, 0, 2));
}

TEST(GemmAlgorithms, SelectRoundRobin) {
  // Three ids; id 1's even tiles fail the check; id 2 has nothing valid.
  std::vector<std::vector<GemmAlgoConfig>> perId(3);
  for (uint32_t t = 1; t <= 6; ++t) {
    perId[0].push_back(cfg(0, t));
    perId[1].push_back(cfg(1, t));
    perId[2].push_back(cfg(2, t));
  }
  int calls = 0;
  auto accept = [&](const GemmAlgoConfig &c) {
    ++calls;
    if (c.algoId == 2)
      return false;
    return c.algoId == 0 || c.tile % 2 == 1;
  };
  GemmEnumStats st;
  std::vector<GemmAlgoConfig> got = selectCandidates(perId, {}, 4, accept, -1, &st);
  // Turn 1: id 0 tile 1, id 1 tile 1, id 2 exhausted (6 rejected);
  // turn 2: id 0 tile 2, id 1 tile 3 (tile 2 rejected). Cap reached.
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], cfg(0, 1));
  EXPECT_EQ(got[1], cfg(1, 1));
  EXPECT_EQ(got[2], cfg(0, 2));
  EXPECT_EQ(got[3], cfg(1, 3));
  EXPECT_EQ(st.candidates, 18);
  EXPECT_EQ(st.checked, calls);
  EXPECT_EQ(st.checked, 1 + 1 + 6 + 1 + 2);
  EXPECT_EQ(st.rejected, 6 + 1);
  EXPECT_EQ(st.enumerated, 4);
  EXPECT_EQ(st.duplicates, 0);

  // No cap reached: everything valid, ids interleaved.
  got = selectCandidates(perId, {}, 100, accept);
  EXPECT_EQ(got.size(), 6u + 3u);
  EXPECT_EQ(got[0].algoId, 0);
  EXPECT_EQ(got[1].algoId, 1);
  EXPECT_EQ(got[2].algoId, 0);

  // Excluded keys (the heuristic's) are skipped without a check.
  calls = 0;
  st = GemmEnumStats();
  GemmAlgoConfig heur = cfg(0, 1);
  heur.innerShape = CUBLASLT_MATMUL_INNER_SHAPE_MMA1688;
  got = selectCandidates({perId[0]}, {heur}, 2, accept, -1, &st);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], cfg(0, 2));
  EXPECT_EQ(got[1], cfg(0, 3));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(st.duplicates, 1);

  // The check budget.
  calls = 0;
  got = selectCandidates(perId, {}, 100, accept, 5);
  EXPECT_EQ(calls, 5);
  // Per-turn scan limit: id 2 (nothing valid) gives up its turn after 2
  // checks instead of scanning its whole list before id 0's second turn.
  calls = 0;
  std::vector<GemmAlgoConfig> order;
  auto log = [&](const GemmAlgoConfig &c) {
    order.push_back(c);
    return accept(c);
  };
  got = selectCandidates({perId[2], perId[0]}, {}, 2, log, -1, nullptr, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1], cfg(0, 2));
  ASSERT_EQ(order.size(), 2u + 1 + 2 + 1);
  EXPECT_EQ(order[2], cfg(0, 1));
  EXPECT_EQ(order[3], cfg(2, 3)); // the next turn goes on where it stopped
  // Nothing to do.
  EXPECT_TRUE(selectCandidates(perId, {}, 0, accept).empty());
  EXPECT_TRUE(selectCandidates({}, {}, 10, accept).empty());
}

TEST(GemmAlgorithms, SweepSummary) {
  std::vector<GemmAlgorithm> algos(4);
  for (size_t i = 0; i < algos.size(); ++i)
    algos[i].description = "a" + std::to_string(i);
  algos[0].source = algos[1].source = GemmAlgoSource::Heuristic;
  algos[0].heuristicRank = 0;
  algos[1].heuristicRank = 1;
  AlgorithmSweep s;
  summarizeAlgorithmSweep(algos, {10, 12, 8, 0}, s);
  EXPECT_EQ(s.tried, 4);
  EXPECT_EQ(s.heuristic, 2);
  EXPECT_EQ(s.enumerated, 2);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.heuristicUs, 10);
  EXPECT_EQ(s.heuristicAlgorithm, "a0");
  EXPECT_EQ(s.bestIndex, 2);
  EXPECT_EQ(s.bestUs, 8);
  EXPECT_EQ(s.bestAlgorithm, "a2");
  EXPECT_FALSE(s.bestIsHeuristic);
  // Ties go to the earlier entry; the heuristic's best may fail.
  summarizeAlgorithmSweep(algos, {0, 9, 9, std::nan("")}, s);
  EXPECT_EQ(s.errors, 2);
  EXPECT_EQ(s.heuristicUs, 0);
  EXPECT_EQ(s.bestIndex, 1);
  EXPECT_TRUE(s.bestIsHeuristic);
  // Nothing ran.
  summarizeAlgorithmSweep(algos, {}, s);
  EXPECT_EQ(s.errors, 4);
  EXPECT_EQ(s.bestIndex, -1);
  EXPECT_EQ(s.bestUs, 0);
  EXPECT_TRUE(s.bestAlgorithm.empty());
}

TEST(GemmAlgorithms, TextFormRoundTripsEveryField) {
  GemmAlgoConfig c;
  c.algoId = 66;
  c.tile = 18;
  c.stages = 22;
  c.splitK = 4;
  c.reduction = 2;
  c.swizzle = 1;
  c.customOption = 3;
  c.innerShape = 5;
  c.clusterShape = 2;
  std::string text = serializeAlgorithm(c);
  EXPECT_EQ(text, "cublaslt id=66 tile=18 stages=22 splitk=4 reduction=2 swizzle=1 custom=3 "
                  "inner=5 cluster=2");
  GemmAlgoConfig back;
  std::string error;
  ASSERT_TRUE(parseAlgorithm(text, back, error)) << error;
  EXPECT_EQ(back, c);
  EXPECT_EQ(back.innerShape, 5); // operator== compares it too
  // Each field is read from its own place: change one, only it differs.
  for (int field = 0; field < 9; ++field) {
    GemmAlgoConfig planted = c;
    uint32_t *u[] = {nullptr, &planted.tile, &planted.stages, nullptr, &planted.reduction,
                     &planted.swizzle, &planted.customOption};
    if (field == 0) planted.algoId += 1;
    else if (field == 3) planted.splitK += 1;
    else if (field == 7) planted.innerShape += 1;
    else if (field == 8) planted.clusterShape += 1;
    else *u[field] += 1;
    ASSERT_TRUE(parseAlgorithm(serializeAlgorithm(planted), back, error)) << error;
    EXPECT_EQ(back, planted) << field;
    EXPECT_NE(back, c) << field;
  }
}

TEST(GemmAlgorithms, TextFormRejectionsNameTheField) {
  GemmAlgoConfig out;
  out.algoId = 9;
  std::string error;
  struct Case {
    const char *text, *message;
  } cases[] = {
      {"heuristic", "expected \"heuristic\" or \"cublaslt id=N"},
      {"", "expected \"heuristic\" or"},
      {"cublaslt id=1 tile=2", "expected 9 fields, got 2"},
      {"cublaslt id=1 tile=2 stages=3 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 shape=0",
       "field 9 is \"shape=0\", expected cluster=N"},
      {"cublaslt id=-1 tile=2 stages=3 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 cluster=0",
       "id is \"-1\", expected an integer in [0, 2147483647]"},
      {"cublaslt id=1 tile=2 stages=3 splitk=0 reduction=0 swizzle=0 custom=0 inner=0 cluster=0",
       "splitk is \"0\", expected an integer in [1, "},
      {"cublaslt id=1 tile=2 stages=3 splitk=1 reduction=0 swizzle=0 custom=0 inner=70000 "
       "cluster=0",
       "inner is \"70000\", expected an integer in [0, 65535]"},
      {"cublaslt id=1 tile=2x stages=3 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 cluster=0",
       "tile is \"2x\""},
  };
  for (const Case &c : cases) {
    error.clear();
    EXPECT_FALSE(parseAlgorithm(c.text, out, error)) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.text << "\n" << error;
    EXPECT_EQ(out.algoId, 9) << "a failed parse leaves the output alone";
  }
}

TEST(GemmAlgorithms, SweepSummaryNeverPicksARejectedAlgorithm) {
  std::vector<GemmAlgorithm> algos(3);
  for (size_t i = 0; i < algos.size(); ++i)
    algos[i].description = "a" + std::to_string(i);
  algos[0].source = GemmAlgoSource::Heuristic;
  algos[0].heuristicRank = 0;
  AlgorithmSweep s;
  // a2 is fastest but its output was wrong; a1 is the best that passed.
  summarizeAlgorithmSweep(algos, {10, 9, 5}, s, {false, false, true});
  EXPECT_EQ(s.rejected, 1);
  EXPECT_EQ(s.errors, 0);
  EXPECT_EQ(s.bestIndex, 1);
  EXPECT_EQ(s.bestUs, 9);
  // Without the flags it would have been a2.
  summarizeAlgorithmSweep(algos, {10, 9, 5}, s);
  EXPECT_EQ(s.bestIndex, 2);
  EXPECT_EQ(s.rejected, 0);
  // Every one rejected: none is the best.
  summarizeAlgorithmSweep(algos, {10, 9, 5}, s, {true, true, true});
  EXPECT_EQ(s.bestIndex, -1);
  EXPECT_EQ(s.rejected, 3);
}

TEST(GemmAlgorithms, TileShapes) {
  int r = 0, c = 0;
  ASSERT_TRUE(tileShape(CUBLASLT_MATMUL_TILE_128x256, r, c));
  EXPECT_EQ(r, 128);
  EXPECT_EQ(c, 256);
  ASSERT_TRUE(tileShape(CUBLASLT_MATMUL_TILE_64x128, r, c));
  EXPECT_EQ(r, 64);
  EXPECT_EQ(c, 128);
  EXPECT_FALSE(tileShape(CUBLASLT_MATMUL_TILE_UNDEFINED, r, c));
  EXPECT_FALSE(tileShape(999999u, r, c)); // "tile#999999"
}

TEST(GemmAlgorithms, CostModelCountsWavesPaddingFeedAndSplitK) {
  GemmDescriptor g;
  g.m = 4096;
  g.n = 4096;
  g.k = 1024;
  g.batchCount = 1;
  GemmAlgoConfig big, small, split;
  big.tile = CUBLASLT_MATMUL_TILE_256x128;
  small.tile = CUBLASLT_MATMUL_TILE_128x128;
  split = small;
  split.splitK = 2;
  GemmModelRates r;
  r.sms = 132;
  r.flopsPerSm = 1e12;
  r.reduceBytes = 4e12;
  r.elementBytes = 2;
  // Without a feed rate: 256x128 tiles, 512 of them, one per SM at a time:
  // 4 waves of 2*256*128*1024 flop.
  EXPECT_DOUBLE_EQ(modelAlgorithmUs(g, big, 0, r), 4 * 2.0 * 256 * 128 * 1024 / 1e12 * 1e6);
  // cuBLASLt's waves: 2 tiles share an SM in each of ceil(1.94) = 2 waves.
  const double w = 512.0 / (2 * 132);
  EXPECT_NEAR(modelAlgorithmUs(g, big, w, r), 2 * (512 / (132 * w)) * 2.0 * 256 * 128 * 1024 / 1e12 * 1e6,
              1e-9);
  // m = 4224 (33 x 128) pads the 256-row tiles: 17 x 32 tiles in 5 waves of
  // the whole flop against 33 x 32 in 8 waves of half of it.
  g.m = 4224;
  EXPECT_GT(modelAlgorithmUs(g, big, 0, r), modelAlgorithmUs(g, small, 0, r));
  g.m = 4096;
  // A feed rate that starves both tiles: the small one moves 256 operand
  // elements (2 bytes) per k for 32768 flop, the big one 384 for 65536.
  r.feedBytesPerSm = 1e10;
  const double smallFed = 8 * 256.0 * 1024 * 2 / 1e10 * 1e6,
               bigFed = 4 * 384.0 * 1024 * 2 / 1e10 * 1e6;
  EXPECT_DOUBLE_EQ(modelAlgorithmUs(g, small, 0, r), smallFed);
  EXPECT_DOUBLE_EQ(modelAlgorithmUs(g, big, 0, r), bigFed);
  EXPECT_GT(smallFed, bigFed); // the big tile's reuse wins
  r.feedBytesPerSm = 0;
  // Split-k: twice the tiles of half the depth, plus its fp32 reduction.
  double waves = std::ceil(2048.0 / 132);
  EXPECT_DOUBLE_EQ(modelAlgorithmUs(g, split, 0, r),
                   waves * 2.0 * 128 * 128 * 512 / 1e12 * 1e6 + 2.0 * 4096 * 4096 * 2 * 4 / 4e12 * 1e6);
  // An unknown tile or a missing rate is not modelled.
  GemmAlgoConfig unknown;
  EXPECT_LT(modelAlgorithmUs(g, unknown, 0, r), 0);
  r.flopsPerSm = 0;
  EXPECT_LT(modelAlgorithmUs(g, big, 0, r), 0);
}

TEST(GemmAlgorithms, SpearmanRankCorrelation) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Monotone, not linear: still 1.
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {1, 8, 27, 1000}), 1.0);
  // Ties take their average rank: ranks (1.5, 1.5, 3) against (1, 2, 3).
  EXPECT_NEAR(spearman({5, 5, 9}, {1, 2, 3}), 0.8660254037844386, 1e-12);
  EXPECT_TRUE(std::isnan(spearman({1}, {1})));
  EXPECT_TRUE(std::isnan(spearman({2, 2, 2}, {1, 2, 3}))); // a constant side
  // Planted: one swapped pair is not a perfect correlation.
  EXPECT_LT(spearman({1, 2, 3, 4, 5}, {1, 2, 4, 3, 5}), 1.0);
}

TEST(GemmAlgorithms, PruningKeepsTheDefaultAndTheModelsCheapest) {
  // Entry 0 (the heuristic's best) always; then the lowest priced; an
  // unpriced entry (-1) after every priced one; indices ascending.
  std::vector<double> model = {50, 40, -1, 10, 30, 20};
  EXPECT_EQ(pruneByModel(model, 3), (std::vector<size_t>{0, 3, 5}));
  EXPECT_EQ(pruneByModel(model, 5), (std::vector<size_t>{0, 1, 3, 4, 5}));
  EXPECT_EQ(pruneByModel(model, 1), (std::vector<size_t>{0}));
  // Everything: keep 0 (exhaustive) or at least the size.
  EXPECT_EQ(pruneByModel(model, 0).size(), model.size());
  EXPECT_EQ(pruneByModel(model, 6).size(), model.size());
  // Ties go to the earlier entry.
  EXPECT_EQ(pruneByModel({9, 5, 5, 5}, 3), (std::vector<size_t>{0, 1, 2}));
  // Planted: the model's order reversed keeps the other end.
  std::vector<double> reversed = {50, -40, 1, -10, -30, -20};
  for (double &m : reversed)
    m = m < 0 ? 100 + m : m;
  EXPECT_NE(pruneByModel(reversed, 3), pruneByModel(model, 3));
}

TEST(GemmAlgorithms, ModelSweepRanksThePassingEntries) {
  GemmDescriptor g;
  g.m = g.n = 2048;
  g.k = 512;
  g.batchCount = 1;
  DeviceInfo info;
  info.smCount = 100;
  info.copyGBs = 3000;
  AlgorithmSweep s;
  auto entry = [](uint32_t tile, int splitK, double us, bool pass) {
    GemmAlgoConfig c;
    c.algoId = 66;
    c.tile = tile;
    c.splitK = splitK;
    AlgorithmRun r;
    r.algorithm = serializeAlgorithm(c);
    r.medianUs = us;
    r.pass = pass;
    return r;
  };
  // On 100 SMs the model orders 64x64 (1024 tiles: 11 waves of 4096 x 2k
  // flop) < 128x128 (3 waves of 16384 x 2k) < 256x256 (1 wave of 65536 x
  // 2k); measured in that order. A failed entry is not modelled.
  s.runs = {entry(CUBLASLT_MATMUL_TILE_64x64, 1, 10, true),
            entry(CUBLASLT_MATMUL_TILE_128x128, 1, 11, true),
            entry(CUBLASLT_MATMUL_TILE_256x256, 1, 12, true),
            entry(CUBLASLT_MATMUL_TILE_64x64, 1, 1, false)};
  modelSweep(g, 2 * g.m * g.n * g.k, 2, info, s);
  EXPECT_EQ(s.modelled, 3);
  EXPECT_DOUBLE_EQ(s.modelRho, 1.0);
  EXPECT_LT(s.runs[0].modelUs, s.runs[1].modelUs);
  EXPECT_LT(s.runs[3].modelUs, 0);
  EXPECT_EQ(s.bestModelRank, 1); // the measured fastest is the model's first
  // Planted: the measured order reversed gives -1, the fastest last.
  std::swap(s.runs[0].medianUs, s.runs[2].medianUs);
  modelSweep(g, 2 * g.m * g.n * g.k, 2, info, s);
  EXPECT_DOUBLE_EQ(s.modelRho, -1.0);
  EXPECT_EQ(s.bestModelRank, 3);
}
