//===- StepRecord.cpp - dmc-run --bench --record: a whole step as a record ===//
#include "runtime/tools/StepRecord.h"

#include "tuning-db/Problem.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace dmrt {

bool stepRecord(const Bundle &bundle, int ordinal, double medianUs, double minUs,
                int64_t samples, dmc::tuningdb::Record &out, std::string &error) {
  using namespace dmc::tuningdb;
  cudaDeviceProp p;
  if (cudaError_t e = cudaGetDeviceProperties(&p, ordinal); e != cudaSuccess) {
    error = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    return false;
  }
  Record r;
  fillProblem(stepProblem(bundle), r);
  r.device.name = p.name;
  r.device.cc = std::to_string(p.major) + "." + std::to_string(p.minor);
  r.device.sms = p.multiProcessorCount;
  r.device.l2Bytes = p.l2CacheSize;
  int memClock = 0; // cudaDeviceProp::memoryClockRate is gone in CUDA 13
  if (cudaDeviceGetAttribute(&memClock, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess)
    r.device.memClockKhz = memClock;
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  r.software.cuda = runtime;
  r.software.cublaslt = int64_t(cublasLtGetVersion());
  r.software.nvrtc = bundle.nvrtc;
  r.software.codegen = codegenVersion(r.kind, r.signature);
  r.medianUs = medianUs;
  r.minUs = minUs;
  r.samples = samples;
  r.date = utcNow();
  out = std::move(r);
  return true;
}

} // namespace dmrt
