//===- HarnessExitTest.cpp - skip only without a GPU; no silent skips -----===//
//
// The parts of "checks that can fail" that need no GPU: which CUDA errors
// mean "no GPU" (exit 77, skipped) and which fail; --reference's verdict on
// a step's reference file (missing: an error; a contraction the compiler
// recorded as skipped: listed); the epilogue test's summary and verdict
// (tests/gpu/EpilogueSummary.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/CudaDriver.h"
#include "runtime/Harness.h"
#include "tests/gpu/EpilogueSummary.h"

#include <gtest/gtest.h>

using namespace dmrt;

namespace {

TEST(HarnessExit, OnlyAMissingGpuOrDriverSkips) {
  EXPECT_TRUE(cuInitMeansNoDevice(CUDA_ERROR_NO_DEVICE));
  EXPECT_TRUE(cuInitMeansNoDevice(CUDA_ERROR_STUB_LIBRARY));
  for (CUresult r : {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
                     CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_UNKNOWN,
                     CUDA_ERROR_OUT_OF_MEMORY})
    EXPECT_FALSE(cuInitMeansNoDevice(r)) << r;
  for (bool driver : {false, true}) {
    EXPECT_TRUE(cudaErrorMeansNoDevice(cudaErrorNoDevice, driver));
    EXPECT_TRUE(cudaErrorMeansNoDevice(cudaErrorStubLibrary, driver));
    EXPECT_FALSE(cudaErrorMeansNoDevice(cudaErrorUnknown, driver));
    EXPECT_FALSE(cudaErrorMeansNoDevice(cudaErrorSystemDriverMismatch, driver));
    EXPECT_FALSE(cudaErrorMeansNoDevice(cudaErrorDevicesUnavailable, driver));
  }
  // cudart says "insufficient driver" when there is no driver at all (a
  // machine without a GPU: skip) and when the driver is too old (fail).
  EXPECT_TRUE(cudaErrorMeansNoDevice(cudaErrorInsufficientDriver, false));
  EXPECT_FALSE(cudaErrorMeansNoDevice(cudaErrorInsufficientDriver, true));
  EXPECT_EQ(deviceFailureExitCode(true), kExitNoDevice);
  EXPECT_EQ(deviceFailureExitCode(false), 1);
  EXPECT_EQ(kExitNoDevice, 77);
}

TEST(HarnessReference, MissingFileIsAnErrorNamingIt) {
  const std::string path = "b.dmlib/reference/c3.safetensors";
  for (char prefix : {'k', 'c'}) {
    ReferenceLookup r = lookupReference(prefix, 3, path, false, nullptr);
    EXPECT_EQ(r.kind, ReferenceLookup::Error);
    EXPECT_NE(r.message.find(path + " does not exist"), std::string::npos) << r.message;
  }
  TensorFile data;
  data.tensors.push_back(Tensor{"out0", DType::F32, {1}, std::vector<uint8_t>(4)});
  EXPECT_EQ(lookupReference('k', 3, path, true, &data).kind, ReferenceLookup::Check);
  EXPECT_EQ(lookupReference('c', 3, path, true, &data).kind, ReferenceLookup::Check);
}

TEST(HarnessReference, OnlyRecordedContractionSkipsAreSkipped) {
  const std::string path = "b.dmlib/reference/c3.safetensors";
  TensorFile record;
  record.metadata["skipped"] = "above the flop limit 2e9";
  ReferenceLookup r = lookupReference('c', 3, path, true, &record);
  EXPECT_EQ(r.kind, ReferenceLookup::Skipped);
  EXPECT_EQ(r.message, "above the flop limit 2e9");
  // Kernels always have a reference.
  r = lookupReference('k', 3, path, true, &record);
  EXPECT_EQ(r.kind, ReferenceLookup::Error);
  EXPECT_NE(r.message.find("every kernel (k3) must have a reference"), std::string::npos)
      << r.message;
  // A record that also holds data is inconsistent.
  record.tensors.push_back(Tensor{"out0", DType::F32, {1}, std::vector<uint8_t>(4)});
  r = lookupReference('c', 3, path, true, &record);
  EXPECT_EQ(r.kind, ReferenceLookup::Error);
  EXPECT_NE(r.message.find("holds 1 tensor(s)"), std::string::npos) << r.message;
}

TEST(HarnessReference, SkipRecordRoundTrips) {
  // The compiler's record has no tensors; the runtime's reader takes it.
  std::string path = ::testing::TempDir() + "/c7.safetensors";
  TensorFile record, back;
  record.metadata["skipped"] = "3.2e9 flop above the limit 2e9";
  std::string err;
  ASSERT_TRUE(writeSafetensors(path, record, err)) << err;
  ASSERT_TRUE(readSafetensors(path, back, err)) << err;
  ReferenceLookup r = lookupReference('c', 7, path, true, &back);
  EXPECT_EQ(r.kind, ReferenceLookup::Skipped) << r.message;
  EXPECT_EQ(r.message, "3.2e9 flop above the limit 2e9");
}

using dmrt::Epilogue;
using dmc::test::EpilogueStats;

std::vector<Epilogue> allEpilogues() {
  std::vector<Epilogue> all = dmc::test::requiredEpilogues();
  for (Epilogue e : {Epilogue::Relu, Epilogue::ReluBias, Epilogue::Gelu, Epilogue::GeluBias})
    all.push_back(e);
  return all;
}

bool hasLine(const dmc::test::EpilogueVerdict &v, const std::string &text) {
  for (const std::string &l : v.lines)
    if (l.find(text) != std::string::npos)
      return true;
  return false;
}

TEST(HarnessEpilogueSummary, CountsUnsupportedAndPasses) {
  std::map<Epilogue, EpilogueStats> stats;
  for (Epilogue e : allEpilogues())
    stats[e] = EpilogueStats{60, 4, 0, 0, {}};
  stats[Epilogue::Gelu] = EpilogueStats{0, 64, 0, 0, {"GELU bf16 ..."}};
  auto v = dmc::test::summarizeEpilogues(stats, allEpilogues(), false);
  EXPECT_TRUE(v.pass);
  EXPECT_EQ(v.ran, 15 * 60);
  EXPECT_EQ(v.unsupported, 15 * 4 + 64);
  EXPECT_TRUE(hasLine(v, "SUMMARY: 900 cases ran, 124 unsupported by this cuBLASLt, "
                         "0 failed, 0 invalid layouts"));
  EXPECT_TRUE(hasLine(v, "unsupported by this cuBLASLt (GELU, 1): [GELU bf16 ...]"));
  // --strict: every epilogue must run.
  EXPECT_FALSE(dmc::test::summarizeEpilogues(stats, allEpilogues(), true).pass);
}

TEST(HarnessEpilogueSummary, RequiredEpilogueThatNeverRanFails) {
  std::map<Epilogue, EpilogueStats> stats;
  for (Epilogue e : allEpilogues())
    stats[e] = EpilogueStats{64, 0, 0, 0, {}};
  stats[Epilogue::DGeluBGrad] = EpilogueStats{0, 60, 0, 4, {}};
  auto v = dmc::test::summarizeEpilogues(stats, allEpilogues(), false);
  EXPECT_FALSE(v.pass);
  EXPECT_TRUE(hasLine(v, "never ran: DGELU_BGRAD (60 unsupported, 0 failed, 4 invalid)"));
  // A failed case, or nothing run at all, fails too.
  stats[Epilogue::DGeluBGrad] = EpilogueStats{63, 0, 1, 0, {}};
  EXPECT_FALSE(dmc::test::summarizeEpilogues(stats, allEpilogues(), false).pass);
  std::map<Epilogue, EpilogueStats> none = {{Epilogue::Gelu, EpilogueStats{0, 64, 0, 0, {}}}};
  v = dmc::test::summarizeEpilogues(none, allEpilogues(), false);
  EXPECT_FALSE(v.pass);
  EXPECT_TRUE(hasLine(v, "no case ran (every configuration unsupported or invalid)"));
}

} // namespace
