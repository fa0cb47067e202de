//===- StepRecord.cpp - dmc-run --bench --record: a whole step as a record ===//
#include "runtime/tools/StepRecord.h"

#include "runtime/Harness.h"
#include "tuning-db/Problem.h"

namespace dmrt {

bool stepRecord(const Bundle &bundle, int ordinal, double medianUs, double minUs,
                int64_t samples, dmc::tuningdb::Record &out, std::string &error) {
  using namespace dmc::tuningdb;
  DeviceInfo d;
  if (!queryDevice(ordinal, d, error))
    return false;
  Record r;
  fillProblem(stepProblem(bundle), r);
  r.device.name = d.name;
  r.device.cc = std::to_string(d.ccMajor) + "." + std::to_string(d.ccMinor);
  r.device.sms = d.smCount;
  r.device.l2Bytes = d.l2Bytes;
  r.device.memClockKhz = d.memClockKhz;
  r.software.cuda = d.runtimeVersion;
  r.software.cublaslt = d.cublasLtVersion;
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
