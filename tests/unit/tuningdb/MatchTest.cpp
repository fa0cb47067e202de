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
      {[](Record &r) { r.software.codegen += 1; },
       "other codegen version (" + std::to_string(software().codegen + 1) + " of kernels, now " +
           std::to_string(software().codegen) + ")"},
  };
  for (const Case &c : cases) {
    Record r = kernel(0);
    c.change(r);
    EXPECT_EQ(mismatch(r, h100(), software()), c.reason);
  }
  EXPECT_EQ(mismatch(kernel(0), h100(), software()), "");
}

/// Each family of generated code has its own version: a record is compared
/// with its own family's, so bumping one family leaves the others' records.
TEST(TuningDbMatch, CodegenVersionIsPerFamily) {
  EXPECT_EQ(codegenFamily(Kind::Contraction, "contraction bik,bkj->bij"),
            CodegenFamily::Contractions);
  EXPECT_EQ(codegenFamily(Kind::Kernel, "kernel attention(bhjp,bhkp,bhkp->bhjp,bhj)"),
            CodegenFamily::Attention);
  EXPECT_EQ(codegenFamily(Kind::Kernel, "kernel attention_grad_kv(bhjp->bhkp)"),
            CodegenFamily::AttentionGradKV);
  EXPECT_EQ(codegenFamily(Kind::Kernel, "kernel attention_grad_q(bhjp->bhjp)"),
            CodegenFamily::AttentionGradQ);
  // Only the exact kind names: other kernels (and a name that merely starts
  // with one) are plain kernels, as are transposes.
  EXPECT_EQ(codegenFamily(Kind::Kernel, "kernel attention_dropout(bhjk->bhjk)"),
            CodegenFamily::Kernels);
  EXPECT_EQ(codegenFamily(Kind::Kernel, "kernel transpose(ij->ij)"), CodegenFamily::Kernels);
  EXPECT_EQ(codegenFamily(Kind::Kernel, "kernel(softmax){b,h,j,k}:bf16"),
            CodegenFamily::Kernels);

  // Every family is listed once, in enum order (codegenFamily indexes it).
  for (size_t i = 0; i < std::size(kCodegenVersions); ++i)
    EXPECT_EQ(size_t(kCodegenVersions[i].family), i);

  // A record at its family's version matches; at another family's version
  // (different from its own) it does not, with both named.
  Record attention = kernel(0);
  attention.signature = "kernel attention(bhjp,bhkp,bhkp->bhjp,bhj)";
  attention.software.codegen = codegenVersion(attention.kind, attention.signature);
  EXPECT_EQ(mismatch(attention, h100(), software()), "");
  attention.software.codegen = 1;
  EXPECT_EQ(mismatch(attention, h100(), software()),
            "other codegen version (1 of attention, now " +
                std::to_string(codegenVersion(Kind::Kernel, attention.signature)) + ")");
  std::string all = describeCodegenVersions();
  for (const CodegenVersion &v : kCodegenVersions)
    EXPECT_NE(all.find(std::string(v.name) + " " + std::to_string(v.version)),
              std::string::npos) << all;
}

} // namespace
} // namespace dmc::tuningdb::test
