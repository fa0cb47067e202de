//===- ArenaPlan.cpp - Arena blocks, their lifetimes, the plan's checker --===//
#include "runtime/format/ArenaPlan.h"

#include <algorithm>
#include <map>

namespace dmrt {

std::string ArenaBlock::path() const {
  return kind == Tensor ? "tensors[" + std::to_string(index) + "]"
                        : "kernels[" + std::to_string(index) + "].workspace";
}

namespace {

int64_t baseId(const Manifest &m, int64_t id) {
  int64_t offset;
  return m.baseOf(id, offset);
}

/// Base ids whose alias family holds a tensor of a caller role.
std::map<int64_t, bool> callerBases(const Manifest &m) {
  std::map<int64_t, bool> caller;
  for (const BundleTensor &t : m.tensors)
    if (t.role != TensorRole::Intermediate)
      caller[baseId(m, t.id)] = true;
  return caller;
}

/// A block and its name in messages: `tensors[3] (t3, 4096 bytes at 512)`.
std::string describe(const Manifest &m, const ArenaBlock &b, int64_t offset) {
  std::string name = b.kind == ArenaBlock::Tensor ? m.tensors[b.index].name
                                                  : m.kernels[b.index].name;
  return b.path() + " (" + name + ", bytes [" + std::to_string(offset) + ", " +
         std::to_string(offset + b.bytes) + ")" +
         (b.kind == ArenaBlock::Workspace
              ? ", live throughout"
              : b.first < 0 ? ", never used"
                            : ", steps " + std::to_string(b.first) + ".." +
                                  std::to_string(b.last)) +
         ")";
}

} // namespace

bool isCallerMemory(const Manifest &m, int64_t tensorId) {
  return callerBases(m).count(baseId(m, tensorId)) != 0;
}

std::vector<ArenaBlock> arenaBlocks(const Manifest &m) {
  std::map<int64_t, bool> caller = callerBases(m);
  std::vector<ArenaBlock> blocks;
  std::map<int64_t, size_t> blockOf; // base tensor id -> blocks index
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const BundleTensor &t = m.tensors[i];
    if (t.isAlias || caller.count(t.id))
      continue;
    ArenaBlock b;
    b.id = t.id;
    b.index = i;
    b.bytes = t.bytes;
    blockOf[t.id] = blocks.size();
    blocks.push_back(b);
  }
  std::map<int64_t, bool> writtenForward, readBackward;
  for (size_t s = 0; s < m.steps.size(); ++s) {
    std::vector<int64_t> reads, writes;
    bool backward = false;
    if (m.steps[s].kind == BundleStep::Kernel) {
      const BundleKernel *k = m.kernel(m.steps[s].id);
      if (!k)
        continue;
      reads = k->inputs;
      writes = k->outputs;
      backward = k->phase == "backward";
    } else {
      const BundleContraction *c = m.contraction(m.steps[s].id);
      if (!c)
        continue;
      reads = c->inputs();
      writes = c->outputs();
      backward = c->phase == "backward";
    }
    for (int written = 0; written < 2; ++written)
      for (int64_t id : written ? writes : reads) {
        auto it = blockOf.find(baseId(m, id));
        if (it == blockOf.end())
          continue;
        ArenaBlock &b = blocks[it->second];
        if (b.first < 0)
          b.first = int64_t(s);
        b.last = int64_t(s);
        if (written && !backward)
          writtenForward[b.id] = true;
        if (!written && backward)
          readBackward[b.id] = true;
      }
  }
  for (ArenaBlock &b : blocks)
    b.savedActivation = writtenForward.count(b.id) && readBackward.count(b.id);
  for (size_t i = 0; i < m.kernels.size(); ++i)
    if (m.kernels[i].workspaceBytes > 0) {
      ArenaBlock b;
      b.kind = ArenaBlock::Workspace;
      b.id = m.kernels[i].id;
      b.index = i;
      b.bytes = m.kernels[i].workspaceBytes;
      b.first = 0;
      b.last = int64_t(m.steps.size()) - 1;
      blocks.push_back(b);
    }
  return blocks;
}

bool livesOverlap(const ArenaBlock &a, const ArenaBlock &b) {
  if (a.kind == ArenaBlock::Workspace || b.kind == ArenaBlock::Workspace)
    return true;
  if (a.first < 0 || b.first < 0)
    return false;
  return a.first <= b.last && b.first <= a.last;
}

