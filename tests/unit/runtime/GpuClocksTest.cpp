//===- GpuClocksTest.cpp - dmc-run's clock summary -------------------------===//
#include "runtime/tools/GpuClocks.h"

#include <gtest/gtest.h>

using namespace dmrt;

namespace {

std::vector<ClockSample> samples(std::initializer_list<unsigned> mhz, uint64_t reasons,
                                 unsigned mw = 690000) {
  std::vector<ClockSample> v;
  for (unsigned m : mhz)
    v.push_back({m, mw, reasons});
  return v;
}

} // namespace

TEST(GpuClocks, SummaryOfPowerCappedSamples) {
  // gpt2-medium's steps on an H200: 1710-1845 MHz at 690 W of 700 W.
  std::vector<ClockSample> v = samples({1755, 1710, 1845, 1770, 1755}, kClockSwPowerCap);
  v.push_back({0, 0, 0}); // a failed read is left out
  v.push_back({1980, 130000, 0});
  ClockSummary s = summarizeClocks(v, 1980, 700000);
  EXPECT_EQ(s.samples, 6);
  EXPECT_EQ(s.medianMhz, 1763u); // (1755 + 1770) / 2, rounded
  EXPECT_EQ(s.minMhz, 1710u);
  EXPECT_EQ(s.highestMhz, 1980u);
  EXPECT_DOUBLE_EQ(s.powerW, 690.0);
  EXPECT_DOUBLE_EQ(s.limitW, 700.0);
  EXPECT_DOUBLE_EQ(s.powerCapped, 5.0 / 6);
  EXPECT_DOUBLE_EQ(s.thermal, 0.0);
  EXPECT_TRUE(clocksLowered(s));
  EXPECT_EQ(describeClocks(s), "SM clock median 1763 MHz (1710-1980; maximum 1980), power "
                               "690 W of 700 W (the driver's 1 s average), power-capped in 83% of 6 samples");
}

TEST(GpuClocks, LoweredOnlyWithAReasonAndALowerClock) {
  // Capped for a moment at full clock: not lowered.
  EXPECT_FALSE(clocksLowered(summarizeClocks(samples({1980, 1980, 1965}, kClockSwPowerCap),
                                             1980, 700000)));
  // Idle clock without a reason (between runs): not lowered.
  EXPECT_FALSE(clocksLowered(summarizeClocks(samples({345, 345, 345}, 0), 1980, 700000)));
  // Thermal slowdown counts, and says so.
  ClockSummary t = summarizeClocks(samples({1800, 1790}, kClockSwThermal), 1980, 0);
  EXPECT_TRUE(clocksLowered(t));
  EXPECT_DOUBLE_EQ(t.thermal, 1.0);
  EXPECT_EQ(describeClocks(t), "SM clock median 1795 MHz (1790-1800; maximum 1980), power 690 W "
                               "(the driver's 1 s average), power-capped in 0%, thermally slowed in 100% of 2 samples");
  // The maximum unknown: no verdict.
  EXPECT_FALSE(clocksLowered(summarizeClocks(samples({1700}, kClockSwPowerCap), 0, 0)));
}

TEST(GpuClocks, NoSamples) {
  ClockSummary s = summarizeClocks({}, 1980, 700000);
  EXPECT_EQ(s.samples, 0);
  EXPECT_FALSE(clocksLowered(s));
  EXPECT_EQ(describeClocks(s), "no samples");
}

TEST(GpuClocks, SamplerSaysWhyItCannotStart) {
  // No GPU at this bus id (and on a machine without a driver, no NVML): a
  // reason, no thread, and stop() still answers.
  GpuClockSampler sampler;
  EXPECT_FALSE(sampler.start("0000:ff:1f.7"));
  EXPECT_FALSE(sampler.why().empty());
  EXPECT_EQ(sampler.stop().samples, 0);
}
