//===- StepCheckTest.cpp - the whole-step comparison catches planted faults ===//
#include "runtime/format/device/Float16.h"
#include "runtime/StepCheck.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace dmrt;

namespace {

double bf16(double v) { return bf16ToFloat(floatToBf16(static_cast<float>(v))); }

/// exact: a smooth tensor; ref: it in bf16; got: ref one bf16 ulp off at
/// every other element (another bf16 computation of the same thing).
struct Data {
  std::vector<double> exact, ref, got;
  Data() {
    for (int e = 0; e < 512; ++e) {
      double v = std::sin(0.37 * e) * (1 + e % 7);
      exact.push_back(v);
      ref.push_back(bf16(v));
      // (ilogb(0) is INT_MIN: element 0 is 0 and stays exact.)
      double ulp = ref.back() == 0 ? 0 : std::ldexp(1.0, std::ilogb(ref.back()) - 7);
      got.push_back(e % 2 ? bf16(ref.back() + ulp) : ref.back());
    }
  }
};

TEST(StepCheck, AnotherBf16ComputationPasses) {
  Data d;
  EXPECT_TRUE(checkTensor("t", d.ref, d.got, &d.exact, {}).pass);
  EXPECT_TRUE(checkTensor("t", d.ref, d.got, nullptr, {}).pass);
}

TEST(StepCheck, PlantedFaultsAreReported) {
  Data d;
  std::vector<double> scaled = d.got, zeroed(d.got.size(), 0.0), one = d.got;
  for (double &v : scaled)
    v *= 1.25;
  one[100] = -one[100]; // a single wrong element (|ref| well above atol)
  ASSERT_GT(std::fabs(d.ref[100]), 1.0);
  for (const auto *bad : {&scaled, &zeroed, &one}) {
    TensorCheck c = checkTensor("t", d.ref, *bad, &d.exact, {});
    EXPECT_FALSE(c.pass) << describeCheck(c);
    EXPECT_GT(c.maxRatio, 1.0);
  }
  EXPECT_EQ(checkTensor("t", d.ref, one, &d.exact, {}).worstIndex, 100);
}

TEST(StepCheck, NonFiniteAndUnwrittenElementsFail) {
  Data d;
  std::vector<double> got = d.got;
  got[7] = std::numeric_limits<double>::quiet_NaN(); // an element no step wrote
  TensorCheck c = checkTensor("t", d.ref, got, &d.exact, {});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.worstIndex, 7);
  EXPECT_TRUE(std::isinf(c.maxRatio));
}

TEST(StepCheck, ZeroAgainstZeroNeverPasses) {
  std::vector<double> zeros(16, 0.0);
  TensorCheck c = checkTensor("t", zeros, zeros, nullptr, {});
  EXPECT_TRUE(c.zeroReference);
  EXPECT_FALSE(c.pass);
  EXPECT_FALSE(checkTensor("t", zeros, std::vector<double>(15, 0.0), nullptr, {}).pass);
}

TEST(StepCheck, RoundingNoiseOfAZeroGradientPassesOnlyWithItsExactValue) {
  // A gradient that is zero in exact arithmetic (the key bias's): both runs
  // hold rounding noise of the same size, unrelated elementwise.
  std::vector<double> exact(64, 0.0), ref, got;
  for (int e = 0; e < 64; ++e) {
    ref.push_back(bf16(1e-3 * std::sin(1.1 * e)));
    got.push_back(bf16(1e-3 * std::cos(0.7 * e)));
  }
  EXPECT_TRUE(checkTensor("bk.grad", ref, got, &exact, {}).pass);
  EXPECT_FALSE(checkTensor("bk.grad", ref, got, nullptr, {}).pass);
}

} // namespace
