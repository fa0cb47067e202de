//===- BenchOptions.h - dmrt-bench's command line -----------------*- C++ -*-===//
//
// The arguments of dmrt-bench, parsed apart from main so that their checks
// are unit-tested (tests/unit/runtime/BenchOptionsTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_BENCHOPTIONS_H
#define DMRT_BENCHOPTIONS_H

#include "runtime/Harness.h"

#include <string>

namespace dmrt {

struct BenchOptions {
  std::string bundleDir, kernelSel, contractionSel, jsonOut;
  bool list = false, sweep = false;
  bool help = false; // -h/--help: print kBenchUsage, nothing else parsed
  int device = 0;
  HarnessOptions harness;
};

/// The --help text.
extern const char *const kBenchUsage;

/// Parses argv[1..argc-1]. False on a usage error, which `error` describes
/// (without the usage text).
bool parseBenchArgs(int argc, const char *const *argv, BenchOptions &out,
                    std::string &error);

/// A decimal integer in [lo, hi], nothing else.
bool parseIntArg(const char *s, long long lo, long long hi, long long &out);

} // namespace dmrt

#endif // DMRT_BENCHOPTIONS_H
