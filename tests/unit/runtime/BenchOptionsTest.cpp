//===- BenchOptionsTest.cpp - dmrt-bench's command line and timing plan ---===//
#include "runtime/BenchOptions.h"

#include <gtest/gtest.h>

#include <vector>

using namespace dmrt;

namespace {

/// Parses {"dmrt-bench", args...}; returns the error ("" on success).
std::string parse(std::vector<const char *> args, BenchOptions &out) {
  args.insert(args.begin(), "dmrt-bench");
  std::string err;
  bool ok = parseBenchArgs(static_cast<int>(args.size()), args.data(), out, err);
  EXPECT_EQ(ok, err.empty()) << err;
  return err;
}

TEST(BenchOptions, Defaults) {
  BenchOptions o;
  EXPECT_EQ(parse({"b.dmlib"}, o), "");
  EXPECT_EQ(o.bundleDir, "b.dmlib");
  EXPECT_EQ(o.harness.timing, TimingMode::Stream);
  EXPECT_FALSE(o.harness.flushL2);
  EXPECT_EQ(o.harness.reps, 50);
  EXPECT_EQ(o.harness.warmup, 5);
  EXPECT_FALSE(o.help);
}

TEST(BenchOptions, Timing) {
  BenchOptions o;
  EXPECT_EQ(parse({"b", "--timing", "isolated", "--flush-l2", "--reps", "9"}, o), "");
  EXPECT_EQ(o.harness.timing, TimingMode::Isolated);
  EXPECT_TRUE(o.harness.flushL2);
  EXPECT_EQ(o.harness.reps, 9);
  // Order does not matter.
  EXPECT_EQ(parse({"--flush-l2", "b", "--timing", "isolated"}, o), "");
  EXPECT_TRUE(o.harness.flushL2);
  EXPECT_EQ(parse({"b", "--timing", "stream"}, o), "");
  EXPECT_EQ(o.harness.timing, TimingMode::Stream);
  EXPECT_EQ(parse({"b", "--timing", "fast"}, o),
            "--timing needs \"stream\" or \"isolated\", got \"fast\"");
  EXPECT_EQ(parse({"b", "--timing"}, o), "--timing needs \"stream\" or \"isolated\"");
}

TEST(BenchOptions, FlushL2NeedsIsolated) {
  BenchOptions o;
  std::string err = parse({"b", "--flush-l2"}, o);
  EXPECT_EQ(err.rfind("--flush-l2 needs --timing isolated (the default timing is "
                      "stream): ", 0), 0u) << err;
  err = parse({"b", "--timing", "stream", "--flush-l2"}, o);
  EXPECT_EQ(err.rfind("--flush-l2 needs --timing isolated: stream timing rotates", 0),
            0u) << err;
  // The last --timing wins.
  EXPECT_EQ(parse({"b", "--timing", "isolated", "--flush-l2", "--timing", "stream"}, o)
                .rfind("--flush-l2 needs --timing isolated", 0),
            0u);
}

TEST(BenchOptions, OtherErrorsAndHelp) {
  BenchOptions o;
  EXPECT_EQ(parse({}, o), "no bundle given");
  EXPECT_EQ(parse({"a", "b"}, o), "more than one bundle given (a, b)");
  EXPECT_EQ(parse({"a", "--bogus"}, o), "unknown option --bogus");
  EXPECT_EQ(parse({"a", "--reps", "0"}, o), "--reps needs an integer >= 1");
  EXPECT_EQ(parse({"a", "--warmup", "x"}, o), "--warmup needs an integer >= 0");
  EXPECT_EQ(parse({"a", "--tolerance", "-1"}, o),
            "--tolerance needs a non-negative number");
  EXPECT_EQ(parse({"a", "--seed", "-3"}, o), "--seed needs an unsigned 64-bit integer");
  EXPECT_EQ(parse({"a", "--json"}, o), "--json needs a value");
  EXPECT_EQ(parse({"a", "--kernel", "3", "--json", "o.json", "--seed", "7",
                   "--reference", "--device", "1"}, o), "");
  EXPECT_EQ(o.kernelSel, "3");
  EXPECT_EQ(o.jsonOut, "o.json");
  EXPECT_EQ(o.harness.seed, 7u);
  EXPECT_TRUE(o.harness.reference);
  EXPECT_EQ(o.device, 1);
  EXPECT_EQ(parse({"--help", "--bogus"}, o), "");
  EXPECT_TRUE(o.help);
  EXPECT_NE(std::string(kBenchUsage).find("--timing stream|isolated"), std::string::npos);
}

TEST(StreamTiming, ModeNames) {
  TimingMode m = TimingMode::Isolated;
  EXPECT_TRUE(parseTimingMode("stream", m));
  EXPECT_EQ(m, TimingMode::Stream);
  EXPECT_STREQ(timingModeName(m), "stream");
  EXPECT_TRUE(parseTimingMode("isolated", m));
  EXPECT_STREQ(timingModeName(m), "isolated");
  EXPECT_FALSE(parseTimingMode("Stream", m));
}

TEST(StreamTiming, BufferSets) {
  const int64_t MiB = int64_t(1) << 20, GiB = int64_t(1) << 30;
  const int64_t l2 = 50 * MiB; // H100
  // ceil(4 * L2 / footprint), clamped to [1, 64]; no memory limit (-1).
  EXPECT_EQ(streamBufferSets(l2, 8 * MiB, 8 * MiB, -1), 25);
  EXPECT_EQ(streamBufferSets(l2, 48 * MiB, 48 * MiB, -1), 5); // 4.17 -> 5
  EXPECT_EQ(streamBufferSets(l2, 50 * MiB, 50 * MiB, -1), 4);
  EXPECT_EQ(streamBufferSets(l2, 200 * MiB, 200 * MiB, -1), 1);
  EXPECT_EQ(streamBufferSets(l2, 1 << 10, 1 << 10, -1), 64);
  EXPECT_EQ(streamBufferSets(l2, 0, 0, -1), 64);
  EXPECT_EQ(streamBufferSets(0, 8 * MiB, 8 * MiB, -1), 1); // unknown L2
  // Footprint (bytes touched) decides R; allocated bytes only count for memory.
  EXPECT_EQ(streamBufferSets(l2, 20 * MiB, 400 * MiB, -1), 10);
  // Memory: R - 1 extra sets must leave 1 GiB free.
  EXPECT_EQ(streamBufferSets(l2, 8 * MiB, 8 * MiB, 80 * GiB), 25);
  EXPECT_EQ(streamBufferSets(l2, 8 * MiB, 8 * MiB, GiB + 80 * MiB), 11);
  EXPECT_EQ(streamBufferSets(l2, 8 * MiB, 8 * MiB, GiB + 7 * MiB), 1);
  EXPECT_EQ(streamBufferSets(l2, 8 * MiB, 8 * MiB, GiB / 2), 1);
  EXPECT_EQ(streamBufferSets(l2, 8 * MiB, 8 * MiB, 0), 1);
}

TEST(StreamTiming, LaunchesAndSamples) {
  // K: the smallest multiple of R that is >= 20.
  EXPECT_EQ(streamLaunchesPerSample(1), 20);
  EXPECT_EQ(streamLaunchesPerSample(3), 21);
  EXPECT_EQ(streamLaunchesPerSample(5), 20);
  EXPECT_EQ(streamLaunchesPerSample(25), 25);
  EXPECT_EQ(streamLaunchesPerSample(64), 64);
  EXPECT_EQ(streamLaunchesPerSample(0), 20);
  // Samples: max(ceil(reps / K), min(reps, 7)).
  EXPECT_EQ(streamSamples(50, 20), 7);
  EXPECT_EQ(streamSamples(50, 64), 7);
  EXPECT_EQ(streamSamples(5, 20), 5);
  EXPECT_EQ(streamSamples(1, 64), 1);
  EXPECT_EQ(streamSamples(1000, 20), 50);
  EXPECT_EQ(streamSamples(0, 20), 0);
}

} // namespace
