//===- ProblemBuilder.h - small ConfigProblems by hand, and brute force --===//
#ifndef DMC_TESTS_UNIT_SELECT_PROBLEMBUILDER_H
#define DMC_TESTS_UNIT_SELECT_PROBLEMBUILDER_H

#include "passes/select/SelectionReport.h"

#include <map>
#include <memory>
#include <optional>
#include <tuple>

namespace dmc::select::test {

/// Builds a ConfigProblem; transposes cost `defaultTranspose` unless set
/// per (tensor, from, to).
class ProblemBuilder {
public:
  explicit ProblemBuilder(double defaultTranspose = 1.0)
      : table_(std::make_shared<Table>()) {
    table_->fallback = defaultTranspose;
    std::shared_ptr<Table> table = table_;
    problem.transposeCost = [table](int t, const std::string &from,
                                    const std::string &to) {
      auto it = table->cost.find({t, from, to});
      return it == table->cost.end() ? table->fallback : it->second;
    };
  }
  int argument(const std::string &name, std::vector<std::string> layouts,
               const std::string &fixed = "") {
    problem.tensors.push_back({name, std::move(layouts), true, fixed});
    return int(problem.tensors.size()) - 1;
  }
  int tensor(const std::string &name, std::vector<std::string> layouts,
             const std::string &resultLayout = "") {
    problem.tensors.push_back({name, std::move(layouts), false, resultLayout});
    return int(problem.tensors.size()) - 1;
  }
  int op(const std::string &name, std::vector<int> reads, std::vector<int> writes) {
    problem.ops.push_back({name, std::move(reads), std::move(writes), {}});
    return int(problem.ops.size()) - 1;
  }
  void config(int op, double cost, std::vector<TensorLayout> layouts,
              bool available = true) {
    std::string label = "c" + std::to_string(problem.ops[op].configs.size());
    problem.ops[op].configs.push_back({label, std::move(layouts), cost, available});
  }
  void transpose(int t, const std::string &from, const std::string &to, double cost) {
    table_->cost[{t, from, to}] = cost;
  }
  void defaultTranspose(double cost) { table_->fallback = cost; }

  ConfigProblem problem;

private:
  struct Table {
    std::map<std::tuple<int, std::string, std::string>, double> cost;
    double fallback = 1.0;
  };
  std::shared_ptr<Table> table_;
};

/// The cheapest feasible assignment over every combination of configurations
/// (unavailable ones included: evaluate() rejects them), priced by evaluate().
inline std::optional<std::pair<double, std::vector<int>>>
bruteForce(const ConfigProblem &p) {
  std::optional<std::pair<double, std::vector<int>>> best;
  for (const Op &op : p.ops)
    if (op.configs.empty())
      return best;
  Assignment a;
  a.configs.assign(p.ops.size(), 0);
  while (true) {
    Result<Evaluation> e = evaluate(p, a);
    if (e.ok() && e->feasible && (!best || e->cost < best->first))
      best = {{e->cost, a.configs}};
    size_t i = 0;
    while (i < p.ops.size() && ++a.configs[i] == int(p.ops[i].configs.size()))
      a.configs[i++] = 0;
    if (i == p.ops.size())
      return best;
  }
}

} // namespace dmc::select::test

#endif
