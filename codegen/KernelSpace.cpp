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
    return llvm::formatv("attention tiles {0}x{1}, {2} warps", blockM, blockN, warps);
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

/// A tile of T x T points, T = 32 x vec, of lane dim a (the staged inputs'
/// contiguous dim) and the outputs' contiguous dim b; 32 x ty threads.
static std::string whyInfeasibleTiled(const KernelSpace &s, const KernelConfig &c) {
  const char a = c.laneDim, b = tiledWriteDim(s);
  if (!b)
    return "a tile through shared memory needs outputs contiguous along one dim";
  if (s.outer.find(a) == std::string::npos)
    return llvm::formatv("lane dim '{0}' is not an outer dim ({1})", a, s.outer);
  if (a == b)
    return llvm::formatv("lane dim '{0}' is the outputs' contiguous dim: nothing to transpose", a);
  std::vector<unsigned> staged = tiledInputs(s, a);
  if (staged.empty())
    return llvm::formatv("no input is contiguous along lane dim '{0}' and has the outputs' "
                         "contiguous dim '{1}'",
                         a, b);
  if (c.tx != 32)
    return llvm::formatv("a tile's rows take a warp's 32 lanes (tx 32, not {0})", c.tx);
  if (c.vec != 1 && c.vec != 2)
    return llvm::formatv("tiles are 32 or 64 points wide: vectors of 1 or 2, not {0}", c.vec);
  const int t = 32 * c.vec;
  if (c.ty < 1 || t % c.ty)
    return llvm::formatv("{0} rows of threads do not divide a tile of {1}", c.ty, t);
  if (c.perThread != 1 || c.split != 1)
    return "a tile takes one point per thread and row (per_thread and split 1)";
  for (char d : {a, b})
    if (s.sizes.at(d) % t)
      return llvm::formatv("dim '{0}' of size {1} is not a multiple of the tile's {2}", d,
                           s.sizes.at(d), t);
  if (int64_t bytes = int64_t(staged.size()) * t * (t + 1) * 4; bytes > 48 * 1024)
    return llvm::formatv("{0} staged inputs need {1} bytes of shared memory (48 KiB at most)",
                         staged.size(), bytes);
  return "";
}

/// A kernel with column sums: tx rows per block side by side, perThread
/// rows after each other, no lane dim; every block takes whole rows, and
/// each thread keeps at most 4 chunks of a row (its column partial sums
/// live in registers).
static std::string whyInfeasibleColumnSums(const KernelSpace &s, const KernelConfig &c) {
  if (c.laneDim)
    return "a kernel with column sums takes whole rows per block (no lane dim)";
  if (c.perThread < 1 || c.tx < 1 || 32 % c.tx)
    return llvm::formatv("{0} rows per block side by side must divide a warp's 32", c.tx);
  int64_t rows = int64_t(c.tx) * c.perThread;
  if (s.outerPoints % rows)
    return llvm::formatv("{0} rows do not divide into blocks of {1} x {2}", s.outerPoints, c.tx,
                         c.perThread);
  int64_t chunks = s.rowPoints / std::max(c.vec, 1);
  if ((chunks + c.ty - 1) / c.ty > 4)
    return llvm::formatv("{0} threads take more than 4 chunks each of a {1}-point row", c.ty,
                         s.rowPoints);
  return "";
}

