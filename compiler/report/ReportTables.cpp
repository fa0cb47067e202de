//===- ReportTables.cpp - the report's tables, shared by text and HTML ----===//
#include "compiler/report/ReportTables.h"

#include "compiler/report/ReportFormat.h"

#include "llvm/ADT/StringExtras.h"

namespace dmc::report {

const std::vector<std::string> &classOrder() {
  static const std::vector<std::string> order = {"contraction", "normalization",
                                                 "elementwise"};
  return order;
}

std::vector<std::string> classesOf(const GraphCost &g) {
  std::vector<std::string> classes = classOrder();
  for (const auto &[name, totals] : g.byClass)
    if (!llvm::is_contained(classes, name))
      classes.push_back(name);
  return classes;
}

KernelCounts countKernels(const GraphCost &g) {
  KernelCounts c;
  for (const WorkItem &w : g.items) {
    (w.backward ? c.backward : c.forward) += 1;
    (w.opClass == "contraction" ? c.contractions : c.nonContractions) += 1;
    c.fused += w.fused;
  }
  return c;
}

double reductionVsUnfused(const DataMovementReport &r, const GraphCost &g) {
  return r.unfused.bytes ? 100.0 * (1.0 - double(g.bytes) / double(r.unfused.bytes)) : 0.0;
}

std::vector<std::pair<std::string, std::string>> summaryLines(const DataMovementReport &r) {
  KernelCounts k = countKernels(r.fused);
  KernelCounts u = countKernels(r.unfused);
  std::vector<std::pair<std::string, std::string>> lines;
  lines.push_back({"model", r.model});
  lines.push_back({"stage", r.stage});
  lines.push_back({"kernels (fused)", llvm::formatv("{0} ({1} forward, {2} backward)",
                                                    k.forward + k.backward, k.forward,
                                                    k.backward)
                                          .str()});
  lines.push_back({"non-contraction kernels",
                   llvm::formatv("{0} fused (unfused: {1}); contractions: {2}{3}",
                                 k.nonContractions, u.nonContractions, k.contractions,
                                 k.fused ? llvm::formatv(" ({0} of them fused attention kernels)",
                                                         k.fused)
                                               .str()
                                         : std::string())
                       .str()});
  lines.push_back({"flop", fmtGFLOP(r.fused.flop) + " GFLOP"});
  lines.push_back({"bytes moved", fmtMB(r.unfused.bytes) + " MB unfused -> " +
                                      fmtMB(r.stacked.bytes) + " MB stacked -> " +
                                      fmtMB(r.fused.bytes) + " MB fused"});
  lines.push_back({"reduction vs unfused",
                   fmtPercent(reductionVsUnfused(r, r.stacked)) + "% stacked, " +
                       fmtPercent(r.reductionPercent()) + "% fused"});
  lines.push_back({"counted as", kCountingRule});
  if (r.memory.planned) {
    const MemoryFigures &m = r.memory;
    lines.push_back({"memory arena (planned)",
                     fmtMB(m.arenaBytes) + " MB (peak live " + fmtMB(m.peakLiveBytes) +
                         " MB; workspaces " + fmtMB(m.workspaceBytes) + " MB)"});
    lines.push_back({"inference arena (planned)",
                     fmtMB(m.inferenceArenaBytes) + " MB (peak live " +
                         fmtMB(m.inferencePeakLiveBytes) +
                         " MB; forward only: saved activations die at their last forward "
                         "use)"});
    lines.push_back({"intermediates, no reuse", fmtMB(m.intermediateBytes) + " MB"});
    lines.push_back({"saved activations", fmtMB(m.savedActivationBytes) +
                                              " MB (written forward, read backward)"});
  }
  if (r.attention.kernels > 0) {
    const MemoryFigures &u = r.attention.unfusedMemory;
    lines.push_back({"fused attention",
                     llvm::formatv("{0} kernels; without them (--no-fused-attention): {1} MB "
                                   "moved, arena {2} MB, saved activations {3} MB",
                                   r.attention.kernels, fmtMB(r.attention.unfusedBytes),
                                   fmtMB(u.arenaBytes), fmtMB(u.savedActivationBytes))
                         .str()});
  }
  if (r.layouts.chosen) {
    const LayoutFigures &l = r.layouts;
    int64_t changedBytes = 0;
    for (const LayoutChange &c : l.changed)
      changedBytes += c.bytes;
    lines.push_back({"contractions without cuBLASLt form",
                     llvm::formatv("{0} of {1} in the frontend's layouts -> {2}",
                                   l.unmappableBefore, l.contractions, l.unmappableAfter)
                         .str()});
    lines.push_back({"layouts changed", llvm::formatv("{0} tensors ({1} MB), written so by "
                                                      "their producers at no extra traffic",
                                                      l.changed.size(), fmtMB(changedBytes))
                                            .str()});
    lines.push_back({"transposes inserted", llvm::formatv("{0} ({1} MB read + written)",
                                                          l.transposes.size(),
                                                          fmtMB(l.transposeBytes()))
                                                .str()});
    size_t folded = llvm::count_if(l.epilogues, [](const EpilogueUse &e) {
      return e.chosen != "none";
    });
    lines.push_back({"cuBLASLt epilogues",
                     llvm::formatv("{0} of {1} marked contractions ({2} MB saved)", folded,
                                   l.epilogues.size(), fmtMB(l.epilogueBytesSaved()))
                         .str()});
  }
  return lines;
}

Table layoutTable(const LayoutFigures &l) {
  Table t;
  t.title = "Layouts chosen by the configuration (tensors that differ from the frontend's)";
  t.header = {"tensor", "written by", "frontend", "chosen", "MB"};
  t.numeric = {false, false, false, false, true};
  for (const LayoutChange &c : l.changed)
    t.rows.push_back({c.tensor, c.producer, c.frontend, c.chosen, fmtMB(c.bytes)});
  return t;
}

Table transposeTable(const LayoutFigures &l) {
  Table t;
  t.title = "Transposes inserted (no producer could write the layout)";
  t.header = {"contraction", "operand", "tensor", "layout", "MB read + written"};
  t.numeric = {false, false, false, false, true};
  for (const InsertedTranspose &x : l.transposes)
    t.rows.push_back({x.contraction, x.operand, x.tensor, x.dims, fmtMB(x.bytes)});
  t.total = {"total", "", "", "", fmtMB(l.transposeBytes())};
  return t;
}

Table epilogueTable(const LayoutFigures &l) {
  Table t;
  t.title = "Epilogues (candidates marked by dm-fuse; folded by dm-gemm-epilogues)";
  t.header = {"contraction", "equation", "candidates", "chosen", "MB saved", "why not"};
  t.numeric = {false, false, false, false, true, false};
  for (const EpilogueUse &e : l.epilogues)
    t.rows.push_back({e.contraction, e.equation, e.candidates, e.chosen, fmtMB(e.bytesSaved),
                      e.whyNot.empty() ? "-" : e.whyNot});
  t.total = {"total", "", "", "", fmtMB(l.epilogueBytesSaved()), ""};
  return t;
}

Table classTable(const GraphCost &g, std::string title) {
  Table t;
  t.title = std::move(title);
  t.header = {"class", "count", "GFLOP", "% flop", "MB moved", "% bytes"};
  t.numeric = {false, true, true, true, true, true};
  int count = 0;
  for (const std::string &name : classesOf(g)) {
    auto it = g.byClass.find(name);
    ClassTotals c = it == g.byClass.end() ? ClassTotals{} : it->second;
    count += c.count;
    t.rows.push_back({name, std::to_string(c.count), fmtGFLOP(c.flop),
                      fmtPercent(percentOf(c.flop, g.flop)), fmtMB(c.bytes),
                      fmtPercent(percentOf(double(c.bytes), double(g.bytes)))});
  }
  t.total = {"total", std::to_string(count), fmtGFLOP(g.flop), g.flop ? "100.0" : "0.0",
             fmtMB(g.bytes), g.bytes ? "100.0" : "0.0"};
  return t;
}

Table kernelTable(const GraphCost &g, std::string title) {
  Table t;
  t.title = std::move(title);
  t.header = {"id",      "dir",     "name",     "class",    "iteration space",
              "GFLOP",   "MB read", "MB written", "flop/B", "epilogue candidates"};
  t.numeric = {true, false, false, false, false, true, true, true, true, false};
  for (const WorkItem &w : g.items)
    t.rows.push_back({std::to_string(w.id), w.backward ? "bwd" : "fwd", w.name, w.opClass,
                      w.space, fmtGFLOP(w.flop), fmtMB(w.bytesRead), fmtMB(w.bytesWritten),
                      fixed(w.intensity(), 2),
                      w.epilogues.empty() ? "-" : llvm::join(w.epilogues, ",")});
  return t;
}

} // namespace dmc::report
