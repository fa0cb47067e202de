//===- PhiloxTest.cpp - Philox4x32-10 and the dropout mask ----------------===//
#include "runtime/format/device/Philox.h"

#include <gtest/gtest.h>

#include <vector>

#include <cmath>

using namespace dmrt;

namespace {

struct Kat {
  uint32_t ctr[4];
  uint32_t key[2];
  uint32_t expect[4];
};

// Known-answer vectors for philox4x32_10 from Random123's kat_vectors.
const Kat kKats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(Philox, KnownAnswerVectors) {
  for (const Kat &k : kKats) {
    uint32_t out[4];
    philox4x32_10(k.ctr, k.key, out);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out[i], k.expect[i]) << "word " << i << " of ctr " << std::hex
                                     << k.ctr[0];
  }
}

TEST(Philox, DropoutWordFollowsCounterLayout) {
  // Element n = 8*b + j reads half j % 2 (low half for even j) of word j / 2
  // of the block with counter {lo32(b), hi32(b), opId, "drop"} and key
  // {lo32(seed), hi32(seed)}.
  const uint64_t seed = 0x0123456789abcdefull;
  const uint32_t opId = 7;
  const uint64_t b = 0x0000000500000003ull;
  uint32_t ctr[4] = {3, 5, opId, 0x64726f70};
  uint32_t key[2] = {0x89abcdef, 0x01234567};
  uint32_t out[4];
  philox4x32_10(ctr, key, out);
  for (uint32_t j = 0; j < 8; ++j)
    EXPECT_EQ(dropoutWord(seed, opId, 8 * b + j), (out[j / 2] >> (16 * (j % 2))) & 0xFFFFu) << j;
  // Planted: another group, another half.
  EXPECT_NE(dropoutWord(seed, opId, 8 * b + 8), out[0] & 0xFFFFu);
  EXPECT_NE(dropoutWord(seed, opId, 8 * b), out[0] >> 16);
}

TEST(Philox, Threshold) {
  EXPECT_EQ(dropoutThreshold(0.0), 0u);
  EXPECT_EQ(dropoutThreshold(-0.5), 0u);
  EXPECT_EQ(dropoutThreshold(0.5), 0x8000u);
  EXPECT_EQ(dropoutThreshold(0.1), static_cast<uint32_t>(std::floor(0.1 * 65536.0)));
  EXPECT_EQ(dropoutThreshold(0.1), 6553u);
  EXPECT_EQ(dropoutThreshold(0.25), 0x4000u);
  EXPECT_EQ(dropoutThreshold(0.99999), 65535u);
  EXPECT_EQ(dropoutThreshold(1.0), 0xFFFFu); // clamped (p must be < 1)
}

double keepRate(uint64_t seed, uint32_t opId, double p, uint64_t count) {
  uint32_t t = dropoutThreshold(p);
  uint64_t kept = 0;
  for (uint64_t n = 0; n < count; ++n)
    kept += dropoutKeep(seed, opId, n, t);
  return static_cast<double>(kept) / static_cast<double>(count);
}

TEST(Philox, KeepRateMatchesProbability) {
  const uint64_t count = 1000000;
  EXPECT_NEAR(keepRate(42, 1, 0.1, count), 0.9, 0.01);
  EXPECT_NEAR(keepRate(42, 2, 0.5, count), 0.5, 0.01);
  EXPECT_NEAR(keepRate(0xdeadbeefcafef00dull, 3, 0.5, count), 0.5, 0.01);
  EXPECT_EQ(keepRate(42, 1, 0.0, count), 1.0);
}

/// Fraction of elements on which two masks agree; for independent masks with
/// keep rate q this is q^2 + (1-q)^2.
double agreement(uint64_t seedA, uint32_t opA, uint64_t seedB, uint32_t opB,
                 double p, uint64_t count) {
  uint32_t t = dropoutThreshold(p);
  uint64_t same = 0;
  for (uint64_t n = 0; n < count; ++n)
    same += dropoutKeep(seedA, opA, n, t) == dropoutKeep(seedB, opB, n, t);
  return static_cast<double>(same) / static_cast<double>(count);
}

TEST(Philox, MasksAreIndependentAcrossOpsAndSeeds) {
  const uint64_t count = 200000;
  for (double p : {0.1, 0.5}) {
    double q = 1.0 - p;
    double independent = q * q + p * p;
    EXPECT_NEAR(agreement(1, 0, 1, 1, p, count), independent, 0.01) << p;
    EXPECT_NEAR(agreement(1, 5, 2, 5, p, count), independent, 0.01) << p;
    EXPECT_NEAR(agreement(1ull << 32, 5, 1, 5, p, count), independent, 0.01)
        << p; // the high seed word matters
    EXPECT_EQ(agreement(9, 3, 9, 3, p, 1000), 1.0); // deterministic
  }
}

TEST(Philox, HighIndexBitsMatter) {
  // Elements 2^35 apart differ only in hi32(n >> 3).
  const uint64_t count = 100000, far = 1ull << 35;
  uint32_t t = dropoutThreshold(0.5);
  uint64_t same = 0;
  for (uint64_t n = 0; n < count; ++n)
    same += dropoutKeep(7, 1, n, t) == dropoutKeep(7, 1, n + far, t);
  EXPECT_NEAR(static_cast<double>(same) / count, 0.5, 0.01);
}

TEST(Philox, OneCallServesEightConsecutiveElements) {
  // Kernels draw a group with dropoutWords; the interpreter draws each element.
  for (uint64_t group : {0ull, 1ull, 12345ull, (1ull << 33) + 7}) {
    uint32_t words[4];
    dropoutWords(99, 3, group, words);
    for (unsigned k = 0; k < kDropoutGroup; ++k)
      EXPECT_EQ(dropoutHalf(words, k), dropoutWord(99, 3, 8 * group + k)) << "group " << group;
  }
}

TEST(Philox, SixteenBitDrawsAreUniform) {
  // Each 16-bit draw's high byte: 256 bins of 2^20 draws, chi-square with 255
  // degrees of freedom well under its 0.999 quantile (330.5).
  std::vector<uint64_t> bins(256, 0);
  const uint64_t count = 1 << 20;
  for (uint64_t n = 0; n < count; ++n)
    ++bins[dropoutWord(5, 2, n) >> 8];
  double chi2 = 0, expect = double(count) / 256;
  for (uint64_t b : bins)
    chi2 += (double(b) - expect) * (double(b) - expect) / expect;
  EXPECT_LT(chi2, 330.5);
  // Planted: one bin inflated by 1/64 of the draws is caught.
  std::vector<uint64_t> bad(bins);
  bad[0] += count / 64;
  double chi2bad = 0;
  for (uint64_t b : bad)
    chi2bad += (double(b) - expect) * (double(b) - expect) / expect;
  EXPECT_GT(chi2bad, 330.5);
}

} // namespace
