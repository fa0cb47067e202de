//===- RandomProblemTest.cpp - the DP against brute force, seeded --------===//
//
// Small random problems with skip reads (residuals, saved activations),
// free and fixed arguments, results, unavailable configurations, forbidden
// transposes and reads that may not go through a transpose. Costs are multiples of 0.5, so every sum is exact.
//
//===----------------------------------------------------------------------===//
#include "ProblemBuilder.h"

#include "passes/select/ShortestPath.h"

#include <gtest/gtest.h>

#include <random>

namespace dmc::select::test {
namespace {

class Generator {
public:
  explicit Generator(unsigned seed) : rng_(seed), flags_(seed ^ 0x5A5A5A5Au) {}

  ConfigProblem make() {
    ProblemBuilder b;
    std::vector<int> readable;
    for (int a = 0, n = pick(1, 2); a < n; ++a)
      readable.push_back(b.argument("x" + std::to_string(a), layouts(),
                                    coin(0.5) ? "l0" : ""));
    for (int i = 0, numOps = pick(3, 7); i < numOps; ++i) {
      std::vector<int> reads;
      for (int r = 0, n = pick(1, 3); r < n; ++r) {
        int t = readable[pick(0, int(readable.size()) - 1)];
        if (std::find(reads.begin(), reads.end(), t) == reads.end())
          reads.push_back(t);
      }
      std::vector<int> writes;
      for (int w = 0, n = coin(0.25) ? 2 : 1; w < n; ++w)
        writes.push_back(b.tensor("t" + std::to_string(i) + "_" + std::to_string(w),
                                  layouts(), coin(0.2) ? "l1" : ""));
      int op = b.op("op" + std::to_string(i), reads, writes);
      // Some reads may not go through a transpose (drawn from a stream of
      // their own, so the problems are otherwise those of the seed).
      if (std::bernoulli_distribution(0.1)(flags_))
        for (size_t r = 0; r < reads.size(); ++r)
          b.problem.ops[size_t(op)].transposable.push_back(
              std::bernoulli_distribution(0.5)(flags_));
      for (int c = 0, n = pick(1, 3); c < n; ++c) {
        std::vector<TensorLayout> ls;
        for (int t : reads)
          ls.push_back({t, randomLayout(b.problem.tensors[t])});
        for (int t : writes)
          ls.push_back({t, randomLayout(b.problem.tensors[t])});
        b.config(op, 0.5 * pick(1, 20), ls, c == 0 || !coin(0.15));
      }
      readable.insert(readable.end(), writes.begin(), writes.end());
    }
    for (int t = 0; t < int(b.problem.tensors.size()); ++t)
      for (const std::string &from : b.problem.tensors[t].layouts)
        for (const std::string &to : b.problem.tensors[t].layouts)
          b.transpose(t, from, to, coin(0.2) ? kForbidden : 0.5 * pick(0, 8));
    return b.problem;
  }

private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng_); }
  std::vector<std::string> layouts() {
    return pick(0, 1) ? std::vector<std::string>{"l0", "l1"}
                      : std::vector<std::string>{"l0", "l1", "l2"};
  }
  std::string randomLayout(const Tensor &t) {
    return t.layouts[pick(0, int(t.layouts.size()) - 1)];
  }
  std::mt19937 rng_, flags_;
};

TEST(RandomProblems, ShortestPathEqualsBruteForceAndBoundsHold) {
  int feasible = 0, chainWorse = 0, pruneWorse = 0, skips = 0;
  for (unsigned seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ConfigProblem p = Generator(seed).make();
    for (size_t i = 0; i < p.ops.size(); ++i)
      for (int t : p.ops[i].reads)
        skips += t >= 0 && !p.tensors[t].isArgument &&
                 std::find(p.ops[i - 1].writes.begin(), p.ops[i - 1].writes.end(), t) ==
                     p.ops[i - 1].writes.end();
    auto brute = bruteForce(p);
    Result<Solution> s = solveShortestPath(p);
    if (!brute) {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.error().find("no feasible path"), std::string::npos) << s.error();
      continue;
    }
    ++feasible;
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(s->cost, brute->first);
    ASSERT_EQ(s->statesPerCut.size(), p.ops.size() + 1);
    EXPECT_EQ(s->statesPerCut.back(), 1u);
    Result<Evaluation> e = evaluate(p, s->assignment);
    ASSERT_TRUE(e.ok() && e->feasible);
    EXPECT_EQ(e->cost, s->cost);
    EXPECT_LE(*lowerBound(p), s->cost);

    Result<ChainSelection> chain = forwardChainOnly(p);
    // The chain model leaves out costs only: it believes at most the optimum,
    // and at most what its own choice truly costs.
    if (chain.ok()) {
      EXPECT_LE(chain->chainCost, s->cost);
    }
    if (chain.ok() && chain->evaluation.feasible) {
      EXPECT_LE(chain->chainCost, chain->evaluation.cost);
      EXPECT_GE(chain->evaluation.cost, s->cost);
      chainWorse += chain->evaluation.cost > s->cost;
    }
    Result<Evaluation> def = evaluate(p, {std::vector<int>(p.ops.size(), 0), {}});
    ASSERT_TRUE(def.ok());
    if (def->feasible) {
      EXPECT_GE(def->cost, s->cost);
    }

    Result<Solution> pruned = solveShortestPath(p, {1});
    if (pruned.ok()) {
      EXPECT_GE(pruned->cost, s->cost);
      EXPECT_LE(pruned->peakStates, s->peakStates);
      EXPECT_EQ(evaluate(p, pruned->assignment)->cost, pruned->cost);
      EXPECT_EQ(pruned->exact, !pruned->pruned);
      pruneWorse += pruned->cost > s->cost;
    } else {
      EXPECT_NE(pruned.error().find("layouts pruned to the 1 best"), std::string::npos)
          << pruned.error();
    }
  }
  // The sample exercises what it claims to: mostly feasible problems, skip
  // reads, and cases where the chain and pruning do lose.
  EXPECT_GE(feasible, 180); // 190 of these 300 (211 before reads that may not transpose)
  EXPECT_GE(skips, 300);
  EXPECT_GT(chainWorse, 0);
  EXPECT_GT(pruneWorse, 0);
  std::printf("feasible %d / 300, skip reads %d, chain worse %d, k=1 worse %d\n",
              feasible, skips, chainWorse, pruneWorse);
}

} // namespace
} // namespace dmc::select::test
