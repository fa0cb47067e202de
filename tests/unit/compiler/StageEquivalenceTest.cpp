//===- StageEquivalenceTest.cpp - every pass preserves the layer's values -===//
//
// For every model in examples/ (at small sizes, dropout on): the interpreter
// gives the same outputs and gradients for the training graph as built and
// after each pass of the pipeline (dm-default-layouts included).
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver.h"
#include "compiler/Interpreter.h"
#include "compiler/LayerBuilder.h"
#include "compiler/TensorIO.h"
#include "ir/IterationSpace.h"
#include "ir/Signature.h"
#include "passes/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "mlir/Pass/PassManager.h"

#include "Examples.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {


/// The example with the same kind, options and dropout but small odd sizes.
dmc::ModelConfig shrunk(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(static_cast<bool>(buffer)) << path;
  auto json = llvm::json::parse((*buffer)->getBuffer());
  EXPECT_TRUE(static_cast<bool>(json)) << path;
  llvm::json::Object &o = *json->getAsObject();
  o["batch"] = 2;
  o["seq"] = 5;
  o["hidden"] = 32; // head dim 16: the smallest the fused attention kernels take
  o["heads"] = 2;
  o["ffn"] = 14;
  o.erase("head_dim");
  if (o.get("memory_seq"))
    o["memory_seq"] = 3;
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(o));
  auto config = dmc::parseModelConfig(text, path);
  EXPECT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  return *config;
}

class StageEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(StageEquivalence, EveryPassKeepsOutputsAndGradients) {
  dmc::ModelConfig config = shrunk(GetParam());
  MLIRContext ctx;
  OwningOpRef<ModuleOp> forward = dmc::buildForwardGraph(ctx, config);

  using PassFactory = std::unique_ptr<Pass> (*)();
  auto pipeline = [&](std::vector<PassFactory> passes) {
    OwningOpRef<ModuleOp> m = forward->clone();
    PassManager pm(&ctx);
    for (PassFactory make : passes)
      pm.addNestedPass<func::FuncOp>(make());
    EXPECT_TRUE(succeeded(pm.run(*m)));
    return m;
  };
  OwningOpRef<ModuleOp> reference = pipeline({dmc::createDmAutodiff});
  func::FuncOp ref = dmc::layerFunction(*reference);
  std::vector<dmc::HostTensor> args;
  for (unsigned n = 0; n < ref.getNumArguments(); ++n)
    args.push_back(dmc::generateArgument(ref, n, /*seed=*/11, dmc::Precision::F32));
  dmc::InterpreterOptions options{dmc::Precision::F32, /*seed=*/11};
  auto expected = dmc::interpret(ref, args, options);
  ASSERT_TRUE(static_cast<bool>(expected)) << llvm::toString(expected.takeError());

