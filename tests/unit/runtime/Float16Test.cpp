//===- Float16Test.cpp - bf16 / binary16 conversions ----------------------===//
#include "runtime/format/device/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace dmrt;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Half, ExactValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(0.5f), 0x3800);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF); // max half
  EXPECT_EQ(floatToHalf(6.103515625e-05f), 0x0400); // min normal 2^-14
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
}

TEST(Half, Subnormals) {
  const float minSub = std::ldexp(1.0f, -24);
  EXPECT_EQ(floatToHalf(minSub), 0x0001);
  EXPECT_EQ(floatToHalf(-minSub), 0x8001);
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03FF); // max subnormal
  EXPECT_EQ(halfToFloat(0x0001), minSub);
  EXPECT_EQ(halfToFloat(0x03FF), std::ldexp(1023.0f, -24));
  // Half of the smallest subnormal is a tie: rounds to even (zero).
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  // Just above the tie rounds up.
  EXPECT_EQ(floatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  // 1.5 * 2^-24 ties to 2 (even), 2.5 * 2^-24 ties to 2.
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(floatToHalf(std::ldexp(5.0f, -25)), 0x0002);
  // Rounding up from the max subnormal reaches the min normal.
  EXPECT_EQ(floatToHalf(std::ldexp(1023.5f, -24)), 0x0400);
  // Far below the range, and float subnormals: signed zero.
  EXPECT_EQ(floatToHalf(1e-30f), 0x0000);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(Half, RoundingTies) {
  // Half ulp at 1.0 is 2^-10; 1 + 2^-11 is a tie -> 1.0 (even).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3*2^-11 is a tie between 0x3C01 and 0x3C02 -> 0x3C02 (even).
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Slightly above a tie rounds up.
  EXPECT_EQ(floatToHalf(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
            0x3C01);
  // Carry of the mantissa into the exponent: 2 - 2^-12 -> 2.0.
  EXPECT_EQ(floatToHalf(2.0f - std::ldexp(1.0f, -12)), 0x4000);
}

TEST(Half, OverflowInfNaN) {
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF);  // below the tie
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);  // tie with 65536 -> inf (even)
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(floatToHalf(-1e6f), 0xFC00);
  EXPECT_EQ(floatToHalf(kInf), 0x7C00);
  EXPECT_EQ(floatToHalf(-kInf), 0xFC00);
  uint16_t n = floatToHalf(kNaN);
  EXPECT_EQ(n, 0x7FFF); // canonical, as the GPU's cvt.rn.f16.f32
  EXPECT_EQ(n & 0x7C00, 0x7C00);
  EXPECT_NE(n & 0x03FF, 0);
  // A NaN whose payload sits only in the low bits must not become inf.
  EXPECT_NE(floatToHalf(bitsToFloat(0x7F800001u)) & 0x03FF, 0);
  EXPECT_TRUE(std::isinf(halfToFloat(0x7C00)));
  EXPECT_TRUE(std::isinf(halfToFloat(0xFC00)) && halfToFloat(0xFC00) < 0);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7C01)));
}

TEST(Half, RoundTripAllHalves) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToHalf(f), h) << std::hex << h;
  }
}

TEST(Bf16, Conversions) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBf16(-2.0f), 0xC000);
  EXPECT_EQ(floatToBf16(0.0f), 0x0000);
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
  EXPECT_EQ(bf16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0x4049), 3.140625f);
  EXPECT_EQ(floatToBf16(3.14159265f), 0x4049);
  // Ties: 1 + 2^-8 -> 1.0 (even); 1 + 3*2^-8 -> 1 + 2^-6 (0x3F82).
  EXPECT_EQ(floatToBf16(bitsToFloat(0x3F808000u)), 0x3F80);
  EXPECT_EQ(floatToBf16(bitsToFloat(0x3F818000u)), 0x3F82);
  EXPECT_EQ(floatToBf16(bitsToFloat(0x3F808001u)), 0x3F81);
  // Overflow rounds to inf; inf stays inf.
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(floatToBf16(kInf), 0x7F80);
  EXPECT_EQ(floatToBf16(-kInf), 0xFF80);
  // NaN stays NaN, even with only low payload bits: the canonical 0x7FFF,
  // as the GPU's cvt.rn.bf16.f32 gives.
  EXPECT_EQ(floatToBf16(kNaN), 0x7FFF);
  EXPECT_EQ(floatToBf16(bitsToFloat(0xFFC00001u)), 0x7FFF);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(kNaN))));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(bitsToFloat(0x7F800001u)))));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(bitsToFloat(0xFFFFFFFFu)))));
  // Subnormals keep their top bits.
  EXPECT_EQ(floatToBf16(bitsToFloat(0x00010000u)), 0x0001);
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float f = bf16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToBf16(f), h) << std::hex << h;
  }
}

} // namespace
