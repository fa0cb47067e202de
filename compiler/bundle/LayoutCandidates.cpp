//===- LayoutCandidates.cpp - the tuner's contraction layout candidates ---===//
#include "compiler/bundle/LayoutCandidates.h"

#include "codegen/gemm/MappableLayouts.h"
#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/TensorTable.h"
#include "passes/LayoutRewrite.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace dmc::bundle {
namespace {

std::string namesOf(Value v) { return cast<dm::TensorType>(v.getType()).getNames().str(); }

/// Why the selection keeps `info`'s layout, or "" when it may move it.
std::string whyPinned(const TensorInfo &info, const TensorTable &table) {
  if (info.role != dmrt::TensorRole::Intermediate)
    return "the caller's";
  if (info.aliasOf >= 0)
    return "a view";
  for (const TensorInfo &t : table.tensors())
    if (t.aliasOf == info.id)
      return "viewed";
  layout::StorageClass cls = layout::storageClassOf(info.value);
  return cls.fixed;
}

/// Operand and result layouts of `op`, for comparing two graphs' steps.
std::string layoutsOf(Operation *op) {
  std::string s;
  for (Value v : op->getOperands())
    if (isa<dm::TensorType>(v.getType()))
      s += namesOf(v) + ",";
  s += "->";
  for (Value v : op->getResults())
    if (isa<dm::TensorType>(v.getType()))
      s += namesOf(v) + ",";
  return s;
}

} // namespace

std::string LayoutCandidate::describe() const {
  return contraction + " " + operand + " " + tensor + " " + from + " -> " + to +
         (transpose ? " through a transpose" : "");
}

std::string LayoutCandidates::summary(size_t contractions) const {
  std::string s = std::to_string(candidates.size()) + " layout candidate(s) (" +
                  std::to_string(transposes) + " through a transpose) over " +
                  std::to_string(contractions) + " contraction(s); " +
                  std::to_string(pinned) + " operand(s)/result(s) keep their layout";
  std::map<std::string, int> why;
  for (const std::string &w : pinnedWhy)
    ++why[w];
  std::string sep = " (";
  for (auto &[w, n] : why) {
    s += sep + std::to_string(n) + " " + w;
    sep = ", ";
  }
  return why.empty() ? s : s + ")";
}

llvm::Expected<LayoutCandidates> layoutCandidates(func::FuncOp f,
                                                  const dmrt::Configuration &config) {
  auto table = TensorTable::build(f);
  if (!table)
    return table.takeError();
  std::map<std::string, size_t> entryOf; // config.json tensor name -> index
  for (size_t i = 0; i < config.tensors.size(); ++i)
    entryOf[config.tensors[i].name] = i;
  LayoutCandidates out;
  std::set<std::string> made; // a tensor two contractions touch: one candidate per layout
  std::vector<LayoutCandidate> transposes;
  for (auto [n, c] : llvm::enumerate(f.getOps<dm::ContractOp>())) {
    if (!layout::isMappable(c))
      continue;
    const Value vs[3] = {c.getLhs(), c.getRhs(), c.getResult()};
    const std::string now[3] = {namesOf(vs[0]), namesOf(vs[1]), namesOf(vs[2])};
    std::vector<dmcgen::LayoutTriple> all = dmcgen::enumerateMappable(layout::contractionOf(c));
    for (int p = 0; p < 3; ++p) {
      const TensorInfo &info = table->tensors()[size_t(table->idOf(vs[p]))];
      // Tensor p's other layouts mappable with the other two kept, in
      // enumeration order.
      std::vector<std::string> others;
      for (const dmcgen::LayoutTriple &t : all) {
        const std::string got[3] = {t.a, t.b, t.d};
        bool othersKept = true;
        for (int q = 0; q < 3; ++q)
          othersKept &= q == p || got[q] == now[q];
        if (othersKept && got[p] != now[p] &&
            std::find(others.begin(), others.end(), got[p]) == others.end())
          others.push_back(got[p]);
      }
      auto candidate = [&](const std::string &to) {
        LayoutCandidate cand;
        cand.contraction = contractionName(n);
        cand.operand = "abd"[p];
        cand.tensor = info.name;
        cand.from = now[p];
        cand.to = to;
        cand.config = config;
        // Each kernel gets codegen's default knobs for its layouts (a moved
        // tensor changes what some kernels read or write; an inserted
        // transpose shifts the kernels' names).
        cand.config.kernels.clear();
        return cand;
      };
      // Through a transpose: an operand, pinned or not.
      for (const std::string &to : p == 2 ? std::vector<std::string>{} : others) {
        LayoutCandidate cand = candidate(to);
        cand.transpose = true;
        cand.config.transposes.push_back(
            {cand.contraction, std::string(1, cand.operand), info.name, to,
             2 * cast<dm::TensorType>(vs[p].getType()).getSizeInBytes()});
        transposes.push_back(std::move(cand));
      }
      std::string why = whyPinned(info, *table);
      auto entry = entryOf.find(info.name);
      if (why.empty() && entry == entryOf.end())
        why = "not in the configuration";
      if (!why.empty()) {
        ++out.pinned;
        out.pinnedWhy.push_back(why);
        continue;
      }
      for (const std::string &to : others) {
        if (!made.insert(info.name + " " + to).second)
          continue;
        LayoutCandidate cand = candidate(to);
        cand.config.tensors[entry->second].dims = to;
        out.candidates.push_back(std::move(cand));
      }
    }
  }
  out.transposes = int(transposes.size());
  for (LayoutCandidate &c : transposes)
    out.candidates.push_back(std::move(c));
  return out;
}

std::vector<std::string> transposeSteps(func::FuncOp candidate, const std::string &contraction) {
  std::vector<dm::ContractOp> contractions(candidate.getOps<dm::ContractOp>().begin(),
                                           candidate.getOps<dm::ContractOp>().end());
  size_t n = size_t(std::stoi(contraction.substr(1)));
  if (n >= contractions.size())
    return {};
  for (auto [i, k] : llvm::enumerate(candidate.getOps<dm::KernelOp>()))
    if (k->hasAttr(layout::kInsertedAttr))
      for (Operation *user : k.getResult(0).getUsers())
        if (user == contractions[n].getOperation())
          return {"k" + std::to_string(i), contraction};
  return {};
}

std::vector<std::string> changedSteps(func::FuncOp base, func::FuncOp candidate) {
  std::vector<std::string> steps;
  auto diff = [&](auto ops0, auto ops1, const char *prefix) {
    std::vector<Operation *> a, b;
    for (auto op : ops0)
      a.push_back(op.getOperation());
    for (auto op : ops1)
      b.push_back(op.getOperation());
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (layoutsOf(a[i]) != layoutsOf(b[i]))
        steps.push_back(prefix + std::to_string(i));
    return true;
  };
  if (!diff(base.getOps<dm::KernelOp>(), candidate.getOps<dm::KernelOp>(), "k") ||
      !diff(base.getOps<dm::ContractOp>(), candidate.getOps<dm::ContractOp>(), "c"))
    return {};
  return steps;
}

} // namespace dmc::bundle