  std::vector<std::pair<const char *, std::vector<PassFactory>>> stages = {
      {"stack", {dmc::createDmStackContractions, dmc::createDmAutodiff}},
      {"classify",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify}},
      {"fuse",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify,
        dmc::createDmFuse}},
      {"config",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify,
        dmc::createDmFuse, dmc::createDmDefaultLayouts}},
      {"fuse-attention",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify,
        dmc::createDmFuseAttention, dmc::createDmFuse, dmc::createDmDefaultLayouts}},
      {"epilogues",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify,
        dmc::createDmFuse, dmc::createDmDefaultLayouts,
        +[]() -> std::unique_ptr<Pass> { return dmc::createDmGemmEpilogues(); }}},
      // Every bias gradient into its GEMM, column sums taken out of the
      // kernels that write the operand (dm-gemm-epilogues{bias-grads=all}).
      {"all-bias-grads",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify,
        dmc::createDmFuse, dmc::createDmDefaultLayouts, +[]() -> std::unique_ptr<Pass> {
          dmc::DmGemmEpiloguesOptions o;
          o.biasGrads = "all";
          return dmc::createDmGemmEpilogues(o);
        }}},
      // No bias gradient into a GEMM: the column sums join the row kernels.
      {"bias-grads-in-kernels",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify,
        dmc::createDmFuse,
        +[]() -> std::unique_ptr<Pass> {
          dmc::DmFuseColumnReductionsOptions o;
          o.biasGradsInKernels = true;
          return dmc::createDmFuseColumnReductions(o);
        },
        dmc::createDmDefaultLayouts, +[]() -> std::unique_ptr<Pass> {
          dmc::DmGemmEpiloguesOptions o;
          o.biasGrads = "none";
          return dmc::createDmGemmEpilogues(o);
        }}},
      // The whole pipeline's passes, then the backward kernels read the
      // forward kernels' saved keep bits (dm-save-dropout-bits).
      {"dropout-bits",
       {dmc::createDmStackContractions, dmc::createDmAutodiff, dmc::createDmClassify,
        dmc::createDmFuseAttention, dmc::createDmFuse, dmc::createDmFuseColumnReductions,
        dmc::createDmDefaultLayouts,
        +[]() -> std::unique_ptr<Pass> { return dmc::createDmGemmEpilogues(); },
        dmc::createDmSaveDropoutBits}},
  };
  // Each result within 1e-5 of its own largest value; a result whose
  // values are rounding noise of an exact zero (a key bias's gradient under
  // softmax) is asserted tiny on both sides instead of compared relatively.
  // Returns how many results are out of bound (reported when `report`).
  double largest = 0;
  for (const dmc::HostTensor &t : *expected)
    for (double v : t.data)
      largest = std::max(largest, std::abs(v));
  auto mismatches = [&](func::FuncOp f, const char *stage, bool report) {
    auto got = dmc::interpret(f, args, options);
    EXPECT_TRUE(static_cast<bool>(got)) << stage << ": " << llvm::toString(got.takeError());
    if (!got)
      return -1;
    int bad = 0;
    for (unsigned r = 0; r < ref.getNumResults(); ++r) {
      const auto &a = (*expected)[r].data, &b = (*got)[r].data;
      EXPECT_EQ(a.size(), b.size());
      double worst = 0, scale = 0, gotScale = 0;
      for (size_t e = 0; e < a.size() && e < b.size(); ++e) {
        worst = std::max(worst, std::abs(a[e] - b[e]));
        scale = std::max(scale, std::abs(a[e]));
        gotScale = std::max(gotScale, std::abs(b[e]));
      }
      std::string name = dmc::dm::resultName(f, r).str();
      if (scale <= 1e-6 * largest) {
        bad += gotScale > 1e-6 * largest;
        EXPECT_TRUE(!report || gotScale <= 1e-6 * largest)
            << stage << ": result " << name << " should be ~0 (reference max " << scale
            << ") but reaches " << gotScale;
        continue;
      }
      bad += worst > 1e-5 * scale;
      EXPECT_TRUE(!report || worst <= 1e-5 * scale)
          << stage << ": result " << name << " differs by " << worst << " (max |ref| " << scale
          << ")";
    }
    return bad;
  };
  for (auto &[stage, passes] : stages) {
    OwningOpRef<ModuleOp> m = pipeline(passes);
    func::FuncOp f = dmc::layerFunction(*m);
    ASSERT_EQ(f.getNumResults(), ref.getNumResults()) << stage;
    EXPECT_EQ(mismatches(f, stage, /*report=*/true), 0) << stage;
    if (std::string(stage) == "all-bias-grads") {
      int folded = 0;
      for (auto c : f.getOps<dmc::dm::ContractOp>())
        folded += c.getBiasGrad() != nullptr;
      EXPECT_GE(folded, 1) << "no bias gradient folded: the stage would compare nothing new";
      // Planted: a folded contraction's result scaled by 1.01.
      for (auto c : f.getOps<dmc::dm::ContractOp>())
        if (c.getBiasGrad()) {
          c.setScaleAttr(Builder(&ctx).getF64FloatAttr(c.getScale().convertToDouble() * 1.01));
          break;
        }
      EXPECT_GT(mismatches(f, "planted", /*report=*/false), 0)
          << "a 1% error in a contraction with a bias gradient went unnoticed";
    }
    if (std::string(stage) == "epilogues") {
      // Post-LN layers add a residual gradient to a contraction's result
      // (dm-gemm-epilogues' accumulate); pre-LN ones add after a norm's gradient.
      dmc::dm::ContractOp acc;
      int accumulates = 0;
      for (auto c : f.getOps<dmc::dm::ContractOp>())
        if (c.getEpilogueKind() == dmrt::Epilogue::Accumulate) {
          acc = acc ? acc : c;
          ++accumulates;
        }
      if (!config.preNorm) {
        EXPECT_GE(accumulates, 1) << "no addend folded: the stage would compare nothing new";
      }
      if (acc) {
        // Planted: the first such contraction without its addend.
        OpBuilder b(acc);
        auto plain = b.create<dmc::dm::ContractOp>(acc.getLoc(), acc.getType(), Type(),
                                                   acc.getLhs(), acc.getRhs(), Value(),
                                                   acc.getScaleAttr(), b.getStringAttr("none"));
        acc.getResult().replaceAllUsesWith(plain.getResult());
        acc.erase();
        EXPECT_GT(mismatches(f, "planted", /*report=*/false), 0)
            << "a contraction that dropped its addend went unnoticed";
      }
    }
    if (std::string(stage) == "dropout-bits") {
      // The residual dropouts (over hidden 32: one word per row) save bits.
      int applied = 0;
      f.walk([&](dmc::dm::DropoutApplyBitsOp a) {
        applied += !a->getParentOfType<dmc::dm::KernelOp>()->hasAttr(dmc::dm::kFusedAttr);
      });
      EXPECT_GE(applied, 1) << "no saved keep bits applied: the stage would compare nothing new";
      // Planted: every forward kernel packs the keep bits of another
      // dropout (id + 1000), so the backward applies a mask the forward
      // never used.
      f.walk([&](dmc::dm::DropoutKeepBitsOp k) {
        if (k.getUnmasked())
          k.setIdAttr(Builder(&ctx).getI64IntegerAttr(k.getId() + 1000));
      });
      EXPECT_GT(mismatches(f, "planted", /*report=*/false), 0)
          << "keep bits of another mask went unnoticed";
    }
    if (std::string(stage) != "fuse-attention")
      continue;
    // Every example's attention (self, causal, cross) is bf16 with head dim
    // 16 here: each becomes one forward and two backward kernels.
    int fused = 0;
    for (auto k : f.getOps<dmc::dm::KernelOp>())
      fused += k->hasAttr(dmc::dm::kFusedAttr);
    EXPECT_GE(fused, 3) << "no fused attention: the stage would compare nothing new";
    EXPECT_EQ(fused % 3, 0);
    // Planted: the scores recomputed by each dq kernel scaled by 1.01 (its
    // log-sum-exp no longer matches them): the comparison must see it.
    for (auto k : f.getOps<dmc::dm::KernelOp>())
      if (k.getName() == "attention_grad_q")
        for (auto c : k.getBody().getOps<dmc::dm::ContractOp>()) {
          c.setScaleAttr(Builder(&ctx).getF64FloatAttr(c.getScale().convertToDouble() * 1.01));
          break;
        }
    EXPECT_GT(mismatches(f, "planted", /*report=*/false), 0)
        << "a 1% error in the recomputed scores of dq went unnoticed";
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, StageEquivalence, ::testing::ValuesIn(dmc::test::exampleModels()),
                         [](const auto &info) { return dmc::test::exampleName(info.param); });

} // namespace
