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

/// The manifest field holding a block's offset in plan `kind`.
std::string fieldPath(const ArenaBlock &b, ArenaPlanKind kind) {
  bool inference = kind == ArenaPlanKind::Inference;
  return b.kind == ArenaBlock::Tensor
             ? b.path() + (inference ? ".inference_arena" : ".arena")
             : "kernels[" + std::to_string(b.index) + "]." +
                   (inference ? "inference_workspace_offset" : "workspace_offset");
}

} // namespace

const char *arenaPlanName(ArenaPlanKind kind) {
  return kind == ArenaPlanKind::Inference ? "inference" : "training";
}

ArenaPlanKind planUsed(const Manifest &m, ArenaPlanKind wanted) {
  return m.version >= 5 ? wanted : ArenaPlanKind::Training;
}

int64_t arenaBytesOf(const Manifest &m, ArenaPlanKind kind) {
  return kind == ArenaPlanKind::Inference ? m.inferenceArenaBytes : m.arenaBytes;
}

int64_t tensorArenaOffset(const BundleTensor &t, ArenaPlanKind kind) {
  return kind == ArenaPlanKind::Inference ? t.inferenceArenaOffset : t.arenaOffset;
}

int64_t workspaceArenaOffset(const BundleKernel &k, ArenaPlanKind kind) {
  return kind == ArenaPlanKind::Inference ? k.inferenceWorkspaceOffset : k.workspaceOffset;
}

int64_t planWorkspaceBytes(const Manifest &m, ArenaPlanKind wanted) {
  ArenaPlanKind kind = planUsed(m, wanted);
  int64_t bytes = 0;
  for (const BundleKernel &k : m.kernels)
    if (workspaceArenaOffset(k, kind) >= 0)
      bytes += k.workspaceBytes;
  return bytes;
}

bool isCallerMemory(const Manifest &m, int64_t tensorId) {
  return callerBases(m).count(baseId(m, tensorId)) != 0;
}

