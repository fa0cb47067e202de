//===- ReportTables.h - the report's tables, shared by text and HTML ------===//
//
// The summary, the per-class tables (after Table I of "Data Movement Is All
// You Need") and the per-kernel table are built once as rows of strings;
// ReportText.cpp aligns them in columns and ReportHtml.cpp writes <table>s.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_REPORT_REPORTTABLES_H
#define DMC_COMPILER_REPORT_REPORTTABLES_H

#include "compiler/report/DataMovement.h"

#include <string>
#include <utility>
#include <vector>

namespace dmc::report {

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<bool> numeric; ///< per column: right-aligned numbers
  std::vector<std::vector<std::string>> rows;
  /// A closing row (totals), drawn apart from the others; empty when none.
  std::vector<std::string> total;
};

/// The three classes in the order the tables list them.
const std::vector<std::string> &classOrder();
/// classOrder() followed by any other class `g` has.
std::vector<std::string> classesOf(const GraphCost &g);

/// Fused-graph kernel counts, the numbers behind the summary.
struct KernelCounts {
  int forward = 0, backward = 0, contractions = 0, nonContractions = 0;
  int fused = 0; ///< of `contractions`: fused attention kernels (not cuBLASLt calls)
};
KernelCounts countKernels(const GraphCost &g);

/// Percentage of unfused bytes that `g` saves.
double reductionVsUnfused(const DataMovementReport &r, const GraphCost &g);

/// Summary as (label, value) lines.
std::vector<std::pair<std::string, std::string>> summaryLines(const DataMovementReport &r);

/// Count, GFLOP, % flop, MB moved, % bytes per operator class, with totals.
Table classTable(const GraphCost &g, std::string title);

/// One row per unit of `g` in execution order.
Table kernelTable(const GraphCost &g, std::string title);

/// The tensors whose layout the configuration changed.
Table layoutTable(const LayoutFigures &l);
/// The transposes the configuration inserted, with their bytes.
Table transposeTable(const LayoutFigures &l);
/// The epilogue candidates and what became of each.
Table epilogueTable(const LayoutFigures &l);

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_REPORTTABLES_H
