//===- DatabaseSelection.cpp - One configuration by shortest path ---------===//
#include "compiler/bundle/DatabaseSelection.h"

#include "passes/select/SelectionReport.h"
#include "passes/select/ShortestPath.h"
#include "tuning-db/KnobSelection.h"
#include "tuning-db/Problem.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <set>

namespace dmc::bundle {
namespace {

using tuningdb::Record;

/// Tensors whose layout the selection keeps: the caller's, views and what
/// they view, and everything a contraction reads or writes.
std::set<int64_t> fixedTensors(const dmrt::Manifest &m) {
  std::set<int64_t> fixed;
  for (const dmrt::BundleTensor &t : m.tensors) {
    if (t.role != dmrt::TensorRole::Intermediate || t.isAlias)
      fixed.insert(t.id);
    if (t.isAlias)
      fixed.insert(t.aliasOf);
  }
  for (const dmrt::BundleContraction &c : m.contractions) {
    for (int64_t id : c.inputs())
      fixed.insert(id);
    for (int64_t id : c.outputs())
      fixed.insert(id);
  }
  return fixed;
}

struct Builder {
  const dmrt::Manifest &m;
  std::set<int64_t> fixed;
  select::ConfigProblem problem;
  std::map<int64_t, int> index;                 ///< manifest tensor id -> problem tensor
  std::vector<const dmrt::BundleKernel *> kernels; ///< per op
  std::vector<tuningdb::Problem> problems;         ///< per op: its default layouts' problem
  std::vector<std::vector<const Record *>> chosenFrom; ///< per op, per config (null: default)

  int tensor(int64_t id) {
    auto it = index.find(id);
    if (it != index.end())
      return it->second;
    const dmrt::BundleTensor *t = m.tensor(id);
    select::Tensor st;
    st.name = t->name;
    st.layouts = {t->dims};
    index[id] = int(problem.tensors.size());
    problem.tensors.push_back(st);
    return index[id];
  }

  /// The record's layout per problem tensor, or false when it moves a fixed
  /// tensor or gives one tensor two layouts.
  bool layoutsOf(const dmrt::BundleKernel &k, const Record &r,
                 std::map<int, std::string> &out) {
    std::vector<int64_t> ids = k.inputs;
    ids.insert(ids.end(), k.outputs.begin(), k.outputs.end());
    for (size_t i = 0; i < ids.size(); ++i) {
      const dmrt::BundleTensor *t = m.tensor(ids[i]);
      if (fixed.count(ids[i]) && r.layouts[i] != t->dims)
        return false;
      auto [it, fresh] = out.emplace(tensor(ids[i]), r.layouts[i]);
      if (!fresh && it->second != r.layouts[i])
        return false;
    }
    return true;
  }

  void addKernel(const dmrt::BundleKernel &k, const std::vector<const Record *> &matched) {
    select::Op op;
    op.name = k.entry;
    std::set<int64_t> outs(k.outputs.begin(), k.outputs.end());
    for (int64_t id : k.inputs)
      if (!outs.count(id) &&
          std::find(op.reads.begin(), op.reads.end(), tensor(id)) == op.reads.end())
        op.reads.push_back(tensor(id));
    for (int64_t id : k.outputs)
      op.writes.push_back(tensor(id));
    const tuningdb::Problem &p = problems.emplace_back(tuningdb::kernelProblem(m, k));
    std::vector<const Record *> from;
    for (const Record *r : matched) {
      std::map<int, std::string> layouts;
      dmrt::ConfigKernel knobs;
      if (!tuningdb::sameComputation(p, *r) || !tuningdb::configKnobs(*r, knobs) ||
          !layoutsOf(k, *r, layouts))
        continue;
      select::Config c;
      c.label = tuningdb::describeCandidate(*r);
      c.cost = r->medianUs;
      for (auto &[t, layout] : layouts) {
        c.layouts.push_back({t, layout});
        auto &candidates = problem.tensors[size_t(t)].layouts;
        if (std::find(candidates.begin(), candidates.end(), layout) == candidates.end())
          candidates.push_back(layout);
      }
      op.configs.push_back(c);
      from.push_back(r);
    }
    if (op.configs.empty()) { // no records: the default, at an unknown (zero) cost
      select::Config c;
      c.label = "default knobs (not measured)";
      for (int t : op.reads)
        c.layouts.push_back({t, problem.tensors[size_t(t)].layouts.front()});
      for (int t : op.writes)
        c.layouts.push_back({t, problem.tensors[size_t(t)].layouts.front()});
      op.configs.push_back(c);
      from.push_back(nullptr);
    }
    problem.ops.push_back(op);
    kernels.push_back(&k);
    chosenFrom.push_back(from);
  }

