//===- EpilogueTester.h - One epilogue case on the GPU or the emulator -*- C++ -*-===//
//
// Runs a case (EpilogueCase.h) through dmrt::GemmRunner with the heuristic's
// first algorithms, or with --emulated-device the emulator's own results, and
// compares D, the aux output and the bias gradient with
// dmctest::emulateMatmul (tolerances: tests/gpu/GemmEpilogueTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_EPILOGUETESTER_H
#define DMC_TESTS_GPU_EPILOGUETESTER_H

#include "EpilogueCase.h"
#include "EpilogueSummary.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace dmctest {

/// Throws-free CUDA error handling: a failed CUDA runtime call aborts the
/// whole test (the device is not usable), with the call named.
#define CUDA_OK(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "FATAL: %s failed: %s (%s) at %s:%d\n", #call,       \
                   cudaGetErrorName(e_), cudaGetErrorString(e_), __FILE__,      \
                   __LINE__);                                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// One device allocation, freed on scope exit.
struct DevBuf {
  void *p = nullptr;
  size_t bytes = 0;
  DevBuf() = default;
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  ~DevBuf() {
    if (p)
      cudaFree(p);
  }
};
void alloc(DevBuf &b, size_t bytes);

using Stats = dmc::test::EpilogueStats;

class Tester {
public:
  Tester(const Options &opt, cublasLtHandle_t lt, void *workspace,
         cudaStream_t stream)
      : opt_(opt), lt_(lt), workspace_(workspace), stream_(stream) {}

  void runCase(const Case &c, uint64_t seed, Stats &st);

private:
  const Options &opt_;
  cublasLtHandle_t lt_;
  void *workspace_;
  cudaStream_t stream_;
};

} // namespace dmctest

#endif // DMC_TESTS_GPU_EPILOGUETESTER_H