int64_t arenaOffsetOf(const Manifest &m, const ArenaBlock &b) {
  return b.kind == ArenaBlock::Tensor ? m.tensors[b.index].arenaOffset
                                      : m.kernels[b.index].workspaceOffset;
}

bool checkArenaPlan(const Manifest &m, std::string &path, std::string &message) {
  std::map<int64_t, bool> caller = callerBases(m);
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const BundleTensor &t = m.tensors[i];
    if (t.arenaOffset < 0 || (!t.isAlias && !caller.count(t.id)))
      continue;
    path = "tensors[" + std::to_string(i) + "].arena";
    message = t.isAlias ? "expected null: an alias lives in its base's memory"
                        : "expected null: the caller provides this tensor's memory (its "
                          "alias family holds an argument or result)";
    return false;
  }
  for (size_t i = 0; i < m.kernels.size(); ++i)
    if (m.kernels[i].workspaceBytes == 0 && m.kernels[i].workspaceOffset >= 0) {
      path = "kernels[" + std::to_string(i) + "].workspace_offset";
      message = "given but the kernel has no workspace (workspace_bytes 0)";
      return false;
    }
  std::vector<ArenaBlock> blocks = arenaBlocks(m);
  for (const ArenaBlock &b : blocks) {
    int64_t offset = arenaOffsetOf(m, b);
    path = b.path() + (b.kind == ArenaBlock::Tensor ? ".arena" : "_offset");
    if (offset < 0) {
      message = b.kind == ArenaBlock::Tensor
                    ? "expected an arena offset: an intermediate that owns its memory"
                    : "missing: the kernel has a workspace";
      return false;
    }
    if (offset % kArenaAlignment) {
      message = std::to_string(offset) + " is not a multiple of " +
                std::to_string(kArenaAlignment);
      return false;
    }
    if (offset > m.arenaBytes || b.bytes > m.arenaBytes - offset) {
      message = "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + b.bytes) +
                ") end past arena_bytes " + std::to_string(m.arenaBytes);
      return false;
    }
  }
  // Sweep by offset: each block against the later-starting blocks it reaches.
  std::vector<std::pair<int64_t, size_t>> order;
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].bytes > 0)
      order.push_back({arenaOffsetOf(m, blocks[i]), i});
  std::sort(order.begin(), order.end());
  for (size_t x = 0; x < order.size(); ++x) {
    const ArenaBlock &a = blocks[order[x].second];
    int64_t end = order[x].first + a.bytes;
    for (size_t y = x + 1; y < order.size() && order[y].first < end; ++y) {
      const ArenaBlock &b = blocks[order[y].second];
      if (!livesOverlap(a, b))
        continue;
      path = b.path() + (b.kind == ArenaBlock::Tensor ? ".arena" : "_offset");
      message = describe(m, b, order[y].first) + " overlaps " +
                describe(m, a, order[x].first) + " while both are live";
      return false;
    }
  }
  return true;
}

ArenaSummary summarizeArena(const Manifest &m) {
  ArenaSummary s;
  s.arenaBytes = m.version >= 3 ? m.arenaBytes : 0;
  std::vector<ArenaBlock> blocks = arenaBlocks(m);
  std::vector<int64_t> live(m.steps.size(), 0);
  for (const ArenaBlock &b : blocks)
    if (b.kind == ArenaBlock::Tensor && b.first >= 0)
      for (int64_t t = b.first; t <= b.last; ++t)
        live[t] += b.bytes;
  for (int64_t bytes : live)
    s.peakLiveBytes = std::max(s.peakLiveBytes, bytes);
  for (const ArenaBlock &b : blocks) {
    if (b.kind == ArenaBlock::Workspace) {
      s.workspaceBytes += b.bytes;
      ++s.workspaceBlocks;
      s.peakLiveBytes += b.bytes;
      continue;
    }
    s.intermediateBytes += b.bytes;
    ++s.tensorBlocks;
    if (b.savedActivation)
      s.savedActivationBytes += b.bytes;
  }
  std::map<int64_t, bool> caller = callerBases(m);
  for (const BundleTensor &t : m.tensors)
    if (!t.isAlias && caller.count(t.id))
      s.callerBytes += t.bytes;
  return s;
}

} // namespace dmrt
