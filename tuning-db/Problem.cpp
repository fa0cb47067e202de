//===- Problem.cpp - What a bundle step computes, as a tuning key ---------===//
#include "tuning-db/Problem.h"

#include "runtime/format/Checksum.h"
#include "runtime/format/DType.h"

#include <algorithm>

namespace dmc::tuningdb {
namespace {

std::string sorted(std::string dims) {
  std::sort(dims.begin(), dims.end());
  return dims;
}

/// Adds the tensors' layouts and dimension extents; returns "a,b" of their
/// sorted dims.
std::string addTensors(const dmrt::Manifest &m, const std::vector<int64_t> &ids, Problem &p) {
  std::string list;
  for (int64_t id : ids) {
    const dmrt::BundleTensor *t = m.tensor(id);
    if (!t)
      continue; // parseManifest checked every id; a manifest built in memory may not
    p.layouts.push_back(t->dims);
    for (size_t i = 0; i < t->dims.size() && i < t->shape.size(); ++i)
      p.sizes[std::string(1, t->dims[i])] = t->shape[i];
    list += (list.empty() ? "" : ",") + sorted(t->dims);
  }
  return list;
}

std::string dtypeOf(const dmrt::Manifest &m, const std::vector<int64_t> &outputs) {
  const dmrt::BundleTensor *t = outputs.empty() ? nullptr : m.tensor(outputs.front());
  return t ? dmrt::dtypeName(t->dtype) : "";
}

} // namespace

Problem kernelProblem(const dmrt::Manifest &m, const dmrt::BundleKernel &k) {
  Problem p;
  p.kind = Kind::Kernel;
  std::string in = addTensors(m, k.inputs, p);
  std::string out = addTensors(m, k.outputs, p);
  p.signature = "kernel " + k.name + "(" + in + "->" + out + ")";
  p.dtype = dtypeOf(m, k.outputs);
  return p;
}

Problem transposeProblem(const dmrt::BundleTensor &t, const std::string &from,
                         const std::string &to) {
  Problem p;
  p.kind = Kind::Kernel;
  for (size_t i = 0; i < t.dims.size() && i < t.shape.size(); ++i)
    p.sizes[std::string(1, t.dims[i])] = t.shape[i];
  p.layouts = {from, to};
  p.signature = "kernel transpose(" + sorted(from) + "->" + sorted(to) + ")";
  p.dtype = dmrt::dtypeName(t.dtype);
  return p;
}

Problem contractionProblem(const dmrt::Manifest &m, const dmrt::BundleContraction &c) {
  Problem p;
  p.kind = Kind::Contraction;
  std::string in = addTensors(m, c.inputs(), p);
  std::string out = addTensors(m, c.outputs(), p);
  p.epilogue = dmrt::epilogueManifestName(c.epilogue);
  p.signature = "contraction " + in + "->" + out;
  p.dtype = dtypeOf(m, c.outputs());
  return p;
}

Problem stepProblem(const dmrt::Manifest &m) {
  Problem p;
  p.kind = Kind::Step;
  // Every step in order: what it computes, in which layouts, how (a kernel's
  // knobs as the manifest describes them, a contraction's algorithm), and its
  // phase; names and ids stay out.
  std::string text;
  int kernels = 0, contractions = 0;
  auto add = [&](const Problem &q, const std::string &how, const std::string &phase) {
    text += q.signature + "|" + q.epilogue + "|" + phase + "|" + how + "|";
    for (const std::string &l : q.layouts)
      text += l + ",";
    for (const auto &[dim, n] : q.sizes) {
      text += dim + "=" + std::to_string(n) + ",";
      p.sizes[dim] = n;
    }
    text += "\n";
    if (p.dtype.empty())
      p.dtype = q.dtype;
  };
  for (const dmrt::BundleStep &st : m.steps) {
    if (st.kind == dmrt::BundleStep::Kernel) {
      if (const dmrt::BundleKernel *k = m.kernel(st.id)) {
        add(kernelProblem(m, *k), k->config, k->phase);
        ++kernels;
      }
    } else if (const dmrt::BundleContraction *c = m.contraction(st.id)) {
      add(contractionProblem(m, *c), c->algorithm, c->phase);
      ++contractions;
    }
  }
  p.signature = "step " + std::to_string(kernels) + " kernels " +
                std::to_string(contractions) + " contractions " +
                dmrt::checksumHex(dmrt::fnv1a64(text.data(), text.size()));
  return p;
}

void fillProblem(const Problem &p, Record &r) {
  r.kind = p.kind;
  r.signature = p.signature;
  r.sizes = p.sizes;
  r.dtype = p.dtype;
  r.layouts = p.layouts;
  r.epilogue = p.epilogue;
}

bool sameComputation(const Problem &p, const Record &r) {
  return r.kind == p.kind && r.signature == p.signature && r.sizes == p.sizes &&
         r.dtype == p.dtype && r.layouts.size() == p.layouts.size() && r.epilogue == p.epilogue;
}

bool sameProblem(const Problem &p, const Record &r) {
  return sameComputation(p, r) && r.layouts == p.layouts;
}

std::map<std::string, Knob> recordKnobs(const dmrt::ConfigKernel &k) {
  std::map<std::string, Knob> knobs = {{"lane_dim", k.laneDim}, {"tx", k.tx},
                                       {"ty", k.ty},           {"per_thread", k.perThread},
                                       {"vec", k.vec},         {"split", k.split}};
  if (k.warps > 0) { // a fused attention kernel's tiles
    knobs["block_m"] = k.blockM;
    knobs["block_n"] = k.blockN;
    knobs["warps"] = k.warps;
    if (k.wgmma) // absent on mma.sync tiles
      knobs["wgmma"] = int64_t(1);
    if (k.minBlocks > 0) // absent where the kernel's own hint holds
      knobs["min_blocks"] = k.minBlocks;
  }
  if (k.unroll > 0) // absent on records of sweeps unrolled whole
    knobs["unroll"] = k.unroll;
  return knobs;
}

bool configKnobs(const Record &r, dmrt::ConfigKernel &k) {
  dmrt::ConfigKernel out = k;
  std::pair<const char *, int64_t *> ints[] = {{"tx", &out.tx}, {"ty", &out.ty},
                                               {"per_thread", &out.perThread},
                                               {"vec", &out.vec}, {"split", &out.split}};
  for (auto &[name, field] : ints) {
    auto it = r.knobs.find(name);
    if (it == r.knobs.end() || !std::holds_alternative<int64_t>(it->second) ||
        std::get<int64_t>(it->second) < 1)
      return false;
    *field = std::get<int64_t>(it->second);
  }
  auto lane = r.knobs.find("lane_dim");
  if (lane == r.knobs.end() || !std::holds_alternative<std::string>(lane->second))
    return false;
  out.laneDim = std::get<std::string>(lane->second);
  // Tiles: all three (a fused attention kernel's) or none.
  std::pair<const char *, int64_t *> tiles[] = {
      {"block_m", &out.blockM}, {"block_n", &out.blockN}, {"warps", &out.warps}};
  int present = 0;
  for (auto &[name, field] : tiles) {
    auto it = r.knobs.find(name);
    if (it == r.knobs.end())
      continue;
    if (!std::holds_alternative<int64_t>(it->second) || std::get<int64_t>(it->second) < 1)
      return false;
    *field = std::get<int64_t>(it->second);
    ++present;
  }
  if (present != 0 && present != 3)
    return false;
  if (present == 0)
    out.blockM = out.blockN = out.warps = 0;
  out.wgmma = false;
  if (auto it = r.knobs.find("wgmma"); it != r.knobs.end()) {
    if (present == 0 || !std::holds_alternative<int64_t>(it->second) ||
        std::get<int64_t>(it->second) != 1)
      return false;
    out.wgmma = true;
  }
  out.minBlocks = 0;
  if (auto it = r.knobs.find("min_blocks"); it != r.knobs.end()) {
    if (present == 0 || !std::holds_alternative<int64_t>(it->second) ||
        std::get<int64_t>(it->second) < 1)
      return false;
    out.minBlocks = std::get<int64_t>(it->second);
  }
  out.unroll = 0;
  if (auto it = r.knobs.find("unroll"); it != r.knobs.end()) {
    if (!std::holds_alternative<int64_t>(it->second) || std::get<int64_t>(it->second) < 1)
      return false;
    out.unroll = std::get<int64_t>(it->second);
  }
  k = out;
  return true;
}

} // namespace dmc::tuningdb
