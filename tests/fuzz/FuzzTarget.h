//===- FuzzTarget.h - One entry point per input format dmc reads ---*- C++ -*-===//
//
// A fuzz target takes one input (the bytes of a file someone could hand dmc)
// and runs it through the reader the tools use, then checks what must hold
// for every input: a rejected input gets an error that names the file, and an
// accepted one survives what comes next (a model compiles up to dm-fuse, a
// manifest or configuration written back reads back the same, a bundle yields
// a runnable plan). A broken property aborts with a message, so libFuzzer
// (tests/fuzz/run-fuzz.sh) and the regression test (FuzzInputsTest.cpp) both
// see it as a crash. The same functions are linked into both.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_FUZZ_FUZZTARGET_H
#define DMC_TESTS_FUZZ_FUZZTARGET_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dmc::fuzz {

/// Runs one input; returns 0 (libFuzzer's convention) or aborts.
using TargetFn = int (*)(const uint8_t *data, size_t size);

struct Target {
  const char *name; ///< also the folder under corpus/ and regressions/
  TargetFn run;
};

int runModel(const uint8_t *data, size_t size);
int runConfig(const uint8_t *data, size_t size);
int runManifest(const uint8_t *data, size_t size);
int runBundle(const uint8_t *data, size_t size);
int runSafetensors(const uint8_t *data, size_t size);
int runTuningDb(const uint8_t *data, size_t size);

/// Every target, in the order run-fuzz.sh runs them.
const std::vector<Target> &targets();

/// Aborts with "dmc fuzz target TARGET: property violated: WHAT" unless `ok`.
void require(bool ok, const char *target, const std::string &what);

/// This process's scratch directory ($TMPDIR or /tmp), made on first use and
/// removed with its contents at exit.
const std::string &scratchDir();

/// Checks that a rejection message starts with the name the input was given.
void requireNamed(const std::string &error, const std::string &name, const char *target);

} // namespace dmc::fuzz

#endif // DMC_TESTS_FUZZ_FUZZTARGET_H
