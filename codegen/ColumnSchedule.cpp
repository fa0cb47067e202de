//===- ColumnSchedule.cpp - a column kernel's sweep over rows, as data ----===//
#include "codegen/ColumnSchedule.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace dmc::codegen {

ColumnSchedule scheduleColumnKernel(dm::KernelOp kernel, const KernelSpace &s,
                                    const NodeGraph &g, const KernelConfig &config) {
  ColumnSchedule c;
  const char d = c.laneDim = config.laneDim;
  c.vec = config.vec;
  c.split = config.split;
  c.outer = s.outer;
  c.outer.erase(c.outer.find(d), 1);
  c.outer.push_back(d);
  c.chunks = s;
  c.chunks.sizes[d] /= c.vec;
  c.outerChunks = s.outerPoints / c.vec;
  c.rows = s.rowPoints / c.split;
  c.gridX = c.outerChunks / config.tx;
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    if (g.nodes[id].reduce)
      c.reductions.push_back(int(id));
    if (!g.nodes[id].outer)
      g.addDraws(id, c.draws);
  }
  auto vectorized = [&](Type t) { return cast<dm::TensorType>(t).getNames().back() == d; };
  auto uses = [&](unsigned n) {
    return readsInput(g, n, [&](size_t id) { return !g.nodes[id].outer; });
  };
  // The inputs fetched rows ahead (ColumnEmitter.cpp's file comment) and
  // their guards: vector inputs that change from row to row, read under a
  // condition that does not (or none).
  c.iters = c.rows % config.ty ? 0 : c.rows / config.ty;
  c.depth = int(std::min<int64_t>(kFetchDepth, c.iters));
  c.unroll = config.unroll;
  if (c.iters >= 2 && c.iters <= kMaxFetchIterations)
    for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
      llvm::StringRef names = cast<dm::TensorType>(v.getType()).getNames();
      bool rowToRow = llvm::any_of(s.row, [&](char r) { return names.contains(r); });
      // Guards on the lane dim are dropped (loadGuard); the others must not
      // change from row to row.
      std::optional<LoadGuard> guard = g.guardOf(unsigned(n));
      bool rowInvariant = !guard || guard->dim == d || s.row.find(guard->dim) == std::string::npos;
      if (uses(unsigned(n)) && vectorized(v.getType()) && rowToRow && rowInvariant)
        c.fetched.push_back(unsigned(n));
    }
  // The slices of one stack a point reads (at most one of them: their guards
  // test one dim for distinct indices) share one set of slots when they have
  // one element type and one layout along the rows: the point's slice is
  // then chosen once, as a pointer. Other slices keep slots of their own.
  for (unsigned n : c.fetched)
    if (char sd = g.sliceOf(n).first)
      c.sharedSlots[sd].push_back(n);
  for (auto it = c.sharedSlots.begin(); it != c.sharedSlots.end();) {
    Type first = kernel.getInputs()[it->second[0]].getType();
    bool alike = llvm::all_of(it->second, [&](unsigned n) {
      Type t = kernel.getInputs()[n].getType();
      return elementType(t) == elementType(first) &&
             offsetExpr(t, s.row) == offsetExpr(first, s.row);
    });
    it = it->second.size() < 2 || !alike ? c.sharedSlots.erase(it) : std::next(it);
  }
  if (c.iters >= 2 && c.iters <= kMaxFetchIterations)
    for (int k : c.draws)
      if (g.draws[size_t(k)].bitsInput >= 0 && g.draws[size_t(k)].key() == d)
        c.fetchedBits.push_back(k);
  c.allLinear = llvm::all_of(c.fetched, [&](unsigned n) {
    return linearStride(kernel.getInputs()[n].getType(), s.row, s) >= 0;
  }) && llvm::all_of(c.fetchedBits, [&](int k) {
    return linearStride(kernel.getInputs()[unsigned(g.draws[size_t(k)].bitsInput)].getType(),
                        s.row, s) >= 0;
  });
  for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
    ColumnRead read = ColumnRead::None;
    if (!uses(unsigned(n)))
      read = ColumnRead::None;
    else if (llvm::is_contained(c.fetched, unsigned(n)))
      read = c.sharedSlots.count(g.sliceOf(unsigned(n)).first) ? ColumnRead::FetchedShared
                                                                 : ColumnRead::Fetched;
    else if (vectorized(v.getType()))
      read = ColumnRead::Vector;
    else
      read = ColumnRead::Scalar;
    c.reads.push_back(read);
  }
  for (auto [n, id] : g.nodeOutputs())
    (g.nodes[id].outer ? c.outerStores : c.rowStores).push_back(n);
  return c;
}

} // namespace dmc::codegen