  /// Arguments (never written by a kernel) and fixed tensors keep their layout.
  void finish() {
    std::set<int> written;
    for (const select::Op &op : problem.ops)
      written.insert(op.writes.begin(), op.writes.end());
    for (auto &[id, t] : index) {
      select::Tensor &st = problem.tensors[size_t(t)];
      st.isArgument = !written.count(t);
      if (st.isArgument || fixed.count(id))
        st.fixedLayout = m.tensor(id)->dims;
    }
  }
};

} // namespace

std::string GlobalSelection::describe() const {
  if (!ok)
    return "global selection: none (" + error + "); the default configuration is kept\n";
  auto us = [](double x) { return x < 0 ? std::string("-") : llvm::formatv("{0:f2}", x).str(); };
  return llvm::formatv("global selection (shortest path, exact): {0} configuration(s), {1} "
                       "free tensor(s), {2} states, {3} edges; predicted {4} us, lower bound "
                       "{5} us, forward chain only {6} us, default {7} us; {8} kernel(s) and "
                       "{9} layout(s) changed\n",
                       configs, freeTensors, states, edges, us(predictedUs), us(lowerBoundUs),
                       us(chainUs), us(defaultUs), kernelsChanged, layoutsChanged)
      .str();
}

GlobalSelection selectGlobally(const dmrt::Manifest &m, dmrt::Configuration &config,
                               const std::vector<const Record *> &matched) {
  GlobalSelection g;
  Builder b{m, fixedTensors(m), {}, {}, {}, {}, {}};
  for (const dmrt::BundleStep &s : m.steps)
    if (s.kind == dmrt::BundleStep::Kernel)
      b.addKernel(*m.kernel(s.id), matched);
  b.finish();
  for (const select::Op &op : b.problem.ops)
    g.configs += op.configs.size();
  for (const select::Tensor &t : b.problem.tensors)
    g.freeTensors += t.fixedLayout.empty();
  auto solution = select::solveShortestPath(b.problem);
  if (!solution.ok()) {
    g.error = solution.error();
    return g;
  }
  g.ok = true;
  g.states = solution->states;
  g.edges = solution->edges;
  g.predictedUs = solution->cost;
  if (auto lb = select::lowerBound(b.problem); lb.ok())
    g.lowerBoundUs = *lb;
  if (auto chain = select::forwardChainOnly(b.problem); chain.ok() && chain->evaluation.feasible)
    g.chainUs = chain->evaluation.cost;
  std::map<std::string, dmrt::ConfigKernel *> knobs;
  for (dmrt::ConfigKernel &k : config.kernels)
    knobs[k.name] = &k;
  select::Assignment def; // each kernel's default knobs in the default layouts
  for (size_t i = 0; i < b.problem.ops.size(); ++i) {
    const dmrt::ConfigKernel *ck = knobs[b.kernels[i]->entry];
    const std::vector<std::string> &layouts = b.problems[i].layouts;
    int found = -1;
    for (size_t c = 0; c < b.chosenFrom[i].size() && found < 0; ++c) {
      const Record *r = b.chosenFrom[i][c];
      if (r && ck && tuningdb::knobsEqual(*r, *ck) && r->layouts == layouts)
        found = int(c);
    }
    def.configs.push_back(found);
  }
  if (std::find(def.configs.begin(), def.configs.end(), -1) == def.configs.end())
    if (auto e = select::evaluate(b.problem, def); e.ok() && e->feasible)
      g.defaultUs = e->cost;
  std::map<std::string, dmrt::ConfigTensor *> tensors;
  for (dmrt::ConfigTensor &t : config.tensors)
    tensors[t.name] = &t;
  for (size_t i = 0; i < b.problem.ops.size(); ++i) {
    int c = solution->assignment.configs[i];
    const Record *r = b.chosenFrom[i][size_t(c)];
    dmrt::ConfigKernel *ck = knobs[b.kernels[i]->entry];
    if (!r || !ck)
      continue;
    if (!tuningdb::knobsEqual(*r, *ck)) {
      tuningdb::configKnobs(*r, *ck); // complete: addKernel only took such records
      ++g.kernelsChanged;
    }
    for (const select::TensorLayout &tl : b.problem.ops[i].configs[size_t(c)].layouts) {
      const select::Tensor &t = b.problem.tensors[size_t(tl.tensor)];
      auto it = tensors.find(t.name);
      if (t.fixedLayout.empty() && it != tensors.end() && it->second->dims != tl.layout) {
        it->second->dims = tl.layout;
        ++g.layoutsChanged;
      }
    }
  }
  return g;
}

} // namespace dmc::bundle
