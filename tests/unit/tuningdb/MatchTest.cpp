//===- MatchTest.cpp - Records of another device or software are set aside ===//
#include "Fixture.h"

#include "tuning-db/Match.h"

namespace dmc::tuningdb::test {
namespace {

TEST(TuningDbMatch, CountsRecordsOfOtherDevicesAndVersions) {
  std::vector<Record> records;
  for (int i = 0; i < 5; ++i)
    records.push_back(kernel(i));
  for (int i = 0; i < 3; ++i) {
    records.push_back(kernel(i));
    records.back().device = {"NVIDIA H200", "9.0", 132, 3201000, 62914560};
  }
  for (int i = 0; i < 2; ++i) {
    records.push_back(kernel(i));
    records.back().software.cublaslt = 120800;
  }
  records.push_back(kernel(7));
  records.back().rejected = true;
  MatchResult m = match(records, h100(), software());
  ASSERT_EQ(m.matched.size(), 5u);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(m.matched[i], &records[i]);
  EXPECT_EQ(m.rejected, 6u);
  EXPECT_EQ(m.summary(), "5 matched; 6 rejected: 3 other device (NVIDIA H200 9.0), 2 other "
                         "cuBLASLt (120800), 1 rejected by the tuner");
  EXPECT_EQ(match({kernel(1)}, h100(), software()).summary(), "1 matched");
}

TEST(TuningDbMatch, EveryDeviceAndSoftwareFieldMatters) {
  struct Case {
    void (*change)(Record &);
    std::string reason;
  } cases[] = {
      {[](Record &r) { r.device.cc = "9.1"; }, "other device (NVIDIA H100 80GB HBM3 9.1)"},
      {[](Record &r) { r.device.sms = 114; },
       "other configuration of NVIDIA H100 80GB HBM3 (114 SMs, 2619000 kHz memory clock, "
       "52428800 bytes L2)"},
      {[](Record &r) { r.device.l2Bytes = 1; },
       "other configuration of NVIDIA H100 80GB HBM3 (132 SMs, 2619000 kHz memory clock, 1 "
       "bytes L2)"},
      {[](Record &r) { r.software.cuda = 12080; }, "other CUDA (12080)"},
      {[](Record &r) { r.software.nvrtc = "12.8"; }, "other NVRTC (12.8)"},
      {[](Record &r) { r.software.codegen = kCodegenVersion + 1; },
       "other codegen version (" + std::to_string(kCodegenVersion + 1) + ")"},
  };
  for (const Case &c : cases) {
    Record r = kernel(0);
    c.change(r);
    EXPECT_EQ(mismatch(r, h100(), software()), c.reason);
  }
  EXPECT_EQ(mismatch(kernel(0), h100(), software()), "");
}

} // namespace
} // namespace dmc::tuningdb::test
