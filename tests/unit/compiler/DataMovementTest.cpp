//===- DataMovementTest.cpp - flop and bytes of bert-large, by hand -------===//
//
// The analysis on the BERT-large example (B=8, L=512, H=1024, 16 heads,
// FFN 4096, bf16, dropout 0.1) against values computed by hand.
//
//===----------------------------------------------------------------------===//
#include "compiler/report/Report.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

using dmc::report::WorkItem;

constexpr int64_t B = 8, L = 512, H = 1024, F = 4096, NH = 16, P = 64;
constexpr int64_t kBf16 = 2, kF32 = 4;

class BertLarge : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    ctx = new mlir::MLIRContext();
    // dm-fuse's figures (the paper's targets): attention unfused, its
    // contractions and softmax kernels counted one by one.
    dmc::PipelineOptions unfusedAttention;
    unfusedAttention.fusedAttention = false;
    auto r = dmc::report::analyzeModel(*ctx, DMC_EXAMPLES_DIR "/bert-large.json",
                                       dmc::Stage::Fuse, unfusedAttention);
    ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
    report = new dmc::report::DataMovementReport(std::move(*r));
  }
  static void TearDownTestSuite() {
    delete report;
    delete ctx;
  }
  /// The fused units named `name`, in execution order.
  static std::vector<const WorkItem *> units(const std::string &name) {
    std::vector<const WorkItem *> found;
    for (const WorkItem &w : report->fused.items)
      if (w.name == name)
        found.push_back(&w);
    return found;
  }
  static const WorkItem &contraction(bool backward, const std::string &space) {
    for (const WorkItem &w : report->fused.items)
      if (w.opClass == "contraction" && w.backward == backward && w.space == space)
        return w;
    ADD_FAILURE() << "no contraction over " << space;
    static WorkItem none;
    return none;
  }

  static mlir::MLIRContext *ctx;
  static dmc::report::DataMovementReport *report;
};

mlir::MLIRContext *BertLarge::ctx;
dmc::report::DataMovementReport *BertLarge::report;

TEST_F(BertLarge, ContractionFlopIsAnalytic) {
  // Stacked QKV projection: 2*B*L*H*3H.
  EXPECT_DOUBLE_EQ(contraction(false, "s=3 b=8 j=512 h=16 p=64 i=1024").flop,
                   2.0 * B * L * H * 3 * H);
  // Scores Q K^T over p, and A V over k: 2*B*heads*L*L*P each.
  EXPECT_DOUBLE_EQ(contraction(false, "b=8 h=16 j=512 k=512 p=64").flop,
                   2.0 * B * NH * L * L * P);
  EXPECT_DOUBLE_EQ(contraction(false, "b=8 j=512 h=16 p=64 k=512").flop,
                   2.0 * B * NH * L * L * P);
  // FFN: 2*B*L*H*F.
  EXPECT_DOUBLE_EQ(contraction(false, "b=8 j=512 u=4096 i=1024").flop, 2.0 * B * L * H * F);
  // Forward contractions total 2*B*L*(4H^2 + 2HF) + 4*B*L*L*H.
  double fwd = 0, bwd = 0;
  for (const WorkItem &w : report->fused.items)
    if (w.opClass == "contraction")
      (w.backward ? bwd : fwd) += w.flop;
  EXPECT_DOUBLE_EQ(fwd, 2.0 * B * L * (4 * H * H + 2 * H * F) + 4.0 * B * L * L * H);
  EXPECT_DOUBLE_EQ(bwd, 2 * fwd);
}

TEST_F(BertLarge, KernelBytesByHand) {
  int64_t act = B * L * H * kBf16, scores = B * NH * L * L * kBf16, stats = B * L * kF32;
  // softmax + dropout: reads the scores, writes the softmax (kept for the
  // backward) and the dropped-out probabilities.
  auto softmax = units("softmax_dropout");
  ASSERT_EQ(softmax.size(), 1u);
  EXPECT_EQ(softmax[0]->bytesRead, scores);
  EXPECT_EQ(softmax[0]->bytesWritten, 2 * scores);
  // bias + dropout + residual + layernorm: reads the projection, its bias, the
  // residual, gamma and beta; writes the normalized output, mean and rstd and
  // the pre-norm sum kept for the backward.
  auto ln = units("bias_dropout_add_layernorm");
  ASSERT_EQ(ln.size(), 2u);
  EXPECT_EQ(ln[0]->bytesRead, 2 * act + 3 * H * kBf16);
  EXPECT_EQ(ln[0]->bytesWritten, 2 * act + 2 * stats);
  EXPECT_EQ(ln[0]->bytesByType.at("f32"), 2 * stats);
}

TEST_F(BertLarge, FusionMeetsThePaperTargets) {
  int nonContraction = report->fused.kernels("elementwise") + report->fused.kernels("normalization");
  EXPECT_LE(nonContraction, 16);
  EXPECT_GE(report->reductionPercent(), 22.9);
  std::vector<std::string> expected = {"bias",
                                       "softmax_dropout",
                                       "bias_dropout_add_layernorm",
                                       "bias_gelu_dropout",
                                       "layernorm_dx_dropout_layernorm_dparams",
                                       "dropout_dgelu_reduce_sum",
                                       "add_layernorm_dx_dropout_layernorm_dparams",
                                       "dropout_softmax_dx",
                                       "stack_reduce_sum",
                                       "add"};
  for (const std::string &name : expected)
    EXPECT_FALSE(units(name).empty()) << "no kernel " << name;
}

} // namespace
