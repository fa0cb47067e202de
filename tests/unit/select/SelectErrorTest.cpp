//===- SelectErrorTest.cpp - malformed problems give errors as values ----===//
#include "ProblemBuilder.h"

#include "passes/select/ShortestPath.h"

#include <gtest/gtest.h>

namespace dmc::select::test {
namespace {

/// x (argument "ab") -> A -> y -> B -> z, two configurations each.
ProblemBuilder base() {
  ProblemBuilder b(1);
  int x = b.argument("x", {"ab", "ba"}, "ab");
  int y = b.tensor("y", {"ab", "ba"}), z = b.tensor("z", {"ab"});
  int A = b.op("A", {x}, {y}), B = b.op("B", {y}, {z});
  b.config(A, 1, {{x, "ab"}, {y, "ab"}});
  b.config(A, 2, {{x, "ab"}, {y, "ba"}});
  b.config(B, 1, {{y, "ab"}, {z, "ab"}});
  b.config(B, 1, {{y, "ba"}, {z, "ab"}});
  return b;
}

struct Case {
  const char *what;
  void (*mutate)(ConfigProblem &);
  const char *message;
};

const Case kCases[] = {
    {"read before write", [](ConfigProblem &p) { std::swap(p.ops[0], p.ops[1]); },
     "op 'B' (#0) reads tensor 'y' before op 'A' (#1) writes it (the order must be "
     "topological)"},
    {"read never written", [](ConfigProblem &p) { p.ops[0].writes.clear(); },
     "reads tensor 'y', which is not an argument and no op writes"},
    {"layout not a candidate", [](ConfigProblem &p) { p.ops[1].configs[1].layouts[0].layout = "zz"; },
     "op 'B' (#1) config 1 ('c1'): layout 'zz' is not a candidate of tensor 'y' "
     "(candidates: 'ab', 'ba')"},
    {"missing read layout", [](ConfigProblem &p) { p.ops[1].configs[0].layouts.erase(p.ops[1].configs[0].layouts.begin()); },
     "op 'B' (#1) config 0 ('c0'): no layout for tensor 'y', which it reads"},
    {"missing write layout", [](ConfigProblem &p) { p.ops[0].configs[1].layouts.pop_back(); },
     "op 'A' (#0) config 1 ('c1'): no layout for tensor 'y', which it writes"},
    {"untouched tensor", [](ConfigProblem &p) { p.ops[0].configs[0].layouts.push_back({2, "ab"}); },
     "gives a layout for tensor id 2, which the op neither reads nor writes"},
    {"two layouts", [](ConfigProblem &p) { p.ops[0].configs[0].layouts.push_back({1, "ba"}); },
     "op 'A' (#0) config 0 ('c0'): gives two layouts for tensor 'y'"},
    {"no available configuration",
     [](ConfigProblem &p) { for (Config &c : p.ops[1].configs) c.available = false; },
     "op 'B' (#1) has no available configuration (2 listed, none measured)"},
    {"negative cost", [](ConfigProblem &p) { p.ops[0].configs[0].cost = -1; },
     "op 'A' (#0) config 0 ('c0'): cost -1.000000 is not a finite non-negative time"},
    {"unknown tensor", [](ConfigProblem &p) { p.ops[1].reads.push_back(7); },
     "op 'B' (#1) reads unknown tensor id 7"},
    {"read twice", [](ConfigProblem &p) { p.ops[1].reads.push_back(1); },
     "op 'B' (#1) lists tensor 'y' twice in its reads"},
    {"argument written", [](ConfigProblem &p) { p.ops[1].writes.push_back(0); },
     "op 'B' (#1) writes argument 'x'"},
    {"written twice", [](ConfigProblem &p) { p.ops[1].writes.push_back(1); },
     "tensor 'y' is written by op 'A' (#0) and op 'B' (#1)"},
    {"fixed layout not a candidate", [](ConfigProblem &p) { p.tensors[0].fixedLayout = "abc"; },
     "tensor 'x': fixed layout 'abc' is not among its candidates ('ab', 'ba')"},
    {"duplicate layout", [](ConfigProblem &p) { p.tensors[1].layouts = {"ab", "ab"}; },
     "tensor 'y' lists layout 'ab' twice"},
    {"no layouts", [](ConfigProblem &p) { p.tensors[2].layouts.clear(); },
     "tensor 'z' has 0 candidate layouts (1 to 255 are supported)"},
    {"negative transpose",
     [](ConfigProblem &p) { p.transposeCost = [](int, const std::string &, const std::string &) { return -2.0; }; },
     "tensor 'x': transpose 'ab' -> 'ba' costs -2.000000 (must be >= 0, or kForbidden)"},
};

TEST(SelectErrors, EveryEntryPointReportsMalformedProblems) {
  ASSERT_TRUE(solveShortestPath(base().problem).ok()); // the base is well formed
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.what);
    ProblemBuilder b = base();
    c.mutate(b.problem);
    Result<Solution> s = solveShortestPath(b.problem);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().find(c.message), std::string::npos) << s.error();
    EXPECT_EQ(lowerBound(b.problem).error(), s.error());
    EXPECT_EQ(forwardChainOnly(b.problem).error(), s.error());
    EXPECT_EQ(evaluate(b.problem, {{0, 0}, {}}).error(), s.error());
  }
}

