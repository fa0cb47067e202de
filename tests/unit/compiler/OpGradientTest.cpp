//===- OpGradientTest.cpp - each op's backward rule vs finite differences -===//
//
// One small function per forward op (composed with softmax where the op alone
// yields infinities), differentiated by dm-autodiff and checked in fp64.
//
//===----------------------------------------------------------------------===//
#include "GradientCheck.h"

#include "compiler/Driver.h"

#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

struct OpCase {
  const char *name;
  const char *body; ///< a func.func with named args and results
};

#define ARG(name) "{dm.name = \"" name "\", dm.role = \"input\"}"
#define RES "{dm.name = \"y\", dm.role = \"output\"}"

const OpCase kCases[] = {
    {"contract_projection",
     "func.func @f(%x: !dm.tensor<[b=2, j=3, i=4], f32> " ARG("x") ", "
     "%w: !dm.tensor<[h=2, p=3, i=4], f32> " ARG("w") ") -> (!dm.tensor<[b=2, j=3, h=2, p=3], f32> " RES ") {\n"
     "  %0 = dm.contract %x, %w {scale = 0.5 : f64} : !dm.tensor<[b=2, j=3, i=4], f32>, "
     "!dm.tensor<[h=2, p=3, i=4], f32> -> !dm.tensor<[b=2, j=3, h=2, p=3], f32>\n"
     "  return %0 : !dm.tensor<[b=2, j=3, h=2, p=3], f32>\n}"},
    {"contract_batched_scores",
     "func.func @f(%q: !dm.tensor<[b=2, j=3, h=2, p=2], f32> " ARG("q") ", "
     "%k: !dm.tensor<[k=4, b=2, p=2, h=2], f32> " ARG("k") ") -> (!dm.tensor<[b=2, h=2, j=3, k=4], f32> " RES ") {\n"
     "  %0 = dm.contract %q, %k : !dm.tensor<[b=2, j=3, h=2, p=2], f32>, "
     "!dm.tensor<[k=4, b=2, p=2, h=2], f32> -> !dm.tensor<[b=2, h=2, j=3, k=4], f32>\n"
     "  return %0 : !dm.tensor<[b=2, h=2, j=3, k=4], f32>\n}"},
    {"bias_add",
     "func.func @f(%x: !dm.tensor<[b=2, j=3, i=4], f32> " ARG("x") ", "
     "%c: !dm.tensor<[i=4], f32> " ARG("c") ") -> (!dm.tensor<[b=2, j=3, i=4], f32> " RES ") {\n"
     "  %0 = dm.bias_add %x, %c : !dm.tensor<[b=2, j=3, i=4], f32>, !dm.tensor<[i=4], f32>\n"
     "  return %0 : !dm.tensor<[b=2, j=3, i=4], f32>\n}"},
    {"add_and_scale",
     "func.func @f(%x: !dm.tensor<[b=2, i=4], f32> " ARG("x") ", "
     "%z: !dm.tensor<[b=2, i=4], f32> " ARG("z") ") -> (!dm.tensor<[b=2, i=4], f32> " RES ") {\n"
     "  %0 = dm.scale %x {factor = -1.5 : f64} : !dm.tensor<[b=2, i=4], f32>\n"
     "  %1 = dm.add %0, %z : !dm.tensor<[b=2, i=4], f32>\n"
     "  %2 = dm.add %1, %x : !dm.tensor<[b=2, i=4], f32>\n"
     "  return %2 : !dm.tensor<[b=2, i=4], f32>\n}"},
    {"gelu",
     "func.func @f(%x: !dm.tensor<[b=3, i=5], f32> " ARG("x") ") -> (!dm.tensor<[b=3, i=5], f32> " RES ") {\n"
     "  %0 = dm.activation %x {kind = \"gelu\"} : !dm.tensor<[b=3, i=5], f32>\n"
     "  return %0 : !dm.tensor<[b=3, i=5], f32>\n}"},
    {"gelu_tanh",
     "func.func @f(%x: !dm.tensor<[b=3, i=5], f32> " ARG("x") ") -> (!dm.tensor<[b=3, i=5], f32> " RES ") {\n"
     "  %0 = dm.activation %x {kind = \"gelu_tanh\"} : !dm.tensor<[b=3, i=5], f32>\n"
     "  return %0 : !dm.tensor<[b=3, i=5], f32>\n}"},
    {"relu",
     "func.func @f(%x: !dm.tensor<[b=3, i=5], f32> " ARG("x") ") -> (!dm.tensor<[b=3, i=5], f32> " RES ") {\n"
     "  %0 = dm.activation %x {kind = \"relu\"} : !dm.tensor<[b=3, i=5], f32>\n"
     "  return %0 : !dm.tensor<[b=3, i=5], f32>\n}"},
    {"dropout",
     "func.func @f(%x: !dm.tensor<[b=4, i=6], f32> " ARG("x") ") -> (!dm.tensor<[b=4, i=6], f32> " RES ") {\n"
     "  %0 = dm.dropout %x {p = 0.3 : f64, id = 5 : i64, order = \"bi\"} : !dm.tensor<[b=4, i=6], f32>\n"
     "  return %0 : !dm.tensor<[b=4, i=6], f32>\n}"},
    {"causal_mask_softmax",
     "func.func @f(%s: !dm.tensor<[b=2, j=3, k=3], f32> " ARG("s") ") -> (!dm.tensor<[b=2, j=3, k=3], f32> " RES ") {\n"
     "  %0 = dm.causal_mask %s {query = \"j\", key = \"k\", fill = 0xFFF0000000000000 : f64} : "
     "!dm.tensor<[b=2, j=3, k=3], f32>\n"
     "  %1 = dm.softmax %0 {dim = \"k\"} : !dm.tensor<[b=2, j=3, k=3], f32>\n"
     "  return %1 : !dm.tensor<[b=2, j=3, k=3], f32>\n}"},
    {"key_padding_mask_softmax",
     "func.func @f(%s: !dm.tensor<[b=2, j=3, k=4], f32> " ARG("s") ", "
     "%n: !dm.tensor<[b=2], i32> {dm.name = \"n\", dm.role = \"input\", dm.init_max = 4 : i64}) "
     "-> (!dm.tensor<[b=2, j=3, k=4], f32> " RES ") {\n"
     "  %0 = dm.key_padding_mask %s, %n {key = \"k\", fill = 0xFFF0000000000000 : f64} : "
     "!dm.tensor<[b=2, j=3, k=4], f32>, !dm.tensor<[b=2], i32>\n"
     "  %1 = dm.softmax %0 {dim = \"k\"} : !dm.tensor<[b=2, j=3, k=4], f32>\n"
     "  return %1 : !dm.tensor<[b=2, j=3, k=4], f32>\n}"},
    {"softmax_outer_dim",
     "func.func @f(%s: !dm.tensor<[b=2, k=4, j=3], f32> " ARG("s") ") -> (!dm.tensor<[b=2, k=4, j=3], f32> " RES ") {\n"
     "  %0 = dm.softmax %s {dim = \"k\"} : !dm.tensor<[b=2, k=4, j=3], f32>\n"
     "  return %0 : !dm.tensor<[b=2, k=4, j=3], f32>\n}"},
    {"layernorm",
     "func.func @f(%x: !dm.tensor<[b=2, j=3, i=5], f32> " ARG("x") ", "
     "%g: !dm.tensor<[i=5], f32> " ARG("g") ", %c: !dm.tensor<[i=5], f32> " ARG("c") ") "
     "-> (!dm.tensor<[b=2, j=3, i=5], f32> " RES ") {\n"
     "  %y, %mean, %rstd = dm.layernorm %x, %g, %c {dims = \"i\", eps = 1.0e-05 : f64} : "
     "!dm.tensor<[b=2, j=3, i=5], f32>, !dm.tensor<[i=5], f32> -> !dm.tensor<[b=2, j=3], f32>\n"
     "  return %y : !dm.tensor<[b=2, j=3, i=5], f32>\n}"},
    {"layernorm_two_dims",
     "func.func @f(%x: !dm.tensor<[h=2, b=2, p=3], f32> " ARG("x") ", "
     "%g: !dm.tensor<[p=3, h=2], f32> " ARG("g") ", %c: !dm.tensor<[p=3, h=2], f32> " ARG("c") ") "
     "-> (!dm.tensor<[h=2, b=2, p=3], f32> " RES ") {\n"
     "  %y, %mean, %rstd = dm.layernorm %x, %g, %c {dims = \"ph\", eps = 1.0e-05 : f64} : "
     "!dm.tensor<[h=2, b=2, p=3], f32>, !dm.tensor<[p=3, h=2], f32> -> !dm.tensor<[b=2], f32>\n"
     "  return %y : !dm.tensor<[h=2, b=2, p=3], f32>\n}"},
    {"reduce_sum",
     "func.func @f(%x: !dm.tensor<[b=2, j=3, i=4], f32> " ARG("x") ") -> (!dm.tensor<[i=4, b=2], f32> " RES ") {\n"
     "  %0 = dm.reduce_sum %x : !dm.tensor<[b=2, j=3, i=4], f32> -> !dm.tensor<[i=4, b=2], f32>\n"
     "  return %0 : !dm.tensor<[i=4, b=2], f32>\n}"},
    {"broadcast",
     "func.func @f(%x: !dm.tensor<[i=4], f32> " ARG("x") ") -> (!dm.tensor<[b=2, i=4, j=3], f32> " RES ") {\n"
     "  %0 = dm.broadcast %x : !dm.tensor<[i=4], f32> -> !dm.tensor<[b=2, i=4, j=3], f32>\n"
     "  return %0 : !dm.tensor<[b=2, i=4, j=3], f32>\n}"},
    {"transpose",
     "func.func @f(%x: !dm.tensor<[b=2, j=3, i=4], f32> " ARG("x") ") -> (!dm.tensor<[i=4, b=2, j=3], f32> " RES ") {\n"
     "  %0 = dm.transpose %x : !dm.tensor<[b=2, j=3, i=4], f32> -> !dm.tensor<[i=4, b=2, j=3], f32>\n"
     "  return %0 : !dm.tensor<[i=4, b=2, j=3], f32>\n}"},
    {"rename_then_contract",
     "func.func @f(%x: !dm.tensor<[b=2, j=3, i=4], f32> " ARG("x") ") -> (!dm.tensor<[b=2, j=3, k=3], f32> " RES ") {\n"
     "  %0 = dm.rename %x {from = \"j\", to = \"k\"} : !dm.tensor<[b=2, j=3, i=4], f32> -> "
     "!dm.tensor<[b=2, k=3, i=4], f32>\n"
     "  %1 = dm.contract %x, %0 : !dm.tensor<[b=2, j=3, i=4], f32>, !dm.tensor<[b=2, k=3, i=4], f32> "
     "-> !dm.tensor<[b=2, j=3, k=3], f32>\n"
     "  return %1 : !dm.tensor<[b=2, j=3, k=3], f32>\n}"},
    {"stack_unstack",
     "func.func @f(%x: !dm.tensor<[i=4], f32> " ARG("x") ", %z: !dm.tensor<[i=4], f32> " ARG("z") ") "
     "-> (!dm.tensor<[i=4], f32> " RES ") {\n"
     "  %0 = dm.stack %x, %z, %x {dim = \"s\"} : !dm.tensor<[i=4], f32>, !dm.tensor<[i=4], f32>, "
     "!dm.tensor<[i=4], f32> -> !dm.tensor<[i=4, s=3], f32>\n"
     "  %1 = dm.scale %0 {factor = 2.0 : f64} : !dm.tensor<[i=4, s=3], f32>\n"
     "  %2:3 = dm.unstack %1 {dim = \"s\"} : !dm.tensor<[i=4, s=3], f32> -> !dm.tensor<[i=4], f32>, "
     "!dm.tensor<[i=4], f32>, !dm.tensor<[i=4], f32>\n"
     "  %3 = dm.activation %2#0 {kind = \"gelu\"} : !dm.tensor<[i=4], f32>\n"
     "  %4 = dm.add %3, %2#1 : !dm.tensor<[i=4], f32>\n"
     "  %5 = dm.add %4, %2#2 : !dm.tensor<[i=4], f32>\n"
     "  return %5 : !dm.tensor<[i=4], f32>\n}"},
};

void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }

class OpGradient : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpGradient, MatchesCentralDifferences) {
  MLIRContext ctx;
  dmc::loadDmcDialects(ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(GetParam().body, &ctx);
  ASSERT_TRUE(module) << "test function does not parse:\n" << GetParam().body;
  auto r = dmc::test::checkGradients(*module, /*samplesPerArg=*/1000);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_GT(r.checked, 0);
  EXPECT_LT(r.worstError, 1e-6) << r.worstWhere;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, OpGradient, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
