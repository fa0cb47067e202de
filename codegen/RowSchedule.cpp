//===- RowSchedule.cpp - a row kernel's loops and passes, as data ---------===//
#include "codegen/RowSchedule.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace dmc::codegen {

bool movesAsVector(const RowSchedule &r, Type t) {
  return r.vd && cast<dm::TensorType>(t).getNames().back() == r.vd;
}

namespace {

/// The nodes pass `p`'s sweep needs: its reductions' and stores' inputs,
/// the column sums it adds and the values it caches, down to loads or
/// values cached by an earlier pass.
std::vector<bool> neededIn(const NodeGraph &g, const RowSchedule &r, int p) {
  auto isOutputAt = [&](int id) {
    return !g.nodes[id].outer && !g.nodes[id].column && g.nodes[id].pass == p;
  };
  std::vector<bool> needed(g.nodes.size(), false);
  std::vector<int> work;
  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (g.nodes[id].reduce && g.nodes[id].pass == p)
      work.push_back(g.nodes[id].deps[0]);
  for (auto [n, id] : g.nodeOutputs())
    if (isOutputAt(id))
      work.push_back(id);
  for (int id : r.sums)
    if (g.nodes[id].pass == p)
      work.push_back(g.nodes[id].deps[0]);
  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (r.cached[id] && g.nodes[id].pass == p)
      work.push_back(int(id));
  while (!work.empty()) {
    int id = work.back();
    work.pop_back();
    if (needed[id] || g.nodes[id].outer)
      continue;
    needed[id] = true;
    if (!(r.cached[id] && g.nodes[id].pass < p))
      work.insert(work.end(), g.nodes[id].deps.begin(), g.nodes[id].deps.end());
  }
  return needed;
}

} // namespace

