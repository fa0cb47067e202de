//===- ShortestPath.cpp - dynamic programming over the cuts --------------===//
#include "passes/select/ShortestPath.h"

#include "passes/select/PreparedProblem.h"
#include "passes/select/SelectionReport.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace dmc::select {
namespace {

/// A state at some cut. Its key (one byte per live tensor, the layout index)
/// is kept only while the cut is being expanded, and for cut 0.
struct Node {
  double dist;
  int32_t prev;   ///< node index at the previous cut
  int32_t config; ///< position in PreparedOp::configs of the op before
};

/// Start states: every combination of the storable layouts of live[0].
std::vector<std::string> startKeys(const PreparedProblem &p) {
  const std::vector<int> &live = p.live[0];
  std::vector<std::string> keys;
  std::vector<size_t> digit(live.size(), 0);
  while (true) {
    std::string key(live.size(), '\0');
    for (size_t j = 0; j < live.size(); ++j)
      key[j] = char(p.storable[live[j]][digit[j]]);
    keys.push_back(std::move(key));
    size_t j = 0;
    while (j < live.size() && ++digit[j] == p.storable[live[j]].size())
      digit[j++] = 0;
    if (j == live.size())
      return keys;
  }
}

size_t position(const std::vector<int> &v, int x) {
  return std::lower_bound(v.begin(), v.end(), x) - v.begin();
}

} // namespace

Result<Solution> solveShortestPath(const ConfigProblem &src, const SolveOptions &opts) {
  Result<PreparedProblem> prepared = prepare(src, opts.maxLayoutsPerTensor);
  if (!prepared.ok())
    return Result<Solution>::failure(prepared.error());
  const PreparedProblem &p = *prepared;
  const int numOps = int(p.ops.size());
  Solution sol;
  sol.pruned = p.pruned;
  sol.exact = !p.pruned;
  std::vector<std::vector<Node>> nodes(numOps + 1);
  const std::vector<std::string> keys0 = startKeys(p);
  nodes[0].assign(keys0.size(), Node{0, -1, -1});
  std::vector<std::string> keys = keys0;

  for (int i = 0; i < numOps; ++i) {
    const PreparedOp &op = p.ops[i];
    const std::vector<int> &live = p.live[i], &next = p.live[i + 1];
    std::vector<size_t> readSlot;
    for (int t : op.reads)
      readSlot.push_back(position(live, t));
    // For each tensor live after op i: its slot before (< live.size()), or
    // live.size() + the index of op i's write that produces it.
    std::vector<size_t> source;
    for (int t : next) {
      size_t s = position(live, t);
      if (s == live.size() || live[s] != t)
        s = live.size() + (std::find(op.writes.begin(), op.writes.end(), t) -
                           op.writes.begin());
      source.push_back(s);
    }
    std::unordered_map<std::string, int32_t> index;
    std::vector<std::string> nextKeys;
    std::vector<Node> &out = nodes[i + 1];
    std::string whyNot;
    std::string key(next.size(), '\0');
    for (size_t s = 0; s < keys.size(); ++s) {
      for (size_t ci = 0; ci < op.configs.size(); ++ci) {
        const PreparedConfig &c = op.configs[ci];
        // Same order of additions as evaluate(), so the costs agree exactly.
        double w = c.cost;
        for (size_t r = 0; r < op.reads.size(); ++r) {
          int t = op.reads[r], from = uint8_t(keys[s][readSlot[r]]);
          w += p.readTranspose(i, r, from, c.readLayout[r]);
          if (std::isinf(w) && whyNot.empty())
            whyNot = "tensor '" + p.tensorName(t) + "' stored as '" +
                     p.layoutName(t, from) + "' but read as '" +
                     p.layoutName(t, c.readLayout[r]) + "'";
        }
        for (size_t wi = 0; wi < op.writes.size(); ++wi) {
          int t = op.writes[wi];
          if (p.fixed[t] < 0)
            continue;
          w += p.transpose(t, c.writeLayout[wi], p.fixed[t]);
          if (std::isinf(w) && whyNot.empty())
            whyNot = "result '" + p.tensorName(t) + "' written as '" +
                     p.layoutName(t, c.writeLayout[wi]) + "' but fixed as '" +
                     p.layoutName(t, p.fixed[t]) + "'";
        }
        if (std::isinf(w))
          continue;
        ++sol.edges;
        for (size_t j = 0; j < next.size(); ++j)
          key[j] = source[j] < live.size()
                       ? keys[s][source[j]]
                       : char(c.writeLayout[source[j] - live.size()]);
        double d = nodes[i][s].dist + w;
        auto [it, fresh] = index.try_emplace(key, int32_t(out.size()));
        if (fresh) {
          out.push_back(Node{d, int32_t(s), int32_t(ci)});
          nextKeys.push_back(key);
        } else if (d < out[it->second].dist) {
          out[it->second] = Node{d, int32_t(s), int32_t(ci)};
        }
      }
    }
    if (out.empty()) {
      std::string msg = "no feasible path: the frontier became empty at op " +
                        p.opName(i) + ": each of its " +
                        std::to_string(op.configs.size()) +
                        " available configuration(s) needs a forbidden transpose from "
                        "each of the " + std::to_string(keys.size()) +
                        " state(s) before it, e.g. " + whyNot;
      if (p.pruned)
        msg += " (layouts pruned to the " + std::to_string(p.maxLayoutsPerTensor) +
               " best per tensor; a larger maxLayoutsPerTensor may help)";
      return Result<Solution>::failure(msg);
    }
    keys = std::move(nextKeys);
  }

  for (const std::vector<Node> &cut : nodes) {
    sol.statesPerCut.push_back(cut.size());
    sol.states += cut.size();
    sol.peakStates = std::max(sol.peakStates, cut.size());
  }
  // The end cut has no live tensor: one state.
  sol.cost = nodes[numOps][0].dist;
  sol.assignment.configs.assign(numOps, -1);
  int32_t at = 0;
  for (int c = numOps; c > 0; --c) {
    const Node &n = nodes[c][at];
    sol.assignment.configs[c - 1] = p.ops[c - 1].configs[n.config].index;
    at = n.prev;
  }
  sol.assignment.argumentLayouts.assign(src.tensors.size(), -1);
  for (size_t j = 0; j < p.live[0].size(); ++j)
    if (p.fixed[p.live[0][j]] < 0)
      sol.assignment.argumentLayouts[p.live[0][j]] = uint8_t(keys0[at][j]);
  return sol;
}

std::string formatSolution(const ConfigProblem &src, const Solution &s) {
  std::string out = "shortest path: " + formatMicros(s.cost) + " us, " +
                    std::to_string(s.states) + " states, " + std::to_string(s.edges) +
                    " edges, at most " + std::to_string(s.peakStates) +
                    " states per cut; " +
                    (s.exact ? "exact\n"
                             : "exact only over the pruned layouts (the true optimum "
                               "may be cheaper)\n");
  Result<Evaluation> e = evaluate(src, s.assignment);
  return out + (e.ok() ? formatEvaluation(src, *e) : "cannot evaluate: " + e.error() + "\n");
}

} // namespace dmc::select
