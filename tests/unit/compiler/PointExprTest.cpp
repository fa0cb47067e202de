//===- PointExprTest.cpp - a node's pointwise math printed as CUDA --------===//
//
// The printer puts parentheses exactly where C's precedence needs them (the
// kernels' text is byte-identical to the templates it replaced, so their
// NVRTC cache entries and tuning records stay valid), spells operands and
// loads as the emitter asks, and the tree answers which operands, inputs and
// draws a node reads.
//
//===----------------------------------------------------------------------===//
#include "codegen/NodeGraph.h"
#include "codegen/PointExpr.h"

#include <gtest/gtest.h>

namespace {

using dmc::codegen::NodeGraph;
using E = dmc::codegen::PointExpr;

std::string print(const E &e) {
  return e.print({[](unsigned n) { return "$" + std::to_string(n); },
                  [](unsigned n) { return "@" + std::to_string(n); }});
}

const E a = E::operand(0), b = E::operand(1), c = E::operand(2);

TEST(PointExpr, ParenthesesFollowPrecedence) {
  EXPECT_EQ(print(a + b * c), "$0 + $1 * $2");
  EXPECT_EQ(print((a + b) * c), "($0 + $1) * $2");
  EXPECT_EQ(print(a - (b - c)), "$0 - ($1 - $2)"); // left-associative: the right groups
  EXPECT_EQ(print(a - b - c), "$0 - $1 - $2");
  EXPECT_EQ(print(a * (b / c)), "$0 * ($1 / $2)");
  EXPECT_EQ(print(a / b * c), "$0 / $1 * $2");
  EXPECT_EQ(print(E::select(a.greater(E::literal("0.f")), a, E::literal("0.f"))),
            "$0 > 0.f ? $0 : 0.f");
  // Selects chain to the right without parentheses, and need them as a condition.
  E chain = E::select(E::index('s').equals(E::literal("0")), E::load(3),
                      E::select(E::index('s').equals(E::literal("1")), a, E::literal("0.f")));
  EXPECT_EQ(print(chain), "i_s == 0 ? @3 : i_s == 1 ? $0 : 0.f");
  EXPECT_EQ(print(E::select(chain, a, b)), "(i_s == 0 ? @3 : i_s == 1 ? $0 : 0.f) ? $0 : $1");
  EXPECT_EQ(print(E::cast("float", E::index('k')).greaterEqual(b)), "(float)i_k >= $1");
  EXPECT_EQ(print(E::cast("float", a + b)), "(float)($0 + $1)");
  EXPECT_EQ(print(E::call("sqrtf", {a / E::literal("1024.f") + E::constant(1e-5)})),
            "sqrtf($0 / 1024.f + 9.999999747e-06f)");
  EXPECT_EQ(print(E::draw(2).greaterEqual(E::literal("6553u"))), "w2_ >= 6553u");
  EXPECT_EQ(print(E::constant(-1.0 / 0.0)), "__int_as_float(0xff800000)");
}

TEST(PointExpr, OperandsLoadsAndDraws) {
  E e = E::select(E::draw(1).greaterEqual(E::literal("3u")), E::load(4) * b + a * b,
                  E::load(2) + E::load(4));
  EXPECT_EQ(e.operands(), (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(e.loads(), (std::vector<unsigned>{4, 2}));
  EXPECT_EQ(e.draws(), (std::vector<int>{1}));
}

TEST(PointExpr, MapNamesTheDependenciesAndKeepsTheTree) {
  NodeGraph g;
  int x = g.map(E::load(0), {});
  int y = g.map(E::load(1), {});
  int z = g.map((a - b) * a, {y, x});
  auto load = [](unsigned n) { return "in" + std::to_string(n) + "[i]"; };
  EXPECT_EQ(g.value(size_t(z), load), "((v1 - v0) * v1)");
  EXPECT_EQ(g.value(size_t(x), load), "(in0[i])"); // a map of a load: parenthesized
  int s = g.reduce("DmcSum", "0.f", z);
  EXPECT_EQ(g.value(size_t(s), nullptr), "v2"); // a reduction combines its operand's register
  EXPECT_EQ(g.nodes[size_t(x)].loads, (std::vector<unsigned>{0}));
  ASSERT_TRUE(g.nodes[size_t(z)].expr.has_value());
  EXPECT_EQ(g.nodes[size_t(z)].expr->operands(), (std::vector<unsigned>{0, 1}));
}

} // namespace
