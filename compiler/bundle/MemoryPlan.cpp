//===- MemoryPlan.cpp - Offsets in one arena, by lifetime -----------------===//
#include "compiler/bundle/MemoryPlan.h"

#include "runtime/format/ArenaPlan.h"

#include <algorithm>
#include <utility>

namespace dmc::bundle {

void planMemory(dmrt::Manifest &m) {
  m.reindex();
  m.version = std::max<int64_t>(m.version, 3);
  for (dmrt::BundleTensor &t : m.tensors)
    t.arenaOffset = -1;
  for (dmrt::BundleKernel &k : m.kernels)
    k.workspaceOffset = -1;

  std::vector<dmrt::ArenaBlock> blocks = dmrt::arenaBlocks(m);
  std::vector<size_t> order(blocks.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const dmrt::ArenaBlock &a = blocks[x], &b = blocks[y];
    int64_t sa = dmrt::alignArena(a.bytes), sb = dmrt::alignArena(b.bytes);
    if (sa != sb)
      return sa > sb;
    if (a.first != b.first)
      return a.first < b.first;
    return a.kind < b.kind; // then manifest order (stable)
  });

  std::vector<int64_t> offsetOf(blocks.size(), -1);
  std::vector<size_t> placed;
  int64_t arenaBytes = 0;
  for (size_t i : order) {
    int64_t size = dmrt::alignArena(blocks[i].bytes);
    /// Byte ranges taken by placed blocks live together with this one.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : placed)
      if (dmrt::livesOverlap(blocks[i], blocks[j]))
        taken.push_back({offsetOf[j], offsetOf[j] + dmrt::alignArena(blocks[j].bytes)});
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (const auto &[begin, end] : taken) {
      if (begin >= offset + size)
        break; // the gap before `begin` fits
      offset = std::max(offset, end);
    }
    offsetOf[i] = offset;
    placed.push_back(i);
    arenaBytes = std::max(arenaBytes, offset + size);
  }

  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].kind == dmrt::ArenaBlock::Tensor)
      m.tensors[blocks[i].index].arenaOffset = offsetOf[i];
    else
      m.kernels[blocks[i].index].workspaceOffset = offsetOf[i];
  }
  m.arenaBytes = arenaBytes;
}

} // namespace dmc::bundle
