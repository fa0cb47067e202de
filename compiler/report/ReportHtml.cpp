//===- ReportHtml.cpp - `dmc report --format html` ------------------------===//
//
// One self-contained page: inline CSS, no scripts, no external references.
// The fused dataflow graph is drawn by Graphviz and embedded as inline SVG;
// without `dot` the page says how to install it and keeps the tables.
//
//===----------------------------------------------------------------------===//
#include "compiler/report/Report.h"

#include "compiler/report/Graphviz.h"
#include "compiler/report/ReportFormat.h"
#include "compiler/report/ReportTables.h"

namespace dmc::report {
namespace {

constexpr const char *kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; font-size: 0.9em; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; text-align: left; }
th { background: #f0f0f0; border-bottom: 2px solid #999; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { border-top: 2px solid #999; font-weight: bold; }
table.summary th { background: none; border-bottom: 1px solid #ddd; }
.note { color: #555; font-size: 0.9em; }
.notice { border: 1px solid #d9a400; background: #fff8e1; padding: 0.8em 1em; }
.legend span.swatch { display: inline-block; width: 1em; height: 1em;
  border: 1px solid #666; vertical-align: middle; margin: 0 0.3em 0 1em; }
.graph { overflow: auto; border: 1px solid #ddd; padding: 0.5em; }
code { background: #f4f4f4; padding: 0 0.2em; }
)css";

void printTable(const Table &t, llvm::StringRef id, llvm::raw_ostream &os) {
  os << "<h2>" << htmlEscape(t.title) << "</h2>\n<table id=\"" << id << "\">\n<tr>";
  for (size_t c = 0; c < t.header.size(); ++c)
    os << "<th" << (t.numeric[c] ? " class=\"num\"" : "") << ">" << htmlEscape(t.header[c])
       << "</th>";
  os << "</tr>\n";
  auto row = [&](const std::vector<std::string> &cells, llvm::StringRef cls) {
    os << "<tr" << (cls.empty() ? "" : " class=\"" + cls.str() + "\"") << ">";
    for (size_t c = 0; c < cells.size(); ++c)
      os << "<td" << (t.numeric[c] ? " class=\"num\"" : "") << ">" << htmlEscape(cells[c])
         << "</td>";
    os << "</tr>\n";
  };
  for (const auto &cells : t.rows)
    row(cells, "");
  if (!t.total.empty())
    row(t.total, "total");
  os << "</table>\n";
}

void printGraph(const DataMovementReport &report, llvm::raw_ostream &os) {
  os << "<h2>Dataflow of the fused graph</h2>\n<p class=\"legend\">Nodes by class:";
  for (const std::string &cls : classOrder())
    os << "<span class=\"swatch\" style=\"background:" << classColor(cls) << "\"></span>"
       << htmlEscape(cls);
  os << "</p>\n<p class=\"note\">Each boxed group is one fused kernel (dashed: backward) "
        "holding its member ops; contractions are single nodes. Edges carry the tensor's "
        "bytes; plaintext nodes are the layer's inputs and outputs.</p>\n";
  llvm::Expected<std::string> svg =
      renderSvg(toDot(report.fused, report.model + " (" + report.stage + ")"));
  if (svg) {
    os << "<div class=\"graph\">\n" << *svg << "\n</div>\n";
    return;
  }
  os << "<div class=\"notice\" id=\"graphviz-missing\"><strong>The dataflow graph could not "
        "be drawn: Graphviz is missing or failed.</strong> "
     << htmlEscape(llvm::toString(svg.takeError()))
     << ".<br>Install Graphviz (for example <code>apt-get install graphviz</code>, or "
        "<code>brew install graphviz</code>) so that <code>dot</code> is on PATH, and run "
        "<code>dmc report --format html</code> again. The tables below are complete.</div>\n";
}

} // namespace

void printHtml(const DataMovementReport &report, llvm::raw_ostream &os) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<title>dmc report: " << htmlEscape(report.model) << "</title>\n"
     << "<style>" << kStyle << "</style>\n</head>\n<body>\n"
     << "<h1>dmc report: " << htmlEscape(report.model) << "</h1>\n";

  os << "<h2>Summary</h2>\n<table class=\"summary\" id=\"summary\">\n";
  for (const auto &[label, value] : summaryLines(report))
    os << "<tr><th>" << htmlEscape(label) << "</th><td>" << htmlEscape(value)
       << "</td></tr>\n";
  os << "</table>\n";

  printTable(classTable(report.unfused, "Operator classes, unfused (each op one kernel)"),
             "classes-unfused", os);
  printTable(classTable(report.fused, "Operator classes, fused (dm.kernels + contractions)"),
             "classes-fused", os);
  printGraph(report, os);
  printTable(kernelTable(report.fused, "Kernels of the fused graph, in execution order"),
             "kernels", os);
  if (report.layouts.chosen) {
    printTable(layoutTable(report.layouts), "layouts", os);
    printTable(transposeTable(report.layouts), "transposes", os);
    printTable(epilogueTable(report.layouts), "epilogues", os);
  }
  os << "<p class=\"note\">MB = 10<sup>6</sup> bytes, GFLOP = 10<sup>9</sup> flop. "
     << "Bytes are counted so: " << htmlEscape(kCountingRule) << ".</p>\n"
     << "</body>\n</html>\n";
}

} // namespace dmc::report