std::vector<ArenaBlock> arenaBlocks(const Manifest &m, ArenaPlanKind kind) {
  bool inference = kind == ArenaPlanKind::Inference;
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
    if (inference && backward)
      continue;
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
  if (inference) // what no forward step uses is no block of the inference plan
    blocks.erase(std::remove_if(blocks.begin(), blocks.end(),
                                [](const ArenaBlock &b) { return b.first < 0; }),
                 blocks.end());
  for (size_t i = 0; i < m.kernels.size(); ++i)
    if (m.kernels[i].workspaceBytes > 0 && !(inference && m.kernels[i].phase == "backward")) {
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

int64_t arenaOffsetOf(const Manifest &m, const ArenaBlock &b, ArenaPlanKind kind) {
  return b.kind == ArenaBlock::Tensor ? tensorArenaOffset(m.tensors[b.index], kind)
                                      : workspaceArenaOffset(m.kernels[b.index], kind);
}

bool checkArenaPlan(const Manifest &m, std::string &path, std::string &message,
                    ArenaPlanKind kind) {
  bool inference = kind == ArenaPlanKind::Inference;
  std::map<int64_t, bool> caller = callerBases(m);
  std::vector<ArenaBlock> blocks = arenaBlocks(m, kind);
  std::map<size_t, bool> tensorBlock, kernelBlock; // manifest index -> is a block
  for (const ArenaBlock &b : blocks)
    (b.kind == ArenaBlock::Tensor ? tensorBlock : kernelBlock)[b.index] = true;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const BundleTensor &t = m.tensors[i];
    if (tensorArenaOffset(t, kind) < 0 || tensorBlock.count(i))
      continue;
    path = "tensors[" + std::to_string(i) + "]." + (inference ? "inference_arena" : "arena");
    message = t.isAlias ? "expected null: an alias lives in its base's memory"
              : caller.count(t.id)
                  ? "expected null: the caller provides this tensor's memory (its "
                    "alias family holds an argument or result)"
                  : "expected null: no forward step uses this tensor (the inference "
                    "plan holds only what forward touches)";
    return false;
  }
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    if (workspaceArenaOffset(m.kernels[i], kind) < 0 || kernelBlock.count(i))
      continue;
    path = "kernels[" + std::to_string(i) + "]." +
           (inference ? "inference_workspace_offset" : "workspace_offset");
    message = m.kernels[i].workspaceBytes == 0
                  ? "given but the kernel has no workspace (workspace_bytes 0)"
                  : "given but the kernel's phase is backward (the inference plan holds "
                    "only forward kernels' workspaces)";
    return false;
  }
  int64_t arenaBytes = arenaBytesOf(m, kind);
  for (const ArenaBlock &b : blocks) {
    int64_t offset = arenaOffsetOf(m, b, kind);
    path = fieldPath(b, kind);
    if (offset < 0) {
      message = b.kind == ArenaBlock::Workspace
                    ? "missing: the kernel has a workspace"
                : inference ? "expected an arena offset: an intermediate that owns its "
                              "memory and a forward step uses"
                            : "expected an arena offset: an intermediate that owns its memory";
      return false;
    }
    if (offset % kArenaAlignment) {
      message = std::to_string(offset) + " is not a multiple of " +
                std::to_string(kArenaAlignment);
      return false;
    }
    if (offset > arenaBytes || b.bytes > arenaBytes - offset) {
      message = "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + b.bytes) +
                ") end past " + (inference ? "inference_arena_bytes " : "arena_bytes ") +
                std::to_string(arenaBytes);
      return false;
    }
  }
  // Sweep by offset: each block against the later-starting blocks it reaches.
  std::vector<std::pair<int64_t, size_t>> order;
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].bytes > 0)
      order.push_back({arenaOffsetOf(m, blocks[i], kind), i});
  std::sort(order.begin(), order.end());
  for (size_t x = 0; x < order.size(); ++x) {
    const ArenaBlock &a = blocks[order[x].second];
    int64_t end = order[x].first + a.bytes;
    for (size_t y = x + 1; y < order.size() && order[y].first < end; ++y) {
      const ArenaBlock &b = blocks[order[y].second];
      if (!livesOverlap(a, b))
        continue;
      path = fieldPath(b, kind);
      message = describe(m, b, order[y].first) + " overlaps " +
                describe(m, a, order[x].first) + " while both are live" +
                (inference ? " (inference plan: forward steps only)" : "");
      return false;
    }
  }
  return true;
}

namespace {

/// Most bytes live at one step among `blocks` (tensors live then + every
/// workspace).
int64_t peakLive(const Manifest &m, const std::vector<ArenaBlock> &blocks) {
  std::vector<int64_t> live(m.steps.size(), 0);
  int64_t workspaces = 0, peak = 0;
  for (const ArenaBlock &b : blocks) {
    if (b.kind == ArenaBlock::Workspace)
      workspaces += b.bytes;
    else if (b.first >= 0)
      for (int64_t t = b.first; t <= b.last; ++t)
        live[t] += b.bytes;
  }
  for (int64_t bytes : live)
    peak = std::max(peak, bytes);
  return peak + workspaces;
}

} // namespace

ArenaSummary summarizeArena(const Manifest &m) {
  ArenaSummary s;
  s.arenaBytes = m.version >= 3 ? m.arenaBytes : 0;
  s.inferenceArenaBytes =
      m.version >= 3 ? arenaBytesOf(m, planUsed(m, ArenaPlanKind::Inference)) : 0;
  std::vector<ArenaBlock> blocks = arenaBlocks(m);
  s.peakLiveBytes = peakLive(m, blocks);
  s.inferencePeakLiveBytes = peakLive(m, arenaBlocks(m, ArenaPlanKind::Inference));
  for (const ArenaBlock &b : blocks) {
    if (b.kind == ArenaBlock::Workspace) {
      s.workspaceBytes += b.bytes;
      ++s.workspaceBlocks;
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
