//===- ForwardChain.cpp - Substation-style chain selection ---------------===//
#include "passes/select/SelectionReport.h"

#include "passes/select/PreparedProblem.h"

#include <algorithm>
#include <cmath>

namespace dmc::select {
namespace {

/// The chain model's cost of configuration b of op i after configuration a
/// of op i-1 (a = nullptr for op 0); see SelectionReport.h.
double chainEdge(const PreparedProblem &p, int i, const PreparedConfig *a,
                 const PreparedConfig &b) {
  const PreparedOp &op = p.ops[i];
  double w = b.cost;
  for (size_t r = 0; r < op.reads.size(); ++r) {
    int t = op.reads[r];
    if (a && p.producer[t] == i - 1) {
      const std::vector<int> &prevWrites = p.ops[i - 1].writes;
      size_t wi = std::find(prevWrites.begin(), prevWrites.end(), t) - prevWrites.begin();
      w += p.readTranspose(i, r, a->writeLayout[wi], b.readLayout[r]);
    } else if (p.producer[t] < 0 && p.fixed[t] >= 0) {
      w += p.readTranspose(i, r, p.fixed[t], b.readLayout[r]);
    }
  }
  for (size_t wi = 0; wi < op.writes.size(); ++wi)
    if (p.fixed[op.writes[wi]] >= 0)
      w += p.transpose(op.writes[wi], b.writeLayout[wi], p.fixed[op.writes[wi]]);
  return w;
}

} // namespace

Result<ChainSelection> forwardChainOnly(const ConfigProblem &src) {
  Result<PreparedProblem> prepared = prepare(src);
  if (!prepared.ok())
    return Result<ChainSelection>::failure(prepared.error());
  const PreparedProblem &p = *prepared;
  const int numOps = int(p.ops.size());
  // dist[i][b]: cheapest chain cost through op i ending in its config b.
  std::vector<std::vector<double>> dist(numOps);
  std::vector<std::vector<int>> prev(numOps);
  for (int i = 0; i < numOps; ++i) {
    const std::vector<PreparedConfig> &cs = p.ops[i].configs;
    dist[i].assign(cs.size(), kForbidden);
    prev[i].assign(cs.size(), -1);
    for (size_t b = 0; b < cs.size(); ++b) {
      if (i == 0) {
        dist[0][b] = chainEdge(p, 0, nullptr, cs[b]);
        continue;
      }
      for (size_t a = 0; a < p.ops[i - 1].configs.size(); ++a) {
        double d = dist[i - 1][a] + chainEdge(p, i, &p.ops[i - 1].configs[a], cs[b]);
        if (d < dist[i][b]) {
          dist[i][b] = d;
          prev[i][b] = int(a);
        }
      }
    }
    if (std::all_of(dist[i].begin(), dist[i].end(),
                    [](double d) { return std::isinf(d); }))
      return Result<ChainSelection>::failure(
          "forward-chain selection: no configuration of op " + p.opName(i) +
          " is reachable" +
          (i ? " from op " + p.opName(i - 1) + "'s" : std::string(" at the start")) +
          " (forbidden transposes)");
  }
  ChainSelection sel;
  sel.assignment.configs.assign(numOps, -1);
  if (numOps > 0) {
    const std::vector<double> &last = dist[numOps - 1];
    int b = int(std::min_element(last.begin(), last.end()) - last.begin());
    sel.chainCost = last[b];
    for (int i = numOps - 1; i >= 0; --i) {
      sel.assignment.configs[i] = p.ops[i].configs[b].index;
      b = prev[i][b];
    }
  }
  Result<Evaluation> e = evaluate(src, sel.assignment);
  if (!e.ok())
    return Result<ChainSelection>::failure(e.error());
  sel.evaluation = *e;
  return sel;
}

} // namespace dmc::select