std::string whyInfeasible(const KernelSpace &s, const KernelConfig &c) {
  if (c.unroll != 0) {
    if (!isColumnConfig(c) || s.row.empty())
      return "unroll applies to column configurations (lanes with vectors or split rows) of "
             "kernels that reduce rows";
    if (c.unroll != kFetchDepth)
      return llvm::formatv("the sweep is unrolled whole (0) or by the rows fetched ahead ({0}), "
                           "not {1}",
                           kFetchDepth, c.unroll);
    if (c.split < 1 || c.ty < 1)
      return "split and ty must be at least 1";
    int64_t rows = s.rowPoints / c.split, iters = rows % c.ty ? 0 : rows / c.ty;
    if (iters <= c.unroll || iters > kMaxFetchIterations || iters % c.unroll)
      return llvm::formatv("{0} rows per thread: the sweep fetches ahead (and unrolls) only "
                           "for 3 to {1}, a multiple of {2}",
                           iters, kMaxFetchIterations, c.unroll);
  }
  if (c.tx * c.ty > 1024)
    return llvm::formatv("{0}x{1} = {2} threads exceed the 1024 of a block", c.tx, c.ty,
                         c.tx * c.ty);
  if (c.tx * c.ty % 32 != 0)
    return llvm::formatv("{0} threads are not a whole number of warps", c.tx * c.ty);
  if (isTiledConfig(s, c))
    return whyInfeasibleTiled(s, c);
  if (s.row.empty() && c.ty != 1)
    return "an elementwise kernel has no row to share between threads (ty must be 1)";
  if (s.columnSums) {
    if (std::string why = whyInfeasibleColumnSums(s, c); !why.empty())
      return why;
  } else if (c.perThread < 1 || (!s.row.empty() && c.perThread != 1)) {
    return "several points per thread apply to elementwise kernels only";
  }
  if (!s.row.empty() && c.ty > 32 && c.ty * c.vec > s.rowPoints)
    return c.vec > 1 ? llvm::formatv("{0} threads x vectors of {1} exceed the row's {2} points",
                                     c.ty, c.vec, s.rowPoints)
                           .str()
                     : llvm::formatv("{0} threads per row but the row has {1} points", c.ty,
                                     s.rowPoints)
                           .str();
  if (c.split < 1)
    return "split must be at least 1";
  if (c.split > 1) {
    if (s.row.empty() || !c.laneDim)
      return "splitting rows across blocks needs a reduction and a lane dim";
    if (s.rowPoints % c.split || s.rowPoints / c.split < c.ty)
      return llvm::formatv("{0} rows do not split into {1} parts of at least {2}", s.rowPoints,
                           c.split, c.ty);
  }
  if (isColumnConfig(c) && !s.finalReductions)
    return "a reduction feeds other ops in the kernel: the column strategy (lane vectors, split "
           "rows) needs one sweep";
  if (c.vec != 1) {
    char d = s.mainLayout.back();
    if (c.vec < 1 || (c.vec & (c.vec - 1)))
      return "vectors come in powers of two";
    if (!s.row.empty() && c.laneDim && c.laneDim != d)
      return llvm::formatv("lane vectors need lanes along the contiguous dim '{0}'", d);
    if (!s.row.empty() && !c.laneDim && s.row.find(d) == std::string::npos)
      return llvm::formatv("row vectors need the contiguous dim '{0}' among the reduced dims", d);
    if (c.laneDim && s.sizes.at(d) % (int64_t(c.vec) * c.tx))
      return llvm::formatv("the lane dim '{0}' of size {1} is not a multiple of {2} lanes x "
                           "vectors of {3}",
                           d, s.sizes.at(d), c.tx, c.vec);
    if (s.sizes.at(d) % c.vec)
      return llvm::formatv("the contiguous dim '{0}' of size {1} is not a multiple of {2}", d,
                           s.sizes.at(d), c.vec);
    for (size_t n = 0; n < s.tensors.size(); ++n) {
      const auto &[dims, bytes] = s.tensors[n];
      if (s.isPacked(n))
        continue;
      if (dims.find(d) != std::string::npos && dims.back() != d)
        return llvm::formatv("a tensor with dims '{0}' has the vector dim '{1}' but not "
                             "innermost",
                             dims, d);
      if (dims.back() == d && c.vec * bytes > 16)
        return llvm::formatv("{0} elements of {1} bytes exceed a 16-byte access", c.vec, bytes);
    }
  }
  if (c.laneDim) {
    if (s.outer.find(c.laneDim) == std::string::npos)
      return llvm::formatv("lane dim '{0}' is not an outer dim ({1})", c.laneDim, s.outer);
    if (s.sizes.at(c.laneDim) % c.tx != 0)
      return llvm::formatv("lane dim '{0}' of size {1} is not a multiple of {2} lanes",
                           c.laneDim, s.sizes.at(c.laneDim), c.tx);
  } else if (!s.row.empty() && c.tx != 1 && !s.columnSums) {
    return "several lanes per block need a lane dim";
  }
  return "";
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
      for (int ty : {64, 128})
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
  // after every other (`--config-index N` keeps its meaning).
  for (size_t n = 0, end = feasible.size(); n < end; ++n) {
    KernelConfig rolled = feasible[n];
    rolled.unroll = kFetchDepth;
    if (isColumnConfig(rolled) && whyInfeasible(s, rolled).empty())
      feasible.push_back(rolled);
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
      if (whyInfeasible(s, c).empty())
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
