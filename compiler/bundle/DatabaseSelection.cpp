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
  std::vector<int64_t> idOf;                    ///< problem tensor -> manifest tensor id
  const std::vector<const Record *> *records = nullptr; ///< every matched record

  int tensor(int64_t id) {
    auto it = index.find(id);
    if (it != index.end())
      return it->second;
    const dmrt::BundleTensor *t = m.tensor(id);
    select::Tensor st;
    st.name = t->name;
    st.layouts = {t->dims};
    index[id] = int(problem.tensors.size());
    idOf.push_back(id);
    problem.tensors.push_back(st);
    return index[id];
  }

  /// The fastest checked record of the transpose kernel that reads problem
  /// tensor `t` as `from` and writes it as `to` (tuningdb::transposeProblem);
  /// null when none was measured.
  const Record *transposeRecord(int t, const std::string &from, const std::string &to) const {
    tuningdb::Problem p = tuningdb::transposeProblem(*m.tensor(idOf[size_t(t)]), from, to);
    const Record *best = nullptr;
    for (const Record *r : *records) {
      dmrt::ConfigKernel knobs;
      if (r->kind == tuningdb::Kind::Kernel && tuningdb::sameProblem(p, *r) &&
          tuningdb::configKnobs(*r, knobs) && (!best || r->medianUs < best->medianUs))
        best = r;
    }
    return best;
  }

  /// The record's layout per problem tensor, or false when it moves a fixed
  /// tensor (other than at `mayDiffer`'s positions, reads that may go through
  /// a transpose) or gives one tensor two layouts.
  bool layoutsOf(const std::vector<int64_t> &ids, const Record &r,
                 std::map<int, std::string> &out, const std::set<size_t> &mayDiffer) {
    for (size_t i = 0; i < ids.size(); ++i) {
      const dmrt::BundleTensor *t = m.tensor(ids[i]);
      if (fixed.count(ids[i]) && r.layouts[i] != t->dims && !mayDiffer.count(i))
        return false;
      auto [it, fresh] = out.emplace(tensor(ids[i]), r.layouts[i]);
      if (!fresh && it->second != r.layouts[i])
        return false;
    }
    return true;
  }

  /// A step whose configurations are its records of `p`'s computation in
  /// any layouts, at `costOf` (a record it cannot use: < 0). The inputs at
  /// `transposable` positions may be read through a transpose (each tensor
  /// read only there).
  template <class CostOf>
  void addStep(const std::string &name, Step step, tuningdb::Problem p,
               const std::vector<const Record *> &matched, const std::string &unmeasured,
               const std::set<size_t> &transposable, CostOf costOf) {
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
    for (int t : op.reads) {
      bool may = true;
      for (size_t i = 0; i < inputs; ++i)
        if (tensor(step.ids[i]) == t)
          may &= transposable.count(i) > 0;
      op.transposable.push_back(may);
    }
    std::vector<const Record *> from;
    for (const Record *r : matched) {
      std::map<int, std::string> layouts;
      double cost = tuningdb::sameComputation(p, *r) ? costOf(*r) : -1;
      if (cost < 0 || !layoutsOf(step.ids, *r, layouts, transposable))
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
            "default knobs (not measured)", {}, [](const Record &r) {
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
    // Operands a and b may be read through a transpose (config.json
    // `transposes[]`, inserted before the contraction); a bias or an
    // accumulated D may not.
    addStep("c" + std::to_string(c.id), std::move(step), std::move(p), matched,
            "the heuristic's algorithm (not measured)", {0, 1}, [&](const Record &r) {
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

/// "k<n>_<rest>" -> n, or -1.
int kernelIndex(const std::string &name) {
  size_t us = name.find('_');
  if (name.size() < 3 || name[0] != 'k' || us == std::string::npos || us < 2)
    return -1;
  for (size_t i = 1; i < us; ++i)
    if (name[i] < '0' || name[i] > '9')
      return -1;
  return std::stoi(name.substr(1, us - 1));
}

/// Adds the selection's transposes (each with the record that priced it) to
/// `config` as dmc compile applies them: one kernel per tensor and layout,
/// inserted before the first contraction that reads it so (later kernels'
/// names move up by one), with its record's knobs.
void insertTransposes(const dmrt::Manifest &m,
                      std::vector<std::pair<dmrt::ConfigTranspose, const Record *>> added,
                      dmrt::Configuration &config, GlobalSelection &g) {
  if (added.empty())
    return;
  auto contractionIndex = [](const dmrt::ConfigTranspose &t) {
    return std::stoi(t.contraction.substr(1));
  };
  std::stable_sort(added.begin(), added.end(), [&](const auto &x, const auto &y) {
    return contractionIndex(x.first) < contractionIndex(y.first);
  });
  // Walk the steps: the kernels' new indices and each new kernel's.
  std::map<int, int> renamed; // old kernel index -> new
  std::vector<std::pair<int, const Record *>> fresh; // new kernel index, its record
  std::set<std::pair<std::string, std::string>> placed;
  int kernels = 0, inserted = 0;
  for (const dmrt::BundleStep &s : m.steps) {
    if (s.kind == dmrt::BundleStep::Kernel) {
      renamed[kernels] = kernels + inserted;
      ++kernels;
      continue;
    }
    const std::string name = "c" + std::to_string(s.id);
    for (const auto &[t, r] : added)
      if (t.contraction == name && placed.insert({t.tensor, t.dims}).second) {
        fresh.push_back({kernels + inserted, r});
        ++inserted;
        g.transposeUs += r ? r->medianUs : 0;
        // Before the contraction it serves, in that contraction's phase.
        g.addToPhase(m.contraction(s.id)->phase, r ? r->medianUs : 0);
      }
  }
  auto rename = [&](std::string &name) {
    if (int n = kernelIndex(name); n >= 0 && renamed.count(n))
      name = "k" + std::to_string(renamed[n]) + name.substr(name.find('_'));
  };
  for (dmrt::ConfigKernel &k : config.kernels)
    rename(k.name);
  for (auto &[name, us] : g.stepUs) // the prediction's names follow
    rename(name);
  for (const auto &[n, r] : fresh) {
    dmrt::ConfigKernel k;
    k.name = "k" + std::to_string(n) + "_transpose";
    g.stepUs.emplace_back(k.name, r ? r->medianUs : 0);
    if (r)
      tuningdb::configKnobs(*r, k);
    config.kernels.push_back(k);
  }
  std::stable_sort(config.kernels.begin(), config.kernels.end(),
                   [](const dmrt::ConfigKernel &x, const dmrt::ConfigKernel &y) {
                     return kernelIndex(x.name) < kernelIndex(y.name);
                   });
  for (const auto &[t, r] : added)
    config.transposes.push_back(t);
  std::stable_sort(config.transposes.begin(), config.transposes.end(),
                   [&](const dmrt::ConfigTranspose &x, const dmrt::ConfigTranspose &y) {
                     return contractionIndex(x) < contractionIndex(y);
                   });
  g.transposesInserted = int(fresh.size());
  g.predictedUs += g.transposeUs;
}

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
                       "contraction algorithm(s) and {10} layout(s) changed, {11} transpose(s) "
                       "inserted{12}\n",
                       configs, freeTensors, states, edges, us(predictedUs), us(lowerBoundUs),
                       chain, us(defaultUs), kernelsChanged, contractionsChanged,
                       layoutsChanged, transposesInserted,
                       transposesInserted ? " (" + us(transposeUs) + " us)" : std::string())
      .str();
}

GlobalSelection selectGlobally(const dmrt::Manifest &m, dmrt::Configuration &config,
                               const std::vector<const Record *> &matched) {
  GlobalSelection g;
  Builder b{m, fixedTensors(m), {}, {}, {}, {}, {}, {}, &matched};
  // A read in a layout other than the stored one pays the measured transpose
  // kernel; without a record it is forbidden.
  b.problem.transposeCost = [&b](int t, const std::string &from, const std::string &to) {
    const Record *r = b.transposeRecord(t, from, to);
    return r ? r->medianUs : select::kForbidden;
  };
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
  // By phase, as the bundle's steps say theirs (config.json's prediction).
  for (size_t i = 0; i < solution->assignment.configs.size(); ++i)
    if (const Record *r = b.chosenFrom[i][size_t(solution->assignment.configs[i])]) {
      const Step &s = b.steps[i];
      g.addToPhase(s.kernel ? s.kernel->phase : m.contractions[size_t(s.contraction)].phase,
                   r->medianUs);
      g.stepUs.emplace_back(s.kernel ? s.kernel->entry : "c" + std::to_string(s.contraction),
                            r->medianUs);
    }
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
  // The layout each tensor is stored in: its writer's, else its fixed one.
  std::vector<std::string> stored(b.problem.tensors.size());
  for (size_t t = 0; t < stored.size(); ++t)
    stored[t] = b.problem.tensors[t].fixedLayout;
  for (size_t i = 0; i < b.problem.ops.size(); ++i) {
    const select::Op &op = b.problem.ops[i];
    for (const select::TensorLayout &tl : op.configs[size_t(solution->assignment.configs[i])].layouts)
      if (std::find(op.writes.begin(), op.writes.end(), tl.tensor) != op.writes.end())
        stored[size_t(tl.tensor)] = tl.layout;
  }
  std::vector<std::pair<dmrt::ConfigTranspose, const Record *>> added;
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
      if (tl.layout != stored[size_t(tl.tensor)]) { // a contraction operand, transposed
        int64_t id = b.idOf[size_t(tl.tensor)];
        size_t at = size_t(std::find(step.ids.begin(), step.ids.end(), id) - step.ids.begin());
        const dmrt::BundleTensor *bt = m.tensor(id);
        added.push_back({{b.problem.ops[i].name, at == 0 ? "a" : "b", t.name, tl.layout,
                          2 * bt->numElements() * int64_t(dmrt::dtypeSize(bt->dtype))},
                         b.transposeRecord(tl.tensor, stored[size_t(tl.tensor)], tl.layout)});
        continue;
      }
      auto it = tensors.find(t.name);
      if (t.fixedLayout.empty() && it != tensors.end() && it->second->dims != tl.layout) {
        it->second->dims = tl.layout;
        ++g.layoutsChanged;
      }
    }
  }
  insertTransposes(m, added, config, g);
  return g;
}

} // namespace dmc::bundle
