//===- Problem.cpp - What a bundle step computes, as a tuning key ---------===//
#include "tuning-db/Problem.h"

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

} // namespace dmc::tuningdb
