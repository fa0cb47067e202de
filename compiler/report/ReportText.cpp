//===- ReportText.cpp - `dmc report --format text` ------------------------===//
#include "compiler/report/Report.h"

#include "compiler/report/ReportTables.h"

#include <algorithm>

namespace dmc::report {
namespace {

/// Writes `t` with its columns aligned: text left, numbers right, two spaces
/// between columns, a rule under the header and above the totals.
void printTable(const Table &t, llvm::raw_ostream &os) {
  std::vector<size_t> width(t.header.size(), 0);
  auto widen = [&](const std::vector<std::string> &row) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  };
  widen(t.header);
  for (const auto &row : t.rows)
    widen(row);
  widen(t.total);
  size_t lineWidth = 0;
  for (size_t w : width)
    lineWidth += w + 2;
  lineWidth -= 2;

  auto printRow = [&](const std::vector<std::string> &row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      size_t pad = width[c] - row[c].size();
      bool last = c + 1 == row.size();
      if (t.numeric[c])
        line += std::string(pad, ' ') + row[c];
      else
        line += row[c] + (last ? "" : std::string(pad, ' '));
      if (!last)
        line += "  ";
    }
    os << "  " << line << "\n";
  };
  auto rule = [&] { os << "  " << std::string(lineWidth, '-') << "\n"; };

  os << t.title << "\n";
  printRow(t.header);
  rule();
  for (const auto &row : t.rows)
    printRow(row);
  if (!t.total.empty()) {
    rule();
    printRow(t.total);
  }
  os << "\n";
}

} // namespace

void printText(const DataMovementReport &report, llvm::raw_ostream &os) {
  auto lines = summaryLines(report);
  size_t labelWidth = 0;
  for (const auto &[label, value] : lines)
    labelWidth = std::max(labelWidth, label.size());
  os << "dmc report: data movement\n";
  for (const auto &[label, value] : lines)
    os << "  " << label << ":" << std::string(labelWidth - label.size() + 1, ' ') << value
       << "\n";
  os << "\n";
  printTable(classTable(report.unfused, "Operator classes, unfused (each op one kernel)"), os);
  printTable(classTable(report.fused, "Operator classes, fused (dm.kernels + contractions)"),
             os);
  printTable(kernelTable(report.fused, "Kernels of the fused graph, in execution order"), os);
  if (report.layouts.chosen) {
    printTable(layoutTable(report.layouts), os);
    printTable(transposeTable(report.layouts), os);
    printTable(epilogueTable(report.layouts), os);
  }
}

} // namespace dmc::report
