//===- ShortestPathTest.cpp - hand-made graphs against brute force -------===//
#include "ProblemBuilder.h"

#include "passes/select/PreparedProblem.h"
#include "passes/select/ShortestPath.h"

#include <gtest/gtest.h>

namespace dmc::select::test {
namespace {

/// Solves `p` exactly and checks it against brute force and evaluate().
Solution solveChecked(const ConfigProblem &p) {
  Result<Solution> s = solveShortestPath(p);
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s.ok())
    return {};
  auto brute = bruteForce(p);
  EXPECT_TRUE(brute.has_value());
  if (brute) {
    EXPECT_EQ(s->cost, brute->first);
  }
  Result<Evaluation> e = evaluate(p, s->assignment);
  EXPECT_TRUE(e.ok() && e->feasible);
  if (e.ok()) {
    EXPECT_EQ(e->cost, s->cost);
  }
  EXPECT_TRUE(s->exact);
  return *s;
}

/// x -> A -> y -> B -> z; transposes cost 5.
ProblemBuilder chain() {
  ProblemBuilder b(5);
  int x = b.argument("x", {"ab", "ba"}, "ab");
  int y = b.tensor("y", {"ab", "ba"}), z = b.tensor("z", {"ab"});
  int A = b.op("A", {x}, {y}), B = b.op("B", {y}, {z});
  b.config(A, 2, {{x, "ab"}, {y, "ab"}});
  b.config(A, 1, {{x, "ab"}, {y, "ba"}});
  b.config(B, 1, {{y, "ab"}, {z, "ab"}});
  b.config(B, 3, {{y, "ba"}, {z, "ab"}});
  return b;
}

TEST(ShortestPath, ChainAvoidsTheTransposeAndEqualsBruteForce) {
  ProblemBuilder b = chain();
  Solution s = solveChecked(b.problem);
  EXPECT_EQ(s.cost, 3); // A0 + B0; A1 + B0 = 7, A1 + B1 = 4
  EXPECT_EQ(s.assignment.configs, (std::vector<int>{0, 0}));
  EXPECT_EQ(s.statesPerCut, (std::vector<size_t>{1, 2, 1}));
  EXPECT_EQ(s.edges, 2u + 2u * 2u);
  EXPECT_EQ(*lowerBound(b.problem), 2);
  Result<Evaluation> def = evaluate(b.problem, {{1, 1}, {}});
  EXPECT_EQ(def->cost, 4);
  // Without skip reads the chain model is the true one: same choice.
  Result<ChainSelection> chain = forwardChainOnly(b.problem);
  ASSERT_TRUE(chain.ok()) << chain.error();
  EXPECT_EQ(chain->assignment.configs, s.assignment.configs);
  EXPECT_EQ(chain->chainCost, 3);
  EXPECT_EQ(chain->evaluation.cost, 3);
}

TEST(ShortestPath, ChangedCostChangesTheChoice) {
  ProblemBuilder b = chain();
  b.problem.ops[1].configs[0].cost = 4; // A0 + B0 = 6 > A1 + B1 = 4
  Solution s = solveChecked(b.problem);
  EXPECT_EQ(s.cost, 4);
  EXPECT_EQ(s.assignment.configs, (std::vector<int>{1, 1}));
  b.problem.ops[1].configs[0].available = false; // still {1, 1}
  EXPECT_EQ(solveChecked(b.problem).assignment.configs, (std::vector<int>{1, 1}));
  b.problem.ops[1].configs[0].available = true;
  b.problem.ops[0].configs[1].available = false; // only A0 left: A0 + B0
  EXPECT_EQ(solveChecked(b.problem).assignment.configs, (std::vector<int>{0, 0}));
}

/// A writes t (cheaper in "r"), B reads t (either layout) and writes u, C
/// reads the residual t in "c" only and u. Transposes of t cost 10.
ProblemBuilder residual() {
  ProblemBuilder b(10);
  int x = b.argument("x", {"r"}, "r");
  int t = b.tensor("t", {"r", "c"}), u = b.tensor("u", {"u"}), v = b.tensor("v", {"v"});
  int A = b.op("A", {x}, {t}), B = b.op("B", {t}, {u}), C = b.op("C", {t, u}, {v});
  b.config(A, 1, {{x, "r"}, {t, "r"}});
  b.config(A, 1.5, {{x, "r"}, {t, "c"}});
  b.config(B, 1, {{t, "r"}, {u, "u"}});
  b.config(B, 1, {{t, "c"}, {u, "u"}});
  b.config(C, 1, {{t, "c"}, {u, "u"}, {v, "v"}});
  return b;
}

TEST(ShortestPath, ResidualStaysInTheStateAndBeatsTheForwardChain) {
  ProblemBuilder b = residual();
  Solution s = solveChecked(b.problem);
  EXPECT_EQ(s.cost, 3.5); // A writes "c" for C's residual read
  EXPECT_EQ(s.assignment.configs, (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(s.statesPerCut, (std::vector<size_t>{1, 2, 2, 1})); // t kept at cut 2
  Result<ChainSelection> chain = forwardChainOnly(b.problem);
  ASSERT_TRUE(chain.ok()) << chain.error();
  // The chain never sees C's read of t: it believes 3, pays 13.
  EXPECT_EQ(chain->assignment.configs, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(chain->chainCost, 3);
  ASSERT_TRUE(chain->evaluation.feasible);
  EXPECT_EQ(chain->evaluation.cost, 13);
  EXPECT_GT(chain->evaluation.cost, s.cost);
}

TEST(ShortestPath, PruningToOneLayoutIsOnlyExactOverThePrunedSpace) {
  ProblemBuilder b = residual();
  Result<Solution> s = solveShortestPath(b.problem, {1});
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(s->pruned);
  EXPECT_FALSE(s->exact);
  EXPECT_EQ(s->cost, 13); // t keeps "r" (A's cheapest), C transposes it
  EXPECT_EQ(evaluate(b.problem, s->assignment)->cost, 13);
  EXPECT_NE(formatSolution(b.problem, *s).find("exact only over the pruned"),
            std::string::npos);
  Result<Solution> two = solveShortestPath(b.problem, {2});
  EXPECT_FALSE(two->pruned);
  EXPECT_EQ(two->cost, 3.5);
}

TEST(ShortestPath, EachReadPaysItsOwnTranspose) {
  ProblemBuilder b(3);
  int t = b.tensor("t", {"a", "b"});
  int A = b.op("A", {}, {t}), B = b.op("B", {t}, {}), C = b.op("C", {t}, {});
  b.config(A, 1, {{t, "a"}});
  b.config(B, 1, {{t, "b"}});
  b.config(C, 1, {{t, "b"}});
  EXPECT_EQ(solveChecked(b.problem).cost, 3 + 3 + 3); // two transposes
  b.config(A, 2, {{t, "b"}});
  EXPECT_EQ(solveChecked(b.problem).cost, 4);
}

TEST(ShortestPath, FreeArgumentReadTwiceInDifferentLayouts) {
  ProblemBuilder b(9);
  int x = b.argument("x", {"a", "b", "c"});
  int A = b.op("A", {x}, {}), B = b.op("B", {x}, {});
  b.config(A, 1, {{x, "a"}});
  b.config(B, 1, {{x, "b"}});
  b.transpose(x, "a", "b", 4);
  b.transpose(x, "b", "a", 4);
  b.transpose(x, "c", "a", 1);
  b.transpose(x, "c", "b", 1);
  Solution s = solveChecked(b.problem);
  EXPECT_EQ(s.cost, 4); // stored as "c", each reader transposes for 1
  EXPECT_EQ(s.assignment.argumentLayouts[x], 2);
  EXPECT_EQ(s.statesPerCut[0], 3u);
}

TEST(ShortestPath, FixedArgumentAndResultLayouts) {
  ProblemBuilder b(1.5);
  int x = b.argument("x", {"ab", "ba"}, "ba");
  int y = b.tensor("y", {"ab", "ba"}, "ab");
  int A = b.op("A", {x}, {y});
  b.config(A, 1, {{x, "ab"}, {y, "ba"}});
  b.config(A, 3, {{x, "ba"}, {y, "ab"}});
  EXPECT_EQ(solveChecked(b.problem).assignment.configs[0], 1); // 1 + 1.5 + 1.5 > 3
  b.problem.tensors[x].fixedLayout = "ab";
  Solution s = solveChecked(b.problem);
  EXPECT_EQ(s.assignment.configs[0], 0); // 1 + 1.5 < 3 + 1.5
  EXPECT_EQ(s.cost, 2.5);
}

TEST(ShortestPath, ForbiddenTransposeVersusPriced) {
  ProblemBuilder b(2);
  int t = b.tensor("t", {"ab", "ba"});
  int A = b.op("A", {}, {t}), B = b.op("B", {t}, {});
  b.config(A, 1, {{t, "ab"}});
  b.config(B, 1, {{t, "ba"}});
  b.config(B, 5, {{t, "ab"}});
  EXPECT_EQ(solveChecked(b.problem).assignment.configs[1], 0); // 1 + 2 + 1 < 6
  b.transpose(t, "ab", "ba", kForbidden);
  Solution s = solveChecked(b.problem);
  EXPECT_EQ(s.assignment.configs[1], 1);
  EXPECT_EQ(s.cost, 6);
  EXPECT_EQ(s.edges, 1u + 1u); // the forbidden edge is not one
}

TEST(ShortestPath, ReadThatMayNotBeTransposed) {
  // As ForbiddenTransposeVersusPriced, but the transpose is priced and only
  // B's read is marked as one that may not go through it; C's read of the
  // same tensor still may.
  ProblemBuilder b(2);
  int t = b.tensor("t", {"ab", "ba"});
  int A = b.op("A", {}, {t}), B = b.op("B", {t}, {}), C = b.op("C", {t}, {});
  b.config(A, 1, {{t, "ab"}});
  b.config(B, 1, {{t, "ba"}});
  b.config(B, 5, {{t, "ab"}});
  b.config(C, 1, {{t, "ba"}});
  b.config(C, 5, {{t, "ab"}});
  Solution s = solveChecked(b.problem);
  EXPECT_EQ(s.assignment.configs[1], 0); // both read through the transpose
  EXPECT_EQ(s.cost, 1 + 3 + 3);
  b.problem.ops[size_t(B)].transposable = {false};
  s = solveChecked(b.problem);
  EXPECT_EQ(s.assignment.configs[1], 1);
  EXPECT_EQ(s.assignment.configs[2], 0);
  EXPECT_EQ(s.cost, 1 + 5 + 3);
  Result<Evaluation> e = evaluate(b.problem, Assignment{{0, 0, 0}, {}});
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->feasible);
  EXPECT_NE(e->reason.find("op 'B'"), std::string::npos) << e->reason;
  auto chain = forwardChainOnly(b.problem);
  ASSERT_TRUE(chain.ok()) << chain.error();
  EXPECT_EQ(chain->assignment.configs[1], 1);
  auto brute = bruteForce(b.problem);
  ASSERT_TRUE(brute.has_value());
  EXPECT_EQ(brute->first, s.cost);
  b.problem.ops[size_t(B)].transposable = {true, false};
  EXPECT_FALSE(prepare(b.problem).ok()); // one flag per read
}

TEST(ShortestPath, TextDumpNamesConfigurationsAndTransposes) {
  ProblemBuilder b = residual();
  Result<ChainSelection> chain = forwardChainOnly(b.problem);
  ASSERT_TRUE(chain.ok());
  EXPECT_EQ(formatEvaluation(b.problem, chain->evaluation),
            "op #0 'A': config 0 'c0' 1 us\n"
            "op #1 'B': config 0 'c0' 1 us\n"
            "op #2 'C': config 0 'c0' 1 us\n"
            "    transpose 't' r -> c 10 us\n"
            "total 13 us\n");
  Result<Solution> s = solveShortestPath(b.problem);
  EXPECT_EQ(formatSolution(b.problem, *s),
            "shortest path: 3.5 us, 6 states, 8 edges, at most 2 states per cut; exact\n"
            "op #0 'A': config 1 'c1' 1.5 us\n"
            "op #1 'B': config 1 'c1' 1 us\n"
            "op #2 'C': config 0 'c0' 1 us\n"
            "total 3.5 us\n");
}

} // namespace
} // namespace dmc::select::test
