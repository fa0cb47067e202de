//===- BenchOptionsTest.cpp - dmrt-bench's command line and timing plan ---===//
//
// Also the same-size copy (bytes, percentage, cache key) and the step table.
//
#include "runtime/BenchOptions.h"

#include <gtest/gtest.h>

#include <limits>
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

TEST(BenchOptions, StepLists) {
  BenchOptions o;
  EXPECT_EQ(parse({"b", "--kernel", "3,k5_softmax", "--contraction", "0,2"}, o), "");
  EXPECT_EQ(o.kernelList, (std::vector<std::string>{"3", "k5_softmax"}));
  EXPECT_EQ(o.contractionList, (std::vector<std::string>{"0", "2"}));
  BenchOptions one;
  EXPECT_EQ(parse({"b", "--kernel", "all"}, one), "");
  EXPECT_EQ(one.kernelList, (std::vector<std::string>{"all"}));
  EXPECT_TRUE(one.contractionList.empty());
  BenchOptions bad;
  EXPECT_EQ(parse({"b", "--kernel", "3,,5"}, bad),
            "--kernel 3,,5: an empty item (give IDs or names separated by commas)");
  EXPECT_EQ(parse({"b", "--contraction", "1,"}, bad),
            "--contraction 1,: an empty item (give IDs or names separated by commas)");
  EXPECT_EQ(parse({"b", "--contraction", "1,2,1"}, bad), "--contraction 1,2,1: 1 given twice");
  EXPECT_EQ(parse({"b", "--kernel", "all,3"}, bad),
            "--kernel all,3: \"all\" cannot be listed with others");
}

