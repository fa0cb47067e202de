//===- KernelSpace.cpp - the loop nest of a fused kernel and its configs --===//
#include "codegen/KernelSpace.h"

#include "ir/IterationSpace.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <set>

using namespace mlir;

namespace dmc::codegen {

dmcgen::GpuTarget targetOf(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto name = module ? module->getAttrOfType<StringAttr>(dm::kTargetAttr) : StringAttr();
  if (name)
    if (auto t = dmcgen::targetByName(name.getValue().str()))
      return *t;
  return dmcgen::defaultTarget();
}

std::string archOf(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto arch = module ? module->getAttrOfType<StringAttr>(dm::kArchAttr) : StringAttr())
    return arch.getValue().str();
  return targetOf(op).arch;
}

KernelSpace spaceOf(dm::KernelOp kernel) {
  KernelSpace s;
  s.sms = targetOf(kernel).sms;
  std::string all;
  std::vector<dm::RegionReduction> reducing = dm::regionReductions(kernel.getBody());
  kernel.getBody().walk([&](dm::IterationSpaceOpInterface op) {
    for (char c : dm::iterationDims(op)) // packed dims aside
      if (all.find(c) == std::string::npos) {
        all.push_back(c);
        s.sizes[c] = dm::dimSize(op, c);
      }
    s.flopPerPoint += op.getFlopPerPoint();
  });
  // Two reduction sets that partition the dims, one of them final: the
  // other is the rows, the final one sums over the outer dims (column sums).
  // With both final, the first set (by name) is the rows.
  std::set<std::string> sets;
  for (const dm::RegionReduction &r : reducing)
    sets.insert(r.dims);
  std::string reduced; // the rows: every reduced dim unless column sums
  for (const std::string &d : sets)
    for (char c : d)
      if (reduced.find(c) == std::string::npos)
        reduced.push_back(c);
  if (sets.size() == 2) {
    std::string a = *sets.begin(), b = *sets.rbegin();
    auto isFinal = [&](const std::string &d) {
      return llvm::all_of(reducing,
                          [&](const dm::RegionReduction &r) { return r.dims != d || r.final; });
    };
    std::string both = a + b, sortedAll = all;
    llvm::sort(both);
    llvm::sort(sortedAll);
    if (both == sortedAll && (isFinal(a) || isFinal(b))) {
      s.columnSums = true;
      reduced = isFinal(a) && !isFinal(b) ? b : a;
    }
  }
  s.finalReductions =
      llvm::all_of(reducing, [](const dm::RegionReduction &r) { return r.final; });
  // The largest tensor read or written decides the memory order.
  int64_t largest = -1;
  auto consider = [&](Type t) {
    auto tt = cast<dm::TensorType>(t);
    if (tt.getNumElements() > largest) {
      largest = tt.getNumElements();
      s.mainLayout = tt.getNames().str();
    }
  };
  auto record = [&](Type t) {
    consider(t);
    auto tt = cast<dm::TensorType>(t);
    s.tensors.push_back(
        {tt.getNames().str(), int((tt.getElementType().getIntOrFloatBitWidth() + 7) / 8)});
  };
  for (Type t : kernel.getInputs().getTypes())
    record(t);
  s.inputs = s.tensors.size();
  for (Type t : kernel.getResultTypes())
    record(t);
  // Dims of S the main tensor lacks go outermost.
  std::string order;
  for (char c : all)
    if (s.mainLayout.find(c) == std::string::npos)
      order.push_back(c);
  order += s.mainLayout;
  for (char c : order) {
    if (all.find(c) == std::string::npos)
      continue;
    bool isRow = reduced.find(c) != std::string::npos;
    (isRow ? s.row : s.outer).push_back(c);
    (isRow ? s.rowPoints : s.outerPoints) *= s.sizes[c];
  }
  return s;
}

std::string KernelConfig::describe() const {
  if (warps > 0)
    return llvm::formatv("attention tiles {0}x{1}, {2} warps{3}{4}", blockM, blockN, warps,
                         wgmma ? ", wgmma" : "",
                         minBlocks > 0 ? llvm::formatv(", {0} blocks an SM", minBlocks).str()
                                       : std::string());
  std::string per = perThread > 1 ? llvm::formatv(", {0} points per thread", perThread).str()
                                  : std::string();
  if (vec > 1)
    per += llvm::formatv(", vectors of {0}", vec).str();
  if (split > 1)
    per += llvm::formatv(", rows split over {0} blocks", split).str();
  if (unroll > 0)
    per += llvm::formatv(", sweep unrolled by {0}", unroll).str();
  if (!laneDim)
    return llvm::formatv("block {0}x{1}{2}", tx, ty, per);
  return llvm::formatv("lanes along {0}, block {1}x{2}{3}", laneDim, tx, ty, per);
}

