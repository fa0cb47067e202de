//===- DatabaseSelection.cpp - One configuration by shortest path ---------===//
#include "compiler/bundle/DatabaseSelection.h"

#include "passes/select/SelectionReport.h"
#include "runtime/format/GemmAlgoConfig.h"
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
/// they view. A contraction's operands and result move with its records.
std::set<int64_t> fixedTensors(const dmrt::Manifest &m) {
  std::set<int64_t> fixed;
  for (const dmrt::BundleTensor &t : m.tensors) {
    if (t.role != dmrt::TensorRole::Intermediate || t.isAlias)
      fixed.insert(t.id);
    if (t.isAlias)
      fixed.insert(t.aliasOf);
  }
  for (const dmrt::BundleContraction &c : m.contractions)
    if (!c.mappable) // not a step of the selection: it keeps its layouts
      for (const std::vector<int64_t> &ids : {c.inputs(), c.outputs()})
        fixed.insert(ids.begin(), ids.end());
  return fixed;
}

/// Whether `r` is the default's algorithm: the heuristic's, measured as the
/// step ran ("heuristic") or as rank 0 of a sweep.
bool isDefaultAlgorithm(const Record &r) {
  auto rank = r.knobs.find("heuristic_rank");
  return r.algorithm == dmrt::kHeuristicAlgorithm ||
         (rank != r.knobs.end() && rank->second == tuningdb::Knob(int64_t(0)));
}

/// One step of the problem: a kernel or a contraction of the manifest.
struct Step {
  const dmrt::BundleKernel *kernel = nullptr;
  int contraction = -1; ///< position in the manifest's contractions
  std::vector<int64_t> ids; ///< inputs, then outputs (the records' layouts order)
};

