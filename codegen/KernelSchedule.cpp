//===- KernelSchedule.cpp - a loop kernel's schedule, whatever its shape --===//
#include "codegen/KernelSchedule.h"

#include "codegen/EmitSupport.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdio>

namespace dmc::codegen {
namespace {

template <typename T> std::string list(const char *prefix, const T &items) {
  std::string s;
  for (auto i : items)
    s += (s.empty() ? "" : " ") + (prefix + std::to_string(i));
  return s.empty() ? "-" : s;
}

std::string dims(const std::string &d) { return d.empty() ? "-" : d; }

std::string dim(char d) { return d ? std::string(1, d) : "-"; }

/// "; keep bits in3 (d0) read, in4 (d1) written": the saved keep bits the
/// draws `ds` read or write, or "" when they draw their masks.
template <typename T> std::string keepBits(const NodeGraph &g, const T &ds) {
  std::string read, written;
  for (int k : ds) {
    const Draw &d = g.draws[k];
    std::string who = " (d" + std::to_string(k) + ")";
    if (d.bitsInput >= 0)
      read += (read.empty() ? "in" : ", in") + std::to_string(d.bitsInput) + who;
    if (d.bitsOutput >= 0)
      written += (written.empty() ? "out" : ", out") + std::to_string(d.bitsOutput) + who;
  }
  std::string s;
  if (!read.empty())
    s += "; keep bits " + read + " read";
  if (!written.empty())
    s += "; keep bits " + written + " written";
  return s;
}

void describeRows(const RowSchedule &r, const NodeGraph &g, const std::string &ind,
                  std::string &out) {
  out += ind + "rows: outer " + dims(r.outer) + " (" + std::to_string(r.outerChunks) +
         " chunks), " + std::to_string(r.per) + " a thread; row " +
         std::to_string(r.rowChunks) + " chunks of " + std::to_string(r.rowVecWidth) +
         " point(s), " + std::to_string(r.perRow) + " a thread; vector " +
         std::to_string(r.vec) + " along " + dim(r.vd) + "\n";
  out += ind + "launch: " + std::to_string(r.grid) + " blocks of " +
         std::to_string(r.threads) + " threads (at least " + std::to_string(r.minBlocks) +
         " an SM)" + (r.whole ? ", no thread leaves early" : "") +
         (r.caching ? ", rows kept in registers across passes" : "") + "\n";
  for (size_t p = 0; p < r.passPlans.size(); ++p) {
    const PassPlan &pp = r.passPlans[p];
    std::vector<int> computed, cached;
    for (size_t i = 0; i < pp.nodes.size(); ++i)
      (pp.fromCache[i] ? cached : computed).push_back(pp.nodes[i]);
    out += ind + "pass " + std::to_string(p) + ":" +
           (pp.outerValues.empty() ? "" : " before the sweep " + list("n", pp.outerValues) + ";") +
           (pp.sweeps ? " sweeps the row" : " no sweep") + "\n";
    if (!pp.sweeps)
      continue;
    out += ind + "  reads " + list("in", pp.vectorInputs) + " as row vectors, " +
           list("in", pp.outerVectorInputs) + " as outer vectors, " +
           list("in", pp.scalarInputs) + " as scalars" +
           (r.fetch.sweep == int(p) ? "; fetches " + list("in", r.fetch.inputs) +
                                          " a row group ahead"
                                    : "") +
           "\n";
    out += ind + "  computes " + list("n", computed) + "; from registers " +
           list("n", cached) + "; draws " + list("d", pp.draws) + keepBits(g, pp.draws) + "\n";
    out += ind + "  reduces " + list("n", pp.reductions) + " over the block; sums " +
           list("n", pp.sums) + "; stores " + list("out", pp.stores) + "\n";
  }
  if (!r.outerStores.empty())
    out += ind + "after the passes: stores " + list("out", r.outerStores) +
           " (one value per outer point)\n";
}

const char *readName(ColumnRead r) {
  switch (r) {
  case ColumnRead::None: return "not read";
  case ColumnRead::Scalar: return "scalar";
  case ColumnRead::Vector: return "vector";
  case ColumnRead::Fetched: return "fetched ahead";
  case ColumnRead::FetchedShared: return "fetched ahead, slots shared with its stack";
  }
  return "?";
}

void describeColumns(const ColumnSchedule &c, const NodeGraph &g, const std::string &ind,
                     std::string &out) {
  out += ind + "columns: lanes along " + dim(c.laneDim) + ", vector " + std::to_string(c.vec) +
         "; outer " + dims(c.outer) + " (" + std::to_string(c.outerChunks) + " chunks); " +
         std::to_string(c.rows) + " rows a block, split " + std::to_string(c.split) + "\n";
  out += ind + "launch: " + std::to_string(c.gridX) + " x " + std::to_string(c.split) +
         " blocks; " +
         (c.iters ? std::to_string(c.iters) + " rows a thread" : std::string("rows uneven")) +
         ", fetched " + std::to_string(c.depth) + " ahead, unrolled " +
         (c.unroll ? std::to_string(c.unroll) : std::string("whole")) + "\n";
  for (size_t n = 0; n < c.reads.size(); ++n) {
    std::string how = readName(c.reads[n]);
    for (int k : c.draws) // saved keep bits are read through their draw
      if (g.draws[k].bitsInput == int(n))
        how = "keep bits of d" + std::to_string(k) +
              (llvm::is_contained(c.fetchedBits, k) ? ", fetched ahead" : "");
    out += ind + "  in" + std::to_string(n) + ": " + how + "\n";
  }
  out += ind + "sweep: draws " + list("d", c.draws) + keepBits(g, c.draws) + "; reduces " + list("n", c.reductions) +
         (c.split > 1 ? " over the block, then across the split" : " over the block") +
         "; stores " + list("out", c.rowStores) + " per point, " + list("out", c.outerStores) +
         " per outer point\n";
}

const char *readName(TileRead r) {
  switch (r) {
  case TileRead::None: return "not read";
  case TileRead::Staged: return "staged in shared memory";
  case TileRead::Vector: return "vector along b";
  case TileRead::Scalar: return "scalar";
  }
  return "?";
}

void describeTiles(const TileSchedule &t, const std::string &ind, std::string &out) {
  out += ind + "tiles: " + std::to_string(t.tile) + " x " + std::to_string(t.tile) +
         " over a = " + dim(t.a) + " (" + std::to_string(t.tilesA) + " tiles) and b = " +
         dim(t.b) + " (" + std::to_string(t.tilesB) + "), vector " + std::to_string(t.vec) +
         "; other dims " + dims(t.others) + "\n";
  out += ind + "launch: " + std::to_string(t.blocks) + " blocks; staged " +
         list("in", t.staged) + "\n";
  for (size_t n = 0; n < t.reads.size(); ++n)
    out += ind + "  in" + std::to_string(n) + ": " + readName(t.reads[n]) + "\n";
}

KernelLaunch rowLaunch(const RowSchedule &r, const KernelSpace &s, const NodeGraph &g,
                       const KernelConfig &config) {
  KernelLaunch l;
  l.blockX = config.tx;
  l.blockY = config.ty;
  l.grid = r.grid;
  l.passes = r.passes;
  if (!r.sums.empty()) {
    l.workspaceBytes = 4 * int64_t(r.sums.size()) * r.blocks * s.rowPoints;
    l.finishes = true;
    l.finishGrid = (int64_t(r.sums.size()) * s.rowPoints + kFinishPoints - 1) / kFinishPoints;
    l.finishBlockX = kFinishPoints;
    l.finishBlockY = kFinishSlices;
    for (auto [n, id] : g.nodeOutputs())
      if (g.nodes[id].column)
        l.finishOutputs.push_back(int64_t(n));
  }
  return l;
}

KernelLaunch columnLaunch(const ColumnSchedule &c, const KernelSpace &s,
                          const KernelConfig &config) {
  KernelLaunch l;
  l.blockX = config.tx;
  l.blockY = config.ty;
  l.grid = c.gridX;
  l.gridY = c.split;
  if (c.split > 1) // the split's partials, then one counter per outer tile
    l.workspaceBytes = 4 * (int64_t(c.reductions.size()) * c.split * s.outerPoints + c.gridX);
  return l;
}

KernelLaunch tileLaunch(const TileSchedule &t, const KernelConfig &config) {
  KernelLaunch l;
  l.blockX = 32;
  l.blockY = config.ty;
  l.grid = t.blocks;
  return l;
}

} // namespace

KernelLaunch launchOf(const EmittedKernel &k) {
  KernelLaunch l;
  l.grid = k.grid;
  l.gridY = k.gridY;
  l.gridZ = k.gridZ;
  l.blockX = k.blockX;
  l.blockY = k.blockY;
  l.sharedBytes = k.sharedBytes;
  l.passes = k.passes;
  l.workspaceBytes = k.workspaceBytes;
  l.finishes = !k.finishEntry.empty();
  l.finishGrid = k.finishGrid;
  l.finishBlockX = k.finishBlockX;
  l.finishBlockY = k.finishBlockY;
  l.finishOutputs = k.finishOutputs;
  return l;
}

const char *KernelSchedule::shapeName() const {
  return rows() ? "rows" : columns() ? "columns" : tiles() ? "tiles" : "attention";
}

llvm::Error lowerForConfig(dm::KernelOp kernel, const KernelConfig &config, KernelSpace &space,
                           NodeGraph &g) {
  space = spaceOf(kernel);
  if (std::string why = whyInfeasible(space, config); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel '" + kernel.getName() + "': configuration " +
                                       config.describe() + " is infeasible: " + why);
  return lowerKernel(kernel, space, g);
}

KernelSchedule scheduleKernel(dm::KernelOp kernel, const KernelSpace &space, const NodeGraph &g,
                              const KernelConfig &config) {
  KernelSchedule s;
  if (isTiledConfig(space, config)) {
    TileSchedule t = scheduleTiledKernel(kernel, space, g, config);
    s.launch = tileLaunch(t, config);
    s.plan = std::move(t);
  } else if (isColumnConfig(config)) {
    ColumnSchedule c = scheduleColumnKernel(kernel, space, g, config);
    s.launch = columnLaunch(c, space, config);
    s.plan = std::move(c);
  } else {
    RowSchedule r = scheduleRowKernel(kernel, space, g, config);
    s.launch = rowLaunch(r, space, g, config);
    s.plan = std::move(r);
  }
  return s;
}

llvm::Expected<EmittedKernel> emitSchedule(dm::KernelOp kernel, const KernelSpace &space,
                                           const NodeGraph &g, const KernelConfig &config,
                                           const KernelSchedule &schedule, llvm::StringRef entry) {
  llvm::Expected<EmittedKernel> k =
      schedule.tiles()     ? emitTiledKernel(kernel, space, g, config, *schedule.tiles(), entry)
      : schedule.columns() ? emitColumnKernel(kernel, space, g, config, *schedule.columns(), entry)
                           : emitRowKernel(kernel, space, g, config, *schedule.rows(), entry);
  if (!k)
    return k;
  applyLaunch(schedule.launch, entry, *k);
  return k;
}

void applyLaunch(const KernelLaunch &l, llvm::StringRef entry, EmittedKernel &k) {
  k.grid = l.grid;
  k.gridY = l.gridY;
  k.gridZ = l.gridZ;
  k.blockX = l.blockX;
  k.blockY = l.blockY;
  k.sharedBytes = l.sharedBytes;
  k.passes = l.passes;
  k.workspaceBytes = l.workspaceBytes;
  if (l.finishes) {
    k.finishEntry = entry.str() + "_finish";
    k.finishGrid = l.finishGrid;
    k.finishBlockX = l.finishBlockX;
    k.finishBlockY = l.finishBlockY;
    k.finishOutputs = l.finishOutputs;
  }
}

/// `v` in the shortest of %f and %e (0.125, 0.1).
static std::string shortest(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// A fused attention kernel: what it computes, its dropout, the tiles a
/// block owns and loops over, and its launch.
static void describeAttention(const AttentionSchedule &a, const KernelLaunch &l,
                              const std::string &ind, std::string &out) {
  using dmcgen::AttentionKernelKind;
  const dmcgen::AttentionProblem &p = a.problem;
  std::string masks = p.causal && p.keyPadding ? "causal and key padding"
                      : p.causal               ? "causal"
                      : p.keyPadding           ? "key padding"
                                               : "none";
  out += ind + "attention: " + dmcgen::kernelKindName(a.kind) + " of B" + std::to_string(p.B) +
         " H" + std::to_string(p.H) + " Lq" + std::to_string(p.Lq) + " Lk" +
         std::to_string(p.Lk) + " D" + std::to_string(p.D) + " " + dmrt::dtypeName(p.dtype) +
         ", scale " + shortest(p.scale) + "; masks " + masks + "\n";
  std::string dropout = "none";
  if (p.dropout > 0) {
    dropout = "p " + shortest(p.dropout) + " (Philox id " + std::to_string(p.dropoutId) + "), ";
    if (!dmcgen::usesKeepBits(p))
      dropout += "drawn";
    else
      dropout += a.kind == AttentionKernelKind::Forward ? "drawn, keep bits written"
                                                        : "keep bits read";
  }
  out += ind + "dropout: " + dropout + "\n";
  const bool keyMajor = a.kind == AttentionKernelKind::GradKV;
  const dmcgen::AttentionTiles &t = a.tiles;
  out += ind + "tiles: a block owns " + std::to_string(keyMajor ? t.blockN : t.blockM) +
         (keyMajor ? " keys" : " queries") + " and loops over tiles of " +
         std::to_string(keyMajor ? t.blockM : t.blockN) + (keyMajor ? " queries" : " keys") +
         "; " + std::to_string(t.warps) + " warps, " +
         (t.wgmma ? "warpgroup MMA (wgmma)" : "mma.sync") + "\n";
  out += ind + "launch: " + std::to_string(l.grid) + " x " + std::to_string(l.gridY) + " x " +
         std::to_string(l.gridZ) + " blocks of " + std::to_string(l.blockX * l.blockY) +
         " threads, " + std::to_string(l.sharedBytes) + " bytes of shared memory\n";
}

std::string describeSchedule(const KernelSchedule &schedule, const NodeGraph &g,
                             const std::string &indent) {
  std::string out;
  if (const RowSchedule *r = schedule.rows())
    describeRows(*r, g, indent, out);
  else if (const ColumnSchedule *c = schedule.columns())
    describeColumns(*c, g, indent, out);
  else if (const TileSchedule *t = schedule.tiles())
    describeTiles(*t, indent, out);
  else
    describeAttention(*schedule.attention(), schedule.launch, indent, out);
  const KernelLaunch &l = schedule.launch;
  if (l.workspaceBytes > 0)
    out += indent + "workspace: " + std::to_string(l.workspaceBytes) + " bytes" +
           (l.finishes ? "; a finishing launch of " + std::to_string(l.finishGrid) +
                             " blocks of " + std::to_string(l.finishBlockX) + " x " +
                             std::to_string(l.finishBlockY) + " threads writes " +
                             list("out", l.finishOutputs)
                       : std::string()) +
           "\n";
  return out;
}

llvm::Expected<std::string> describeKernel(dm::KernelOp kernel, const KernelConfig &config) {
  if (isFusedKernel(kernel)) {
    llvm::Expected<KernelSchedule> schedule = scheduleAttention(kernel, config);
    if (!schedule)
      return schedule.takeError();
    // config's tiles, or the default's when it names none
    KernelConfig tiles = withTiles(schedule->attention()->tiles);
    return std::string(schedule->shapeName()) + ", " + tiles.describe() + "\n" +
           describeSchedule(*schedule, NodeGraph());
  }
  KernelSpace s;
  NodeGraph g;
  if (llvm::Error e = lowerForConfig(kernel, config, s, g))
    return e;
  KernelSchedule schedule = scheduleKernel(kernel, s, g, config);
  return std::string(schedule.shapeName()) + ", " + config.describe() + "\n" +
         describeSchedule(schedule, g);
}

} // namespace dmc::codegen