TEST(SelectErrors, NoFeasiblePathNamesTheOpAndTheTranspose) {
  ProblemBuilder b = base();
  b.problem.transposeCost = nullptr; // every transpose forbidden
  b.problem.ops[0].configs.pop_back(); // A writes y as "ab" only
  b.problem.ops[1].configs.erase(b.problem.ops[1].configs.begin()); // B reads "ba"
  Result<Solution> s = solveShortestPath(b.problem);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "no feasible path: the frontier became empty at op 'B' (#1): "
                       "each of its 1 available configuration(s) needs a forbidden "
                       "transpose from each of the 1 state(s) before it, e.g. tensor "
                       "'y' stored as 'ab' but read as 'ba'");
  EXPECT_EQ(forwardChainOnly(b.problem).error(),
            "forward-chain selection: no configuration of op 'B' (#1) is reachable "
            "from op 'A' (#0)'s (forbidden transposes)");
  Result<Evaluation> e = evaluate(b.problem, {{0, 0}, {}});
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->feasible);
  EXPECT_EQ(e->reason, "op 'B' (#1) reads 'y' as 'ba' but it is stored as 'ab', and "
                       "that transpose is forbidden");
  EXPECT_EQ(formatEvaluation(b.problem, *e), "infeasible: " + e->reason + "\n");
}

TEST(SelectErrors, PrunedInfeasibilitySaysSoAndResultsNameTheirLayout) {
  ProblemBuilder b = base();
  b.problem.transposeCost = nullptr;
  b.problem.tensors[1].fixedLayout = "ba"; // y is also a result
  Result<Solution> s = solveShortestPath(b.problem, {1}); // keeps y "ab" only
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "no feasible path: the frontier became empty at op 'A' (#0): "
                       "each of its 1 available configuration(s) needs a forbidden "
                       "transpose from each of the 1 state(s) before it, e.g. result "
                       "'y' written as 'ab' but fixed as 'ba' (layouts pruned to the 1 "
                       "best per tensor; a larger maxLayoutsPerTensor may help)");
  EXPECT_TRUE(solveShortestPath(b.problem).ok());
}

TEST(SelectErrors, MalformedAssignments) {
  ProblemBuilder b = base();
  EXPECT_EQ(evaluate(b.problem, {{0}, {}}).error(),
            "assignment has 1 configurations for 2 ops");
  EXPECT_EQ(evaluate(b.problem, {{0, 2}, {}}).error(),
            "assignment: op 'B' (#1) has no configuration 2");
  EXPECT_EQ(evaluate(b.problem, {{0, 0}, {1, -1, -1}}).error(),
            "assignment: layout 1 is not possible for argument 'x'");
  b.problem.ops[0].configs[1].available = false;
  Result<Evaluation> e = evaluate(b.problem, {{1, 0}, {}});
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->feasible);
  EXPECT_EQ(e->reason, "op 'A' (#0) config 1 ('c1') is not available (no measurement)");
}

} // namespace
} // namespace dmc::select::test