TEST(BenchOptions, PlantFault) {
  BenchOptions o;
  EXPECT_EQ(parse({"b.dmlib", "--reference", "--plant-fault", "permute"}, o), "");
  EXPECT_EQ(o.harness.plantFault, PlantedFault::Permute);
  EXPECT_EQ(parse({"b.dmlib", "--reference", "--plant-fault", "flip"}, o),
            "--plant-fault needs zero, scale, shift or permute");
  BenchOptions p;
  EXPECT_NE(parse({"b.dmlib", "--plant-fault", "zero"}, p).find("--plant-fault needs --reference"),
            std::string::npos);
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

TEST(BenchOptions, DeviceInfoTakesNoBundle) {
  BenchOptions o;
  EXPECT_EQ(parse({"--device-info", "--device", "1", "--json", "d.json"}, o), "");
  EXPECT_TRUE(o.deviceInfo);
  EXPECT_EQ(o.device, 1);
  EXPECT_EQ(o.jsonOut, "d.json");
  EXPECT_EQ(parse({"b.dmlib", "--device-info"}, o), "--device-info takes no bundle (b.dmlib given)");
  BenchOptions plain;
  EXPECT_EQ(parse({}, plain), "no bundle given");
  EXPECT_FALSE(plain.deviceInfo);
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
  EXPECT_NE(std::string(kBenchUsage).find("%size-copy"), std::string::npos);
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

TEST(HarnessSameSizeCopy, BytesAndPercentage) {
  // Half the step's bytes are copied: read + write = the step's bytes.
  EXPECT_EQ(sameSizeCopyBytes(16 << 20), 8 << 20);
  EXPECT_EQ(sameSizeCopyBytes(7), 3);
  EXPECT_EQ(sameSizeCopyBytes(2), 1);
  EXPECT_EQ(sameSizeCopyBytes(1), 0);
  EXPECT_EQ(sameSizeCopyBytes(0), 0);
  EXPECT_EQ(sameSizeCopyBytes(-5), 0);
  // 100 x copy time / step time = step GB/s as a % of the copy's GB/s.
  EXPECT_DOUBLE_EQ(pctSameSizeCopy(8, 10), 80);
  EXPECT_DOUBLE_EQ(pctSameSizeCopy(12, 10), 120); // faster than the copy
  EXPECT_EQ(pctSameSizeCopy(0, 10), 0);           // copy not measured
  EXPECT_EQ(pctSameSizeCopy(8, 0), 0);
  EXPECT_EQ(pctSameSizeCopy(-1, 10), 0);
}

TEST(HarnessSameSizeCopy, CacheKey) {
  HarnessOptions opt;
  // Steps with the same copy size share a key; odd bytes round down.
  EXPECT_EQ(copyTimingKey(100, opt), copyTimingKey(101, opt));
  EXPECT_EQ(copyTimingKey(100, opt).copyBytes, 50);
  EXPECT_FALSE(copyTimingKey(100, opt) == copyTimingKey(102, opt));
  EXPECT_TRUE(copyTimingKey(100, opt) < copyTimingKey(102, opt));
  // Timing mode and repetitions make a different measurement.
  HarnessOptions iso = opt;
  iso.timing = TimingMode::Isolated;
  EXPECT_FALSE(copyTimingKey(100, opt) == copyTimingKey(100, iso));
  HarnessOptions isoFlush = iso;
  isoFlush.flushL2 = true;
  EXPECT_FALSE(copyTimingKey(100, iso) == copyTimingKey(100, isoFlush));
  EXPECT_TRUE(copyTimingKey(100, isoFlush).flushL2);
  HarnessOptions reps = opt;
  reps.reps = 7;
  EXPECT_FALSE(copyTimingKey(100, opt) == copyTimingKey(100, reps));
  // Strict weak order: usable as a std::map key.
  CopyTimingKey a = copyTimingKey(100, opt), b = copyTimingKey(100, iso);
  EXPECT_NE(a < b, b < a);
  EXPECT_FALSE(a < a);
}

TEST(BenchStepTable, SizeCopyColumn) {
  std::string header = stepTableHeader();
  size_t pct = header.find("%copy"), size = header.find("%size-copy"),
         tflops = header.find("TFLOP/s");
  ASSERT_NE(size, std::string::npos);
  EXPECT_LT(pct, size);
  EXPECT_LT(size, tflops);
  StepResult r;
  r.kind = BundleStep::Kernel;
  r.id = 3;
  r.name = "fused_softmax";
  r.bytes = 16 << 20;
  r.time.medianUs = 10;
  r.time.minUs = 9.5;
  r.gbs = 1677.7;
  r.pctCopy = 55.3;
  r.copyUs = 8.5;
  r.pctSameCopy = 85;
  r.bufferSets = 13;
  std::string row = stepTableRow(r, "pass");
  // Every column ends where its header ends.
  EXPECT_EQ(row.size(), header.size() - std::string("check").size() + 4);
  size_t end = size + std::string("%size-copy").size();
  EXPECT_EQ(row.substr(end - 5, 5), "85.0%") << row;
  size_t copyEnd = pct + std::string("%copy").size();
  EXPECT_EQ(row.substr(copyEnd - 5, 5), "55.3%") << row;
  EXPECT_EQ(row.substr(0, 2), "k ");
  EXPECT_EQ(row.substr(row.size() - 4), "pass");
  // Not measured: "-", same width.
  r.copyUs = r.pctSameCopy = 0;
  std::string none = stepTableRow(r, "pass");
  EXPECT_EQ(none.size(), row.size());
  EXPECT_EQ(none.substr(end - 10, 10), "         -") << none;
  // Contractions show TFLOP/s.
  r.kind = BundleStep::Contraction;
  r.tflops = 312.5;
  std::string c = stepTableRow(r, "-");
  size_t tEnd = tflops + std::string("TFLOP/s").size();
  EXPECT_EQ(c.substr(tEnd - 5, 5), "312.5") << c;
  EXPECT_EQ(c.substr(0, 2), "c ");
}

TEST(BenchStepTable, PercentCell) {
  EXPECT_EQ(percentCell(85, 10), "     85.0%");
  EXPECT_EQ(percentCell(123.45, 7), " 123.5%");
  EXPECT_EQ(percentCell(0, 10), "         -");
  EXPECT_EQ(percentCell(-3, 4), "   -");
  EXPECT_EQ(percentCell(std::numeric_limits<double>::infinity(), 4), "   -");
  EXPECT_EQ(percentCell(1234.5, 4), "1234.5%"); // wider than asked: not cut
}

} // namespace

TEST(BenchOptions, Algorithms) {
  BenchOptions o;
  EXPECT_EQ(parse({"b"}, o), "");
  EXPECT_EQ(o.harness.algorithms, AlgorithmMode::Heuristic);
  EXPECT_EQ(o.harness.maxAlgorithms, kDefaultMaxAlgorithms);
  EXPECT_EQ(o.harness.sweepReps, 5);
  EXPECT_EQ(parse({"b", "--algorithms", "all"}, o), "");
  EXPECT_EQ(o.harness.algorithms, AlgorithmMode::All);
  EXPECT_EQ(o.harness.maxAlgorithms, 256);
  EXPECT_EQ(parse({"b", "--max-algorithms", "64", "--algorithms", "all"}, o), "");
  EXPECT_EQ(o.harness.maxAlgorithms, 64);
  EXPECT_EQ(parse({"b", "--algorithms", "heuristic"}, o), "");
  EXPECT_EQ(o.harness.algorithms, AlgorithmMode::Heuristic);
  EXPECT_EQ(parse({"b", "--algorithms", "best"}, o),
            "--algorithms needs \"heuristic\" or \"all\", got \"best\"");
  EXPECT_EQ(parse({"b", "--algorithms"}, o),
            "--algorithms needs \"heuristic\" or \"all\"");
  EXPECT_EQ(parse({"b", "--algorithms", "all", "--max-algorithms", "0"}, o),
            "--max-algorithms needs an integer in [1, 100000]");
  EXPECT_EQ(parse({"b", "--algorithms", "all", "--max-algorithms", "x"}, o),
            "--max-algorithms needs an integer in [1, 100000]");
  EXPECT_EQ(parse({"b", "--algorithms", "all", "--max-algorithms"}, o),
            "--max-algorithms needs an integer in [1, 100000]");
  std::string err = parse({"b", "--max-algorithms", "8"}, o);
  EXPECT_EQ(err.rfind("--max-algorithms needs --algorithms all", 0), 0u) << err;
  err = parse({"b", "--algorithms", "all", "--max-algorithms", "8", "--algorithms",
               "heuristic"}, o);
  EXPECT_EQ(err.rfind("--max-algorithms needs --algorithms all", 0), 0u) << err;
  // --prune-algorithms: with --algorithms all only, a count of at least 1.
  EXPECT_EQ(o.harness.pruneAlgorithms, 0);
  EXPECT_EQ(parse({"b", "--algorithms", "all", "--prune-algorithms", "12"}, o), "");
  EXPECT_EQ(o.harness.pruneAlgorithms, 12);
  EXPECT_EQ(parse({"b", "--algorithms", "all", "--prune-algorithms", "0"}, o),
            "--prune-algorithms needs an integer in [1, 100000]");
  err = parse({"b", "--prune-algorithms", "8"}, o);
  EXPECT_EQ(err.rfind("--prune-algorithms needs --algorithms all", 0), 0u) << err;
  std::string usage = kBenchUsage;
  EXPECT_NE(usage.find("[--algorithms heuristic|all] [--max-algorithms N=256]"),
            std::string::npos);
  EXPECT_NE(usage.find("best_algorithm"), std::string::npos);
  AlgorithmMode m = AlgorithmMode::Heuristic;
  EXPECT_TRUE(parseAlgorithmMode("all", m));
  EXPECT_EQ(m, AlgorithmMode::All);
  EXPECT_STREQ(algorithmModeName(m), "all");
  EXPECT_TRUE(parseAlgorithmMode("heuristic", m));
  EXPECT_STREQ(algorithmModeName(m), "heuristic");
  EXPECT_FALSE(parseAlgorithmMode("All", m));
}

TEST(BenchStepTable, AlgorithmSweepLine) {
  AlgorithmSweep s;
  s.ran = true;
  s.tried = 40;
  s.heuristic = 8;
  s.enumerated = 32;
  s.errors = 2;
  s.reps = 5;
  s.heuristicUs = 12.5;
  s.bestIndex = 17;
  s.bestUs = 10;
  s.bestAlgorithm = "algo=21 tile=128x128 stages=32x5 splitk=1 swizzle=0 ws=0";
  EXPECT_EQ(algorithmSweepLine(s),
            "       algorithms: 40 tried (8 heuristic, 32 enumerated), 2 failed, "
            "5 reps each; heuristic 12.50 us; best 10.00 us (1.25x) by enumerated "
            "#17: algo=21 tile=128x128 stages=32x5 splitk=1 swizzle=0 ws=0");
  s.bestIsHeuristic = true;
  s.bestIndex = 0;
  s.bestUs = 12.5;
  s.checkedAgainst = "default";
  s.rejected = 3;
  std::string line = algorithmSweepLine(s);
  EXPECT_NE(line.find("(1.00x) by heuristic #0: algo=21"), std::string::npos) << line;
  EXPECT_NE(line.find("2 failed, 5 reps each; checked against the default's outputs: 3 "
                      "rejected; heuristic"),
            std::string::npos)
      << line;
  s.checkedAgainst = "reference";
  EXPECT_NE(algorithmSweepLine(s).find("checked against the reference: 3 rejected"),
            std::string::npos);
  s = AlgorithmSweep();
  s.tried = s.errors = 3;
  s.heuristic = 3;
  s.reps = 1;
  s.enumerationError = "cublasLtMatmulAlgoGetIds failed";
  EXPECT_EQ(algorithmSweepLine(s),
            "       algorithms: 3 tried (3 heuristic, 0 enumerated), 3 failed, 1 "
            "rep each; enumeration failed: cublasLtMatmulAlgoGetIds failed; "
            "heuristic -; none ran");
}
