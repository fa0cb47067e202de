//===- BenchOptions.h - dmrt-bench's command line -----------------*- C++ -*-===//
//
// The arguments of dmrt-bench, parsed apart from main so that their checks
// are unit-tested (tests/unit/runtime/BenchOptionsTest.cpp), and the lines of
// its step table.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_BENCHOPTIONS_H
#define DMRT_BENCHOPTIONS_H

#include "runtime/Harness.h"

#include <string>
#include <vector>

namespace dmrt {

struct BenchOptions {
  std::string bundleDir, kernelSel, contractionSel, jsonOut;
  /// --kernel and --contraction split at commas ("3,k5_softmax", "0,2";
  /// "all" alone); empty when the option was not given.
  std::vector<std::string> kernelList, contractionList;
  bool list = false, sweep = false;
  bool help = false; // -h/--help: print kBenchUsage, nothing else parsed
  /// --device-info: no bundle; the device block a run's JSON starts with
  /// (name, SMs, compute capability, memory clock, L2, CUDA runtime and
  /// cuBLASLt versions) to --json or stdout, so a tuner knows the GPU before
  /// it measures anything.
  bool deviceInfo = false;
  int device = 0;
  HarnessOptions harness;
};

/// The --help text.
extern const char *const kBenchUsage;

/// Parses argv[1..argc-1]. False on a usage error, which `error` describes
/// (without the usage text).
bool parseBenchArgs(int argc, const char *const *argv, BenchOptions &out,
                    std::string &error);

/// `value` of `option` (--kernel, --contraction) split at commas: non-empty
/// items, none twice, "all" only alone. False with `error` naming the option,
/// the value and what is wrong.
bool splitSelection(const std::string &option, const std::string &value,
                    std::vector<std::string> &out, std::string &error);

/// A decimal integer in [lo, hi], nothing else.
bool parseIntArg(const char *s, long long lo, long long hi, long long &out);

/// dmrt-bench's step table (text output): the header line and the line of
/// a timed step, without newline, their columns aligned.
std::string stepTableHeader();
std::string stepTableRow(const StepResult &r, const std::string &check);
/// The line under a contraction's row when it swept its algorithms
/// (--algorithms all): tried, heuristic and enumerated counts, failures, reps,
/// what the outputs were checked against and how many were rejected, the
/// heuristic best's time, the fastest passing one's time, speed-up, index
/// and description ("none ran" when no algorithm ran and passed).
std::string algorithmSweepLine(const AlgorithmSweep &s);
/// `pct` as "12.3%" right-aligned in `width`, or "-" when it is not > 0 (not
/// measured, e.g. StepResult::pctSameCopy when the copy could not run).
std::string percentCell(double pct, int width);

} // namespace dmrt

#endif // DMRT_BENCHOPTIONS_H
