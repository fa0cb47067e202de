//===- DropoutTest.cpp - Philox dropout in the interpreter and autodiff ---===//
#include "compiler/Driver.h"
#include "compiler/GraphSummary.h"
#include "compiler/Interpreter.h"
#include "compiler/LayerBuilder.h"
#include "ir/DmDialect.h"
#include "passes/Passes.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// y = dropout(x) over `type`, the counter running over `order`.
std::string dropoutFunction(const std::string &type, double p, const std::string &order = "bi") {
  return "func.func @f(%x: " + type + " {dm.name = \"x\", dm.role = \"input\"}) -> (" + type +
         " {dm.name = \"y\", dm.role = \"output\"}) {\n  %0 = dm.dropout %x {p = " +
         std::to_string(p) + " : f64, id = 7 : i64, order = \"" + order + "\"} : " + type + "\n  return %0 : " + type +
         "\n}";
}

class Dropout : public ::testing::Test {
protected:
  Dropout() { dmc::loadDmcDialects(ctx); }

  OwningOpRef<ModuleOp> parse(const std::string &src) {
    return parseSourceString<ModuleOp>(src, &ctx);
  }
  std::vector<dmc::HostTensor> run(ModuleOp m, std::vector<dmc::HostTensor> args,
                                   uint64_t seed) {
    auto out = dmc::interpret(dmc::layerFunction(m), args, {dmc::Precision::F32, seed});
    EXPECT_TRUE(static_cast<bool>(out));
    return out ? *out : std::vector<dmc::HostTensor>{};
  }
  static dmc::HostTensor ones(std::string dims, std::vector<int64_t> shape) {
    dmc::HostTensor t(std::move(dims), std::move(shape));
    std::fill(t.data.begin(), t.data.end(), 1.0);
    return t;
  }

  MLIRContext ctx;
};

TEST_F(Dropout, KeepRateWithinOnePercentOverAMillionDraws) {
  for (double p : {0.1, 0.3, 0.5}) {
    auto m = parse(dropoutFunction("!dm.tensor<[b=1000, i=1000], f32>", p));
    ASSERT_TRUE(m);
    auto y = run(*m, {ones("bi", {1000, 1000})}, /*seed=*/42)[0];
    int64_t kept = 0;
    float scale = static_cast<float>(1.0 / (1.0 - p));
    for (double v : y.data) {
      if (v != 0) {
        ++kept;
        ASSERT_EQ(v, scale) << "a kept element is scaled by 1/(1-p) in fp32";
      }
    }
    EXPECT_NEAR(double(kept) / 1e6, 1.0 - p, 0.01) << "p = " << p;
  }
}

TEST_F(Dropout, MaskDependsOnSeedOnly) {
  auto m = parse(dropoutFunction("!dm.tensor<[b=64, i=64], f32>", 0.5));
  ASSERT_TRUE(m);
  auto x = ones("bi", {64, 64});
  auto a = run(*m, {x}, 1)[0], b = run(*m, {x}, 1)[0], c = run(*m, {x}, 2)[0];
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
}

TEST_F(Dropout, MaskDoesNotDependOnLayout) {
  auto bi = parse(dropoutFunction("!dm.tensor<[b=13, i=29], f32>", 0.4));
  auto ib = parse(dropoutFunction("!dm.tensor<[i=29, b=13], f32>", 0.4));
  ASSERT_TRUE(bi && ib);
  auto y1 = run(*bi, {ones("bi", {13, 29})}, 5)[0];
  auto y2 = run(*ib, {ones("ib", {29, 13})}, 5)[0];
  for (int b = 0; b < 13; ++b)
    for (int i = 0; i < 29; ++i)
      ASSERT_EQ(y1.data[b * 29 + i], y2.data[i * 13 + b]) << "b=" << b << " i=" << i;
}

TEST_F(Dropout, BackwardRegeneratesTheForwardMask) {
  auto m = parse(dropoutFunction("!dm.tensor<[b=32, i=48], f32>", 0.3));
  ASSERT_TRUE(m);
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(dmc::createDmAutodiff());
  ASSERT_TRUE(succeeded(pm.run(*m)));
  dmc::HostTensor x("bi", {32, 48});
  for (size_t e = 0; e < x.data.size(); ++e)
    x.data[e] = 1.0 + double(e % 7);
  auto out = run(*m, {x, ones("bi", {32, 48})}, 9); // y, x.grad
  ASSERT_EQ(out.size(), 2u);
  int zeros = 0;
  for (size_t e = 0; e < x.data.size(); ++e) {
    ASSERT_EQ(out[0].data[e] == 0, out[1].data[e] == 0) << "element " << e;
    if (out[1].data[e] != 0) {
      ASSERT_FLOAT_EQ(out[0].data[e] / x.data[e], out[1].data[e]);
    }
    zeros += out[1].data[e] == 0;
  }
  EXPECT_GT(zeros, 0);
}

TEST_F(Dropout, LayerBackwardReusesForwardIdsAndStoresNoMask) {
  auto config = dmc::parseModelConfig(
      R"({"kind": "decoder", "batch": 2, "seq": 3, "memory_seq": 4, "hidden": 8, "heads": 2,
          "ffn": 6, "dropout": 0.1})",
      "d.json");
  ASSERT_TRUE(static_cast<bool>(config));
  OwningOpRef<ModuleOp> m = dmc::buildForwardGraph(ctx, *config);
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(dmc::createDmAutodiff());
  ASSERT_TRUE(succeeded(pm.run(*m)));
  func::FuncOp f = dmc::layerFunction(*m);
  auto bwd = dmc::backwardOps(f);
  std::map<int64_t, dmc::dm::DropoutOp> forward;
  int backward = 0;
  f.walk([&](dmc::dm::DropoutOp op) {
    if (!bwd.contains(op))
      forward[op.getId()] = op;
  });
  f.walk([&](dmc::dm::DropoutOp op) {
    if (!bwd.contains(op))
      return;
    ++backward;
    auto it = forward.find(op.getId());
    ASSERT_NE(it, forward.end()) << "backward dropout id " << op.getId() << " has no forward";
    EXPECT_EQ(it->second.getType(), op.getType());
    EXPECT_EQ(it->second.getP(), op.getP());
    EXPECT_FALSE(isa_and_nonnull<dmc::dm::SaveOp>(op.getX().getDefiningOp()))
        << "a backward dropout applies the regenerated mask to a gradient";
  });
  EXPECT_EQ(backward, static_cast<int>(forward.size()));
  // Attention probabilities (self, cross), three residual branches, activation.
  EXPECT_EQ(forward.size(), 6u);
}

} // namespace