bool isColumnConfig(const KernelConfig &c) { return c.laneDim && (c.vec > 1 || c.split > 1); }

char tiledWriteDim(const KernelSpace &s) {
  if (!s.row.empty() || s.tensors.size() == s.inputs)
    return 0;
  char b = 0;
  for (size_t n = s.inputs; n < s.tensors.size(); ++n) {
    if (s.isPacked(n))
      continue;
    if (b && s.tensors[n].first.back() != b)
      return 0;
    b = s.tensors[n].first.back();
  }
  return b;
}

std::vector<unsigned> tiledInputs(const KernelSpace &s, char a) {
  std::vector<unsigned> staged;
  char b = tiledWriteDim(s);
  for (size_t n = 0; n < s.inputs; ++n) {
    const std::string &dims = s.tensors[n].first;
    if (b && a != b && !s.isPacked(n) && dims.back() == a && dims.find(b) != std::string::npos)
      staged.push_back(unsigned(n));
  }
  return staged;
}

bool isTiledConfig(const KernelSpace &s, const KernelConfig &c) {
  return s.row.empty() && c.laneDim;
}

std::vector<KernelConfig> enumerateConfigs(const KernelSpace &s,
                                           std::vector<std::string> *rejected) {
  std::vector<KernelConfig> candidates;
  // Most promising first: `--config-index N` sweeps take the first few.
  char innermost = s.mainLayout.empty() ? 0 : s.mainLayout.back();
  if (!s.row.empty() && s.outer.find(innermost) != std::string::npos) {
    KernelConfig def = defaultConfig(s);
    if (isColumnConfig(def))
      candidates.push_back(def);
    for (int vec : {8, 4})
      for (int tx : {8, 16, 32})
        for (int split : {1, 4, 16, 64})
          candidates.push_back({innermost, tx, 256 / tx, 1, vec, split});
  }
  if (s.columnSums) {
    candidates.push_back(defaultConfig(s));
    // Blocks from half the SMs to four times them: the partials stay small
    // (blocks x row points x 4 bytes per sum) and the GPU stays full (fewer
    // for small layers: up to 4 rows per block).
    for (int vec : {8, 4})
      for (int ty : {32, 64, 128})
        for (int tx : {1, 2, 4, 8})
          for (int per : {1, 2, 4, 8, 16}) {
            int64_t blocks = s.outerPoints / (int64_t(tx) * per);
            if (blocks <= 4 * int64_t(s.sms) && (2 * blocks >= s.sms || tx * per <= 4))
              candidates.push_back({0, tx, ty, per, vec});
          }
  } else if (s.row.empty()) {
    // Inputs contiguous along another dim than the outputs: tiles first.
    if (char a = defaultConfig(s).laneDim)
      for (int vec : {2, 1})
        for (int ty : {8, 16, 4})
          candidates.push_back({a, 32, ty, 1, vec});
    for (int vec : {8, 4, 1})
      for (int tx : {128, 256, 512})
        for (int per : {1, 2, 4})
          candidates.push_back({0, tx, 1, per, vec});
  } else {
    for (int vec : {8, 4, 1})
      for (int ty : {32, 64, 128, 256, 512, 1024})
        candidates.push_back({0, 1, ty, 1, vec});
    for (char lane : s.outer)
      for (int tx : {8, 16, 32})
        for (int ty : {4, 8, 16, 32})
          candidates.push_back({lane, tx, ty});
  }
  std::vector<KernelConfig> feasible;
  std::set<std::string> seen;
  for (const KernelConfig &c : candidates) {
    if (!seen.insert(c.describe()).second)
      continue;
    std::string why = whyInfeasible(s, c);
    if (why.empty())
      feasible.push_back(c);
    else if (rejected)
      rejected->push_back(c.describe() + ": " + why);
  }
  // Then each column configuration's sweep unrolled by the fetch depth,
  // after every other (`--config-index N` keeps its meaning); a default
  // already unrolled gets its whole twin there instead.
  for (size_t n = 0, end = feasible.size(); n < end; ++n) {
    KernelConfig twin = feasible[n];
    twin.unroll = twin.unroll ? 0 : kFetchDepth;
    if (isColumnConfig(twin) && whyInfeasible(s, twin).empty() &&
        seen.insert(twin.describe()).second)
      feasible.push_back(twin);
  }
  return feasible;
}