struct Builder {
  const dmrt::Manifest &m;
  std::set<int64_t> fixed;
  select::ConfigProblem problem;
  std::map<int64_t, int> index;                 ///< manifest tensor id -> problem tensor
  std::vector<Step> steps;                      ///< per op
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
  bool layoutsOf(const std::vector<int64_t> &ids, const Record &r,
                 std::map<int, std::string> &out) {
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

  /// A step whose configurations are its records of `p`'s computation in
  /// any layouts, at `costOf` (a record it cannot use: < 0).
  template <class CostOf>
  void addStep(const std::string &name, Step step, tuningdb::Problem p,
               const std::vector<const Record *> &matched, const std::string &unmeasured,
               CostOf costOf) {
    select::Op op;
    op.name = name;
    size_t inputs = step.ids.size() - (step.kernel ? step.kernel->outputs.size()
                                                   : m.contractions[size_t(step.contraction)]
                                                         .outputs()
                                                         .size());
    std::set<int64_t> outs(step.ids.begin() + long(inputs), step.ids.end());
    for (size_t i = 0; i < inputs; ++i)
      if (!outs.count(step.ids[i]) &&
          std::find(op.reads.begin(), op.reads.end(), tensor(step.ids[i])) == op.reads.end())
        op.reads.push_back(tensor(step.ids[i]));
    for (int64_t id : outs)
      op.writes.push_back(tensor(id));
    std::vector<const Record *> from;
    for (const Record *r : matched) {
      std::map<int, std::string> layouts;
      double cost = tuningdb::sameComputation(p, *r) ? costOf(*r) : -1;
      if (cost < 0 || !layoutsOf(step.ids, *r, layouts))
        continue;
      select::Config c;
      c.label = tuningdb::describeCandidate(*r);
      c.cost = cost;
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
      c.label = unmeasured;
      for (int t : op.reads)
        c.layouts.push_back({t, problem.tensors[size_t(t)].layouts.front()});
      for (int t : op.writes)
        c.layouts.push_back({t, problem.tensors[size_t(t)].layouts.front()});
      op.configs.push_back(c);
      from.push_back(nullptr);
    }
    problem.ops.push_back(op);
    steps.push_back(std::move(step));
    problems.push_back(std::move(p));
    chosenFrom.push_back(from);
  }

  void addKernel(const dmrt::BundleKernel &k, const std::vector<const Record *> &matched) {
    Step step{&k, -1, k.inputs};
    step.ids.insert(step.ids.end(), k.outputs.begin(), k.outputs.end());
    addStep(k.entry, std::move(step), tuningdb::kernelProblem(m, k), matched,
            "default knobs (not measured)", [](const Record &r) {
              dmrt::ConfigKernel knobs;
              return tuningdb::configKnobs(r, knobs) ? r.medianUs : -1.0;
            });
  }

  /// A contraction's configurations: its algorithms in every measured
  /// layout; all but the default's (the heuristic in the default layouts)
  /// pay kAlgorithmMinGain, so that noise does not move it.
  void addContraction(size_t n, const std::vector<const Record *> &matched) {
    const dmrt::BundleContraction &c = m.contractions[n];
    Step step{nullptr, int(n), c.inputs()};
    std::vector<int64_t> outs = c.outputs();
    step.ids.insert(step.ids.end(), outs.begin(), outs.end());
    tuningdb::Problem p = tuningdb::contractionProblem(m, c);
    std::vector<std::string> defaults = p.layouts;
    addStep("c" + std::to_string(c.id), std::move(step), std::move(p), matched,
            "the heuristic's algorithm (not measured)", [&](const Record &r) {
              if (r.kind != tuningdb::Kind::Contraction)
                return -1.0;
              bool isDefault = isDefaultAlgorithm(r) && r.layouts == defaults;
              return r.medianUs * (isDefault ? 1.0 : 1.0 + tuningdb::kAlgorithmMinGain);
            });
  }

  /// Arguments (never written by a step) and fixed tensors keep their layout.
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
  std::string chain = us(chainUs) + " us";
  if (chainUs >= 0 && chainInconsistent)
    chain += " (inconsistent: a tensor read in a layout its writer, not the step before, did "
             "not write)";
  return llvm::formatv("global selection (shortest path, exact): {0} configuration(s), {1} "
                       "free tensor(s), {2} states, {3} edges; predicted {4} us, lower bound "
                       "{5} us, forward chain only {6}, default {7} us; {8} kernel(s), {9} "
                       "contraction algorithm(s) and {10} layout(s) changed\n",
                       configs, freeTensors, states, edges, us(predictedUs), us(lowerBoundUs),
                       chain, us(defaultUs), kernelsChanged, contractionsChanged,
                       layoutsChanged)
      .str();
}

GlobalSelection selectGlobally(const dmrt::Manifest &m, dmrt::Configuration &config,
                               const std::vector<const Record *> &matched) {
  GlobalSelection g;
  Builder b{m, fixedTensors(m), {}, {}, {}, {}, {}};
  std::map<int64_t, size_t> contractionAt; // manifest id -> position
  for (size_t n = 0; n < m.contractions.size(); ++n)
    contractionAt[m.contractions[n].id] = n;
  for (const dmrt::BundleStep &s : m.steps)
    if (s.kind == dmrt::BundleStep::Kernel)
      b.addKernel(*m.kernel(s.id), matched);
    else if (m.contraction(s.id)->mappable)
      b.addContraction(contractionAt[s.id], matched);
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
  std::map<std::string, dmrt::ConfigKernel *> knobs;
  for (dmrt::ConfigKernel &k : config.kernels)
    knobs[k.name] = &k;
  std::map<std::string, dmrt::ConfigContraction *> contractions;
  for (dmrt::ConfigContraction &c : config.contractions)
    contractions[c.name] = &c;
  // The default: each kernel's default knobs, each contraction's heuristic,
  // in the default layouts.
  select::Assignment def;
  for (size_t i = 0; i < b.problem.ops.size(); ++i) {
    const Step &step = b.steps[i];
    const dmrt::ConfigKernel *ck = step.kernel ? knobs[step.kernel->entry] : nullptr;
    const std::vector<std::string> &layouts = b.problems[i].layouts;
    int found = -1;
    for (size_t c = 0; c < b.chosenFrom[i].size() && found < 0; ++c) {
      const Record *r = b.chosenFrom[i][c];
      bool isDefault = r && (step.kernel ? ck && tuningdb::knobsEqual(*r, *ck)
                                         : isDefaultAlgorithm(*r));
      if (isDefault && r->layouts == layouts)
        found = int(c);
    }
    def.configs.push_back(found);
  }
  // Times are the records' medians (the path's costs carry the contractions'
  // penalty against noise).
  auto timeOf = [&](const select::Assignment &a, double &contractionUs) {
    double us = 0;
    contractionUs = 0;
    for (size_t i = 0; i < a.configs.size(); ++i)
      if (const Record *r = b.chosenFrom[i][size_t(a.configs[i])]) {
        us += r->medianUs;
        if (!b.steps[i].kernel)
          contractionUs += r->medianUs;
      }
    return us;
  };
  g.predictedUs = timeOf(solution->assignment, g.contractionUs);
  // The lower bound and the chain in the records' medians too: the path's
  // penalty is a tie-breaker against noise, not a time.
  for (const std::vector<const Record *> &from : b.chosenFrom) {
    double best = -1;
    for (const Record *r : from)
      if (r && (best < 0 || r->medianUs < best))
        best = r->medianUs;
    g.lowerBoundUs += std::max(best, 0.0);
  }
  if (auto chain = select::forwardChainOnly(b.problem); chain.ok()) {
    double unused = 0;
    g.chainUs = timeOf(chain->assignment, unused);
    g.chainInconsistent = !chain->evaluation.feasible;
  }
  if (std::find(def.configs.begin(), def.configs.end(), -1) == def.configs.end())
    if (auto e = select::evaluate(b.problem, def); e.ok() && e->feasible)
      g.defaultUs = timeOf(def, g.defaultContractionUs);
  std::map<std::string, dmrt::ConfigTensor *> tensors;
  for (dmrt::ConfigTensor &t : config.tensors)
    tensors[t.name] = &t;
  for (size_t i = 0; i < b.problem.ops.size(); ++i) {
    int c = solution->assignment.configs[i];
    const Record *r = b.chosenFrom[i][size_t(c)];
    const Step &step = b.steps[i];
    if (!r)
      continue;
    if (step.kernel) {
      dmrt::ConfigKernel *ck = knobs[step.kernel->entry];
      if (!ck)
        continue;
      if (!tuningdb::knobsEqual(*r, *ck)) {
        tuningdb::configKnobs(*r, *ck); // complete: addKernel only took such records
        ++g.kernelsChanged;
      }
    } else if (dmrt::ConfigContraction *cc = contractions[b.problem.ops[i].name]) {
      // The heuristic's own choice stays "heuristic" (cuBLASLt picks it again).
      std::string algorithm =
          isDefaultAlgorithm(*r) ? std::string(dmrt::kHeuristicAlgorithm) : r->algorithm;
      if (cc->algorithm != algorithm) {
        cc->algorithm = algorithm;
        ++g.contractionsChanged;
      }
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
