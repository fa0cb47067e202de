//===- LayerPlan.cpp - What running a bundle as a layer needs -------------===//
#include "runtime/LayerPlan.h"

#include "runtime/format/ArenaPlan.h"

#include <algorithm>
#include <map>

namespace dmrt {

const char *phaseName(Phase p) { return p == Phase::Forward ? "forward" : "backward"; }

int64_t LayerPlan::findCallerTensor(const Manifest &m, const std::string &name) const {
  for (size_t i = 0; i < callerTensors.size(); ++i)
    if (m.tensor(callerTensors[i].id)->name == name)
      return int64_t(i);
  return -1;
}

int64_t LayerPlan::bufferOfBase(int64_t baseId) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].base == baseId)
      return int64_t(i);
  return -1;
}

std::vector<int64_t> stepTensors(const Manifest &m, const BundleStep &s) {
  if (s.kind == BundleStep::Kernel) {
    const BundleKernel *k = m.kernel(s.id);
    std::vector<int64_t> v = k->inputs;
    v.insert(v.end(), k->outputs.begin(), k->outputs.end());
    return v;
  }
  const BundleContraction *c = m.contraction(s.id);
  std::vector<int64_t> v = c->inputs(), out = c->outputs();
  v.insert(v.end(), out.begin(), out.end());
  return v;
}

std::string arenaShortfall(const Manifest &m, ArenaPlanKind wanted, int64_t arenaBytes) {
  int64_t needs = arenaBytesOf(m, planUsed(m, wanted));
  if (arenaBytes >= needs)
    return "";
  int64_t training = arenaBytesOf(m, ArenaPlanKind::Training),
          inference = arenaBytesOf(m, planUsed(m, ArenaPlanKind::Inference));
  return "an arena of " + std::to_string(arenaBytes) + " bytes is set; the " +
         arenaPlanName(wanted) + " plan needs " + std::to_string(needs) + " (training " +
         std::to_string(training) + ", inference " + std::to_string(inference) + ")";
}

std::string stepName(const Manifest &m, const BundleStep &s) {
  if (s.kind == BundleStep::Kernel)
    return "kernel " + std::to_string(s.id) + " (" + m.kernel(s.id)->name + ")";
  return "contraction " + std::to_string(s.id) + " (" + m.contraction(s.id)->equation + ")";
}

namespace {

bool buildBuffers(const Manifest &m, LayerPlan &p, std::string &error) {
  std::map<int64_t, size_t> bufferOf; // base id -> buffer index
  for (const BundleTensor &t : m.tensors) {
    if (!isArgumentRole(t.role) && !isResultRole(t.role))
      continue;
    int64_t offset = 0, base = m.baseOf(t.id, offset);
    auto [it, added] = bufferOf.emplace(base, p.buffers.size());
    if (added) {
      CallerBuffer b;
      b.base = base;
      b.bytes = m.tensor(base)->bytes;
      p.buffers.push_back(b);
    }
    CallerTensor ct;
    ct.id = t.id;
    ct.buffer = it->second;
    ct.byteOffset = offset * int64_t(dtypeSize(t.dtype));
    p.buffers[it->second].tensors.push_back(p.callerTensors.size());
    p.callerTensors.push_back(ct);
  }
  // Every byte of a caller buffer belongs to a caller tensor.
  for (const CallerBuffer &b : p.buffers) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t i : b.tensors) {
      const CallerTensor &ct = p.callerTensors[i];
      ranges.push_back({ct.byteOffset, ct.byteOffset + m.tensor(ct.id)->bytes});
    }
    std::sort(ranges.begin(), ranges.end());
    int64_t covered = 0;
    for (const auto &[begin, end] : ranges) {
      if (begin > covered)
        break;
      covered = std::max(covered, end);
    }
    if (covered < b.bytes) {
      const BundleTensor *base = m.tensor(b.base);
      std::string names;
      for (size_t i : b.tensors)
        names += (names.empty() ? "" : ", ") + m.tensor(p.callerTensors[i].id)->name;
      error = "tensor " + std::to_string(b.base) + " (" + base->name + ", " +
              std::to_string(b.bytes) + " bytes) lives in caller memory, but its caller "
              "tensors (" + names + ") cover only its first " + std::to_string(covered) +
              " bytes: the runtime would use memory the caller does not provide";
      return false;
    }
  }
  return true;
}

} // namespace

bool buildLayerPlan(const Manifest &m, LayerPlan &out, std::string &error) {
  LayerPlan p;
  if (m.version < 3) {
    error = "bundle version " + std::to_string(m.version) +
            " has no memory plan (arena offsets, version 3); recompile it with dmc compile";
    return false;
  }
  if (!buildBuffers(m, p, error))
    return false;
  for (const BundleContraction &c : m.contractions)
    if (!c.mappable) {
      error = "contraction " + std::to_string(c.id) + " (" + c.equation +
              ") has no cuBLASLt form: " + c.unmappable +
              " (the configuration must give every contraction a cuBLASLt form; "
              "recompile with a dmc whose default configuration does)";
      return false;
    }
  bool backwardSeen = false;
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const BundleStep &s = m.steps[i];
    const std::string &phase =
        s.kind == BundleStep::Kernel ? m.kernel(s.id)->phase : m.contraction(s.id)->phase;
    std::string where = "steps[" + std::to_string(i) + "] (" + stepName(m, s) + ")";
    Phase ph;
    if (phase == "forward")
      ph = Phase::Forward;
    else if (phase == "backward")
      ph = Phase::Backward;
    else {
      error = where + ": unknown phase \"" + phase + "\" (expected forward or backward)";
      return false;
    }
    if (ph == Phase::Forward && backwardSeen) {
      error = where + ": a forward step after a backward one (steps must run forward, "
                      "then backward)";
      return false;
    }
    backwardSeen |= ph == Phase::Backward;
    p.steps[int(ph)].push_back(s);
    for (int64_t id : stepTensors(m, s)) {
      int64_t offset = 0;
      int64_t buffer = p.bufferOfBase(m.baseOf(id, offset));
      if (buffer >= 0)
        p.buffers[size_t(buffer)].usedBy[int(ph)] = true;
    }
  }
  out = std::move(p);
  return true;
}

} // namespace dmrt
