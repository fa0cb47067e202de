//===- SelectionReport.cpp - pricing and printing full assignments -------===//
#include "passes/select/SelectionReport.h"

#include "passes/select/PreparedProblem.h"

#include <cmath>
#include <cstdio>

namespace dmc::select {
namespace {

/// Per tensor and op read, the layout index the assignment reads it in.
int readLayoutOf(const ConfigProblem &src, const Assignment &a, int op, size_t r) {
  const Op &o = src.ops[op];
  const Config &c = o.configs[a.configs[op]];
  for (const TensorLayout &tl : c.layouts)
    if (tl.tensor == o.reads[r]) {
      const std::vector<std::string> &ls = src.tensors[tl.tensor].layouts;
      for (size_t l = 0; l < ls.size(); ++l)
        if (ls[l] == tl.layout)
          return int(l);
    }
  return -1; // unreachable after prepare()
}

/// The cheapest layout of free argument `t` for the readers' layouts (each
/// read pays its own transpose), lowest index on ties; -1 if none works.
int cheapestArgumentLayout(const PreparedProblem &p, const Assignment &a, int t) {
  const ConfigProblem &src = *p.source;
  int best = -1;
  double bestCost = kForbidden;
  for (int from = 0; from < int(src.tensors[t].layouts.size()); ++from) {
    double sum = 0;
    for (int i = 0; i < int(src.ops.size()); ++i)
      for (size_t r = 0; r < src.ops[i].reads.size(); ++r)
        if (src.ops[i].reads[r] == t)
          sum += p.readTranspose(i, r, from, readLayoutOf(src, a, i, r));
    if (sum < bestCost) {
      best = from;
      bestCost = sum;
    }
  }
  return best;
}

} // namespace

std::string formatMicros(double us) {
  if (std::isinf(us))
    return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", us);
  return buf;
}

Result<Evaluation> evaluate(const ConfigProblem &src, const Assignment &a) {
  Result<PreparedProblem> prepared = prepare(src);
  if (!prepared.ok())
    return Result<Evaluation>::failure(prepared.error());
  const PreparedProblem &p = *prepared;
  const int numOps = int(src.ops.size()), numTensors = int(src.tensors.size());
  if (int(a.configs.size()) != numOps)
    return Result<Evaluation>::failure(
        "assignment has " + std::to_string(a.configs.size()) + " configurations for " +
        std::to_string(numOps) + " ops");
  if (!a.argumentLayouts.empty() && int(a.argumentLayouts.size()) != numTensors)
    return Result<Evaluation>::failure("assignment has argument layouts for " +
                                       std::to_string(a.argumentLayouts.size()) +
                                       " tensors, the problem has " +
                                       std::to_string(numTensors));
  for (int i = 0; i < numOps; ++i)
    if (a.configs[i] < 0 || a.configs[i] >= int(src.ops[i].configs.size()))
      return Result<Evaluation>::failure("assignment: op " + p.opName(i) +
                                         " has no configuration " +
                                         std::to_string(a.configs[i]));
  Evaluation e;
  e.storedLayout.assign(numTensors, -1);
  for (int i = 0; i < numOps; ++i) {
    const Config &c = src.ops[i].configs[a.configs[i]];
    if (!c.available) {
      e.reason = "op " + p.opName(i) + " config " + std::to_string(a.configs[i]) +
                 " ('" + c.label + "') is not available (no measurement)";
      return e;
    }
    for (const PreparedConfig &pc : p.ops[i].configs)
      if (pc.index == a.configs[i])
        for (size_t w = 0; w < src.ops[i].writes.size(); ++w)
          e.storedLayout[src.ops[i].writes[w]] = pc.writeLayout[w];
  }
  for (int t = 0; t < numTensors; ++t) {
    if (p.producer[t] >= 0 || p.lastRead[t] < 0)
      continue;
    int given = a.argumentLayouts.empty() ? -1 : a.argumentLayouts[t];
    int layout = p.fixed[t] >= 0 ? p.fixed[t] : given;
    if (given >= int(src.tensors[t].layouts.size()) || (given >= 0 && given != layout))
      return Result<Evaluation>::failure("assignment: layout " + std::to_string(given) +
                                         " is not possible for argument '" +
                                         src.tensors[t].name + "'");
    if (layout < 0 && !a.argumentLayouts.empty())
      return Result<Evaluation>::failure("assignment: no layout for argument '" +
                                         src.tensors[t].name + "'");
    e.storedLayout[t] = layout >= 0 ? layout : cheapestArgumentLayout(p, a, t);
    if (e.storedLayout[t] < 0) {
      e.reason = "argument '" + src.tensors[t].name +
                 "': no layout reaches every layout its readers use";
      return e;
    }
  }
  for (int i = 0; i < numOps; ++i) {
    OpCharge charge;
    charge.config = a.configs[i];
    charge.configCost = src.ops[i].configs[charge.config].cost;
    charge.total = charge.configCost;
    auto pay = [&](int t, int from, int to, bool forResult, size_t r) {
      double cost = forResult ? p.transpose(t, from, to) : p.readTranspose(i, r, from, to);
      if (from != to)
        charge.transposes.push_back({t, from, to, cost, forResult});
      charge.total += cost;
      if (std::isinf(cost) && e.reason.empty())
        e.reason = "op " + p.opName(i) + (forResult ? " writes result '" : " reads '") +
                   src.tensors[t].name + "' as '" +
                   p.layoutName(t, forResult ? from : to) + "' but it is " +
                   (forResult ? "fixed as '" : "stored as '") +
                   p.layoutName(t, forResult ? to : from) +
                   "', and that transpose is forbidden";
    };
    for (size_t r = 0; r < src.ops[i].reads.size(); ++r) {
      int t = src.ops[i].reads[r];
      pay(t, e.storedLayout[t], readLayoutOf(src, a, i, r), false, r);
    }
    for (int t : src.ops[i].writes)
      if (p.fixed[t] >= 0)
        pay(t, e.storedLayout[t], p.fixed[t], true, 0);
    e.cost += charge.total;
    e.ops.push_back(std::move(charge));
  }
  e.feasible = e.reason.empty();
  return e;
}

Result<double> lowerBound(const ConfigProblem &src) {
  Result<PreparedProblem> prepared = prepare(src);
  if (!prepared.ok())
    return Result<double>::failure(prepared.error());
  double sum = 0;
  for (const PreparedOp &op : prepared->ops) {
    double best = kForbidden;
    for (const PreparedConfig &c : op.configs)
      best = c.cost < best ? c.cost : best;
    sum += best;
  }
  return sum;
}

std::string formatEvaluation(const ConfigProblem &src, const Evaluation &e) {
  if (!e.feasible)
    return "infeasible: " + e.reason + "\n";
  std::string out;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const OpCharge &c = e.ops[i];
    out += "op #" + std::to_string(i) + " '" + src.ops[i].name + "': config " +
           std::to_string(c.config) + " '" + src.ops[i].configs[c.config].label + "' " +
           formatMicros(c.configCost) + " us\n";
    for (const TransposeCharge &t : c.transposes) {
      const std::vector<std::string> &ls = src.tensors[t.tensor].layouts;
      out += "    transpose '" + src.tensors[t.tensor].name + "' " + ls[t.from] +
             " -> " + ls[t.to] + " " + formatMicros(t.cost) + " us" +
             (t.forResult ? " (to the result's fixed layout)\n" : "\n");
    }
  }
  return out + "total " + formatMicros(e.cost) + " us\n";
}

} // namespace dmc::select
