//===- FuzzMain.cpp - libFuzzer's entry point for one target ---------------===//
//
// Compiled once per target with DMC_FUZZ_ENTRY naming its function
// (tests/fuzz/CMakeLists.txt, -DDMC_FUZZ=ON).
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return dmc::fuzz::DMC_FUZZ_ENTRY(data, size);
}