RowSchedule scheduleRowKernel(dm::KernelOp kernel, const KernelSpace &s, const NodeGraph &g,
                              const KernelConfig &config) {
  RowSchedule r;
  // The lane dim goes innermost among the outer dims.
  r.outer = s.outer;
  if (config.laneDim) {
    r.outer.erase(r.outer.find(config.laneDim), 1);
    r.outer.push_back(config.laneDim);
  }
  for (const Node &n : g.nodes)
    r.passes = std::max(r.passes, n.pass + 1);
  r.reduces = llvm::any_of(g.nodes, [](const Node &n) { return n.reduce; });
  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (g.nodes[id].column)
      r.sums.push_back(int(id));
  // With column sums the partials are indexed by block.
  r.blocks = s.outerPoints / (int64_t(config.tx) * config.perThread);
  // Column sums with more blocks than SMs: two blocks of up to 256 threads
  // per SM (registers <= 128), or the rows fetched ahead push a thread past
  // 128 registers and halve the blocks an SM holds (gpt2-medium's layer-norm
  // backward: 165 registers, no faster than without the fetch; at 128, no spills).
  r.threads = config.tx * config.ty;
  r.minBlocks = !r.sums.empty() && r.blocks > s.sms && r.threads <= 256 ? 2 : 1;
  // Each thread handles `per` outer points (elementwise kernels), the k-th
  // at (blockIdx.x * per + k) * TX + threadIdx.x: coalesced for every k. With
  // vectors, a point is a chunk of `vec` along the contiguous dim `vd`: an
  // outer dim (elementwise kernels) or the innermost row dim (each thread
  // then takes whole chunks of its rows).
  r.per = config.perThread;
  r.vec = config.vec;
  r.vd = r.vec > 1 ? s.mainLayout.back() : 0;
  r.rowVec = r.vd && s.row.find(r.vd) != std::string::npos;
  r.outerVec = r.vd && !r.rowVec;
  r.chunks = s;
  if (r.vd)
    r.chunks.sizes[r.vd] /= r.vec;
  r.outerChunks = r.outerVec ? s.outerPoints / r.vec : s.outerPoints;
  r.rowChunks = r.rowVec ? s.rowPoints / r.vec : s.rowPoints;
  r.perRow = (r.rowChunks + config.ty - 1) / config.ty;
  r.rowVecWidth = r.rowVec ? r.vec : 1;
  // Blocks with column sums take whole rows (whyInfeasible): no thread leaves early.
  r.whole = !r.sums.empty() && r.outerChunks % (int64_t(config.tx) * r.per) == 0;
  // Rows of a few points per thread stay in registers between passes
  // instead of being recomputed.
  r.caching = !s.row.empty() && r.perRow <= 16;
  // The passes each node is read in (by a reduction, a store or a later node).
  std::vector<int> lastUse(g.nodes.size(), -1);
  for (size_t id = 0; id < g.nodes.size(); ++id)
    for (int d : g.nodes[id].deps)
      lastUse[d] = std::max(lastUse[d], g.nodes[id].pass);
  for (auto [n, id] : g.nodeOutputs())
    lastUse[id] = std::max(lastUse[id], g.nodes[id].pass);
  r.cached.assign(g.nodes.size(), false);
  for (size_t id = 0; id < g.nodes.size(); ++id)
    r.cached[id] = r.caching && !g.nodes[id].outer && lastUse[id] > g.nodes[id].pass;

  auto vectorized = [&](Type t) { return movesAsVector(r, t); };
  std::vector<std::vector<bool>> neededBy;
  for (int p = 0; p < r.passes; ++p)
    neededBy.push_back(neededIn(g, r, p));
  // Column sums with several rows per thread: the first sweep's row inputs
  // are fetched a row group ahead (RowFetch.cpp).
  if (!r.sums.empty() && r.per > 1 && r.rowVec)
    for (int p = 0; p < r.passes && r.fetch.sweep < 0; ++p)
      if (llvm::is_contained(neededBy[p], true))
        r.fetch = chooseRowFetch(kernel, g, r.outer, r.vd, p, neededBy[p], vectorized);

  for (int p = 0; p < r.passes; ++p) {
    PassPlan plan;
    const std::vector<bool> &needed = neededBy[p];
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (g.nodes[id].outer && !g.nodes[id].reduce && g.nodes[id].pass == p)
        plan.outerValues.push_back(int(id));
    plan.sweeps = llvm::is_contained(needed, true);
    if (plan.sweeps) {
      auto computedHere = [&](size_t id) {
        return needed[id] && !(r.cached[id] && g.nodes[id].pass < p);
      };
      for (size_t id = 0; id < g.nodes.size(); ++id) {
        if (g.nodes[id].reduce && g.nodes[id].pass == p)
          plan.reductions.push_back(int(id));
        if (!needed[id])
          continue;
        plan.nodes.push_back(int(id));
        plan.fromCache.push_back(!computedHere(id));
        if (computedHere(id))
          g.addDraws(id, plan.draws);
      }
      for (unsigned n = 0; n < kernel.getInputs().size(); ++n) {
        if (!readsInput(g, n, computedHere))
          continue;
        if (!vectorized(kernel.getInputs()[n].getType()))
          plan.scalarInputs.push_back(n);
        else
          (r.rowVec ? plan.vectorInputs : plan.outerVectorInputs).push_back(n);
      }
      for (int id : r.sums)
        if (g.nodes[id].pass == p)
          plan.sums.push_back(id);
      for (auto [n, id] : g.nodeOutputs())
        if (!g.nodes[id].outer && !g.nodes[id].column && g.nodes[id].pass == p)
          plan.stores.push_back(n);
    }
    r.passPlans.push_back(std::move(plan));
  }
  for (auto [n, id] : g.nodeOutputs())
    if (g.nodes[id].outer)
      r.outerStores.push_back(n);
  r.grid = (r.outerChunks + int64_t(config.tx) * r.per - 1) / (int64_t(config.tx) * r.per);
  return r;
}

} // namespace dmc::codegen
