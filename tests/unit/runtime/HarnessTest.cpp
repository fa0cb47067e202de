//===- HarnessTest.cpp - CPU parts of the GPU harness ---------------------===//
#include "runtime/Harness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace dmrt;

namespace {

TEST(HarnessInputs, DeterministicAndInRange) {
  auto a = makeInput(42, 3, DType::F32, 1000);
  auto b = makeInput(42, 3, DType::F32, 1000);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, makeInput(43, 3, DType::F32, 1000)); // other seed
  EXPECT_NE(a, makeInput(42, 4, DType::F32, 1000)); // other tensor
  Tensor t;
  t.dtype = DType::F32;
  t.shape = {1000};
  t.bytes = a;
  std::vector<double> v = toDoubles(t);
  double lo = 1, hi = -1, sum = 0;
  for (double x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LE(hi, 1.0);
  EXPECT_LT(lo, -0.9); // spread over the whole range
  EXPECT_GT(hi, 0.9);
  EXPECT_LT(std::fabs(sum / v.size()), 0.1);
  // A prefix of a longer tensor is the shorter tensor (index-addressed).
  auto longer = makeInput(42, 3, DType::F32, 1003);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), longer.begin()));
}

TEST(HarnessInputs, DTypesRoundTheSameValues) {
  auto bf = makeInput(7, 1, DType::BF16, 64);
  ASSERT_EQ(bf.size(), 128u);
  Tensor t;
  t.dtype = DType::BF16;
  t.shape = {64};
  t.bytes = bf;
  std::vector<double> v = toDoubles(t);
  for (int i = 0; i < 64; ++i) {
    double exact = inputValue(7, 1, DType::BF16, i);
    EXPECT_NEAR(v[i], exact, 1.0 / 128) << i;
    EXPECT_LE(std::fabs(v[i]), 1.0);
  }
  EXPECT_EQ(makeInput(7, 1, DType::F16, 64).size(), 128u);
}

TEST(HarnessInputs, Integers) {
  auto bytes = makeInput(5, 2, DType::I32, 2000, 512);
  Tensor t;
  t.dtype = DType::I32;
  t.shape = {2000};
  t.bytes = bytes;
  std::vector<double> v = toDoubles(t);
  double lo = 1e9, hi = 0;
  for (double x : v) {
    EXPECT_EQ(x, std::floor(x));
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 512);
  for (double x : toDoubles(Tensor{"", DType::I32, {100},
                                   makeInput(5, 2, DType::I32, 100, 1)}))
    EXPECT_EQ(x, 1);
}

TEST(HarnessCompare, ElementwiseBoundFollowsTheTensorsScale) {
  std::vector<double> ref = {0.5, -2.0, 4.0, 0.0};
  // RMS = sqrt((0.25 + 4 + 16) / 4) = 2.25; atol = 0.01 * 2.25.
  Comparison c = compareOutput(ref, {0.5, -2.0, 4.06, 0.0}, 1e-2);
  EXPECT_NEAR(c.scale, 2.25, 1e-12);
  EXPECT_NEAR(c.atol, 0.0225, 1e-12);
  EXPECT_NEAR(c.maxAbsErr, 0.06, 1e-12);
  EXPECT_EQ(c.maxAbsRef, 4.0);
  EXPECT_TRUE(c.pass) << describeComparison(c); // 0.06 <= 0.0225 + 0.04
  EXPECT_EQ(c.worstIndex, 2);
  EXPECT_NEAR(c.worstBound, 0.0625, 1e-12);
  c = compareOutput(ref, {0.5, -2.0, 4.07, 0.0}, 1e-2);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.failing, 1);
  EXPECT_EQ(c.worstRef, 4.0);
  EXPECT_EQ(c.worstGot, 4.07);
  // Near zero the bound is atol, not rtol * |ref|: 0 -> 0.02 passes, 0.03 not.
  EXPECT_TRUE(compareOutput(ref, {0.5, -2.0, 4.0, 0.02}, 1e-2).pass);
  c = compareOutput(ref, {0.5, -2.0, 4.0, 0.03}, 1e-2);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.worstIndex, 3);
  EXPECT_NE(describeComparison(c).find("element 3"), std::string::npos)
      << describeComparison(c);
  // Small references get small bounds (no fixed 1): 0.001 vs 0.011 fails.
  c = compareOutput({0.001, 0.002}, {0.011, 0.002}, 1e-2);
  EXPECT_LT(c.atol, 1e-4);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(defaultTolerance(DType::BF16), 1.0 / 128);
  EXPECT_EQ(defaultTolerance(DType::F16), 1.0 / 512);
  EXPECT_EQ(defaultTolerance(DType::F32), 1e-4);
  EXPECT_EQ(defaultTolerance(DType::I32), 0);
}

TEST(HarnessCompare, ZeroReferenceIsReportedNotPassed) {
  Comparison c = compareOutput({0, 0, 0, 0}, {0, 0, 0, 0}, 1e-2);
  EXPECT_TRUE(c.zeroReference);
  EXPECT_FALSE(c.pass);
  EXPECT_NE(describeComparison(c).find("all zeros"), std::string::npos);
  // Integers (rtol 0) compare exactly.
  EXPECT_TRUE(compareOutput({1, 2, 3}, {1, 2, 3}, 0).pass);
  EXPECT_FALSE(compareOutput({1, 2, 3}, {1, 2, 4}, 0).pass);
}

TEST(HarnessCompare, NonFiniteAndSizes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Comparison c = compareOutput({1.0, 2.0}, {1.0, nan}, 0.5);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.nonFinite, 1);
  EXPECT_EQ(c.worstIndex, 1);
  // NaN or inf in the reference must be matched.
  EXPECT_TRUE(compareOutput({nan, inf, 1}, {nan, inf, 1}, 0).pass);
  EXPECT_FALSE(compareOutput({nan}, {0.0}, 1).pass);
  EXPECT_FALSE(compareOutput({inf}, {-inf}, 1).pass);
  c = compareOutput({1, 2, 3}, {1, 2}, 1);
  EXPECT_TRUE(c.sizeMismatch);
  EXPECT_FALSE(c.pass);
  EXPECT_TRUE(compareOutput({}, {}, 0).pass);
}

TEST(HarnessTiming, MedianMin) {
  TimingStats s = summarizeTimes({5, 1, 3});
  EXPECT_EQ(s.medianUs, 3);
  EXPECT_EQ(s.minUs, 1);
  EXPECT_EQ(s.maxUs, 5);
  EXPECT_EQ(s.reps, 3);
  s = summarizeTimes({4, 1, 3, 2});
  EXPECT_EQ(s.medianUs, 2.5);
  EXPECT_EQ(summarizeTimes({}).reps, 0);
}

TEST(HarnessParse, U64) {
  uint64_t v;
  EXPECT_TRUE(parseU64("0", v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(parseU64("18446744073709551615", v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_FALSE(parseU64("18446744073709551616", v));
  EXPECT_FALSE(parseU64("-1", v));
  EXPECT_FALSE(parseU64("12x", v));
  EXPECT_FALSE(parseU64("", v));
}

} // namespace