KernelConfig defaultConfig(const KernelSpace &s) {
  if (s.row.empty()) {
    // Inputs contiguous along another dim than the outputs (a transpose):
    // tiles through shared memory, the first such input's dim the lanes.
    const char b = tiledWriteDim(s);
    for (size_t n = 0; b && n < s.inputs; ++n) {
      if (s.isPacked(n))
        continue;
      for (KernelConfig c : {KernelConfig{s.tensors[n].first.back(), 32, 8, 1, 2},
                             KernelConfig{s.tensors[n].first.back(), 32, 8, 1, 1}})
        if (c.laneDim != b && whyInfeasible(s, c).empty())
          return c;
    }
    // The widest vector that fits 16 bytes, then fewer points per thread.
    for (KernelConfig c : {KernelConfig{0, 256, 1, 2, 8}, KernelConfig{0, 256, 1, 2, 4},
                           KernelConfig{0, 256, 1, 4, 2}})
      if (whyInfeasible(s, c).empty())
        return c;
    return {0, 256, 1, 4};
  }
  char innermost = s.mainLayout.empty() ? 0 : s.mainLayout.back();
  if (s.columnSums) {
    // 4 rows side by side, 2 chunks of 16 bytes per thread, and about two
    // blocks per SM (their partials: blocks x row points x 4 bytes per sum).
    for (int vec : {8, 4, 2, 1}) {
      int ty = 32;
      while (ty < 256 && 2 * ty * vec < s.rowPoints)
        ty *= 2;
      for (int per : {4, 2, 1, 8, 16}) {
        KernelConfig c{0, 4, ty, per, vec};
        if (whyInfeasible(s, c).empty() && s.outerPoints / (4 * per) <= 2 * s.sms)
          return c;
      }
    }
    // Rows that no 4 fit evenly: one row per block, scalar accesses.
    int ty = 32;
    while (ty < 1024 && (s.rowPoints + ty - 1) / ty > 4)
      ty *= 2;
    return {0, 1, ty, 1, 1};
  }
  if (s.row.find(innermost) != std::string::npos) {
    // Whole warps with about 8 row points each (kept in registers), at most
    // 256: the best of the H200 sweeps for rows of 512 and 1024.
    int ty = 32;
    while (ty < 256 && 16 * ty <= s.rowPoints)
      ty *= 2;
    // With 16-byte vectors along the row: a chunk or two per thread.
    for (int vec : {8, 4}) {
      int vty = 32;
      while (vty < 256 && 2 * vty * vec <= s.rowPoints)
        vty *= 2;
      KernelConfig c{0, 1, vty, 1, vec};
      if (whyInfeasible(s, c).empty())
        return c;
    }
    return {0, 1, ty};
  }
  if (s.finalReductions) {
    // Column reductions: 8 lanes x 16 bytes cover a 128-byte line of each
    // row, 256 threads per block, and enough blocks over the rows to fill
    // the target's SMs twice with at least two rows per thread.
    const int64_t kTargetBlocks = 2 * int64_t(s.sms);
    int bytes = 1;
    for (const auto &[dims, b] : s.tensors)
      if (dims.back() == innermost)
        bytes = std::max(bytes, b);
    for (int vec : {8, 4, 2}) {
      int tx = std::clamp(128 / (vec * bytes), 1, 32);
      KernelConfig c{innermost, tx, 256 / tx, 1, vec, 1};
      int64_t grid = s.outerPoints / (int64_t(tx) * vec);
      while (grid * c.split < kTargetBlocks && s.rowPoints % (2 * c.split) == 0 &&
             s.rowPoints / (2 * c.split) >= 2 * c.ty)
        c.split *= 2;
      if (!whyInfeasible(s, c).empty())
        continue;
      // A heavy body over many rows outgrows the instruction cache unrolled
      // whole: a loop unrolled by the rows fetched ahead (kWholeSweepFlopLimit).
      KernelConfig rolled = c;
      rolled.unroll = kFetchDepth;
      if (sweepCode(s, c) > kWholeSweepFlopLimit && whyInfeasible(s, rolled).empty())
        return rolled;
      return c;
    }
  }
  // The contiguous dim is an outer one: lanes along it keep loads coalesced,
  // as long as enough blocks remain to fill the GPU (measured on an H200:
  // 32 blocks of 32x16 were 4x slower than 1024 blocks of 1x128).
  constexpr int64_t kMinBlocks = 256;
  for (KernelConfig c : {KernelConfig{innermost, 32, 16}, KernelConfig{innermost, 16, 16},
                         KernelConfig{innermost, 8, 16}})
    if (whyInfeasible(s, c).empty() && s.outerPoints / c.tx >= kMinBlocks)
      return c;
  KernelConfig c{0, 1, 128};
  if (whyInfeasible(s, c).empty())
    return c;
  return {0, 1, 32}; // one warp per outer point: always feasible
}

} // namespace dmc::codegen
