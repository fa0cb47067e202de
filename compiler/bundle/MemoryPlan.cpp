//===- MemoryPlan.cpp - Offsets in one arena, by lifetime -----------------===//
#include "compiler/bundle/MemoryPlan.h"

#include "runtime/format/ArenaPlan.h"

#include <algorithm>
#include <utility>

namespace dmc::bundle {

namespace {

/// Places `blocks` (see the header: largest first, lowest free offset) and
/// returns each block's offset; `arenaBytes` is the largest aligned end.
std::vector<int64_t> placeBlocks(const std::vector<dmrt::ArenaBlock> &blocks,
                                 int64_t &arenaBytes) {
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
  arenaBytes = 0;
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
  return offsetOf;
}

/// Plans one of the manifest's plans in place.
void planOne(dmrt::Manifest &m, dmrt::ArenaPlanKind kind) {
  bool inference = kind == dmrt::ArenaPlanKind::Inference;
  for (dmrt::BundleTensor &t : m.tensors)
    (inference ? t.inferenceArenaOffset : t.arenaOffset) = -1;
  for (dmrt::BundleKernel &k : m.kernels)
    (inference ? k.inferenceWorkspaceOffset : k.workspaceOffset) = -1;
  std::vector<dmrt::ArenaBlock> blocks = dmrt::arenaBlocks(m, kind);
  int64_t arenaBytes = 0;
  std::vector<int64_t> offsetOf = placeBlocks(blocks, arenaBytes);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].kind == dmrt::ArenaBlock::Tensor) {
      dmrt::BundleTensor &t = m.tensors[blocks[i].index];
      (inference ? t.inferenceArenaOffset : t.arenaOffset) = offsetOf[i];
    } else {
      dmrt::BundleKernel &k = m.kernels[blocks[i].index];
      (inference ? k.inferenceWorkspaceOffset : k.workspaceOffset) = offsetOf[i];
    }
  }
  (inference ? m.inferenceArenaBytes : m.arenaBytes) = arenaBytes;
}

} // namespace

void planMemory(dmrt::Manifest &m) {
  m.reindex();
  m.version = std::max<int64_t>(m.version, 5);
  planOne(m, dmrt::ArenaPlanKind::Training);
  planOne(m, dmrt::ArenaPlanKind::Inference);
  if (m.inferenceArenaBytes <= m.arenaBytes)
    return;
  // Greedy placement is not monotone in its constraints: should it do worse
  // on the forward's (shorter) lifetimes, the training offsets are a valid
  // inference plan (every inference block is a training block whose
  // forward lifetime lies inside its training one).
  for (dmrt::BundleTensor &t : m.tensors)
    if (t.inferenceArenaOffset >= 0)
      t.inferenceArenaOffset = t.arenaOffset;
  for (dmrt::BundleKernel &k : m.kernels)
    if (k.inferenceWorkspaceOffset >= 0)
      k.inferenceWorkspaceOffset = k.workspaceOffset;
  m.inferenceArenaBytes = m.arenaBytes;
}

} // namespace dmc::bundle
