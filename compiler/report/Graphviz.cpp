//===- Graphviz.cpp - the fused dataflow graph as Graphviz dot and SVG ----===//
#include "compiler/report/Graphviz.h"

#include "compiler/report/ReportFormat.h"
#include "compiler/report/SvgTool.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>

namespace dmc::report {
namespace {

/// `text` inside a dot double-quoted string.
std::string quoted(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n"; // dot's own line break, centred
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::StringRef classColor(llvm::StringRef opClass) {
  if (opClass == "contraction")
    return "#9ecae1";
  if (opClass == "normalization")
    return "#fdae6b";
  if (opClass == "elementwise")
    return "#a1d99b";
  return "#d9d9d9";
}

std::string toDot(const GraphCost &g, llvm::StringRef title) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "digraph dataflow {\n"
     << "  label=" << quoted(title) << "; labelloc=t; fontname=\"Helvetica\";\n"
     << "  rankdir=TB; compound=true; nodesep=0.25; ranksep=0.35;\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
        "fontsize=10];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";

  // Units: a dm.kernel is a cluster of member nodes, a contraction one node.
  // Edges attach to a unit's first member (in) and last member (out).
  auto nodeOf = [](int unit, size_t member) {
    return "u" + std::to_string(unit) + "_" + std::to_string(member);
  };
  auto isCluster = [](const WorkItem &w) { return w.opClass != "contraction"; };
  for (const WorkItem &w : g.items) {
    std::string label = (w.backward ? "bwd " : "fwd ") + std::to_string(w.id) + ": " + w.name;
    if (!isCluster(w)) {
      os << "  " << nodeOf(w.id, 0) << " [label=" << quoted(label + "\n" + w.space)
         << ", fillcolor=" << quoted(classColor(w.opClass)) << "];\n";
      continue;
    }
    os << "  subgraph cluster_" << w.id << " {\n"
       << "    label=" << quoted(label) << "; fontsize=10; style=\"rounded"
       << (w.backward ? ",dashed" : "") << "\"; color=\"#444444\";\n";
    for (auto [n, m] : llvm::enumerate(w.members))
      os << "    " << nodeOf(w.id, n) << " [label=" << quoted(m.name)
         << ", fillcolor=" << quoted(classColor(m.opClass)) << "];\n";
    for (size_t n = 1; n < w.members.size(); ++n) // keep members in order
      os << "    " << nodeOf(w.id, n - 1) << " -> " << nodeOf(w.id, n)
         << " [style=invis];\n";
    os << "  }\n";
  }

  // The function boundary: one plaintext node per argument and per result.
  std::map<std::string, std::string> inputs;
  int outputs = 0;
  os << "  node [shape=plaintext, style=\"\", fontsize=8];\n";
  for (const Edge &e : g.edges) {
    std::string from, to, attrs = "label=" + quoted(humanBytes(e.bytes));
    if (e.from < 0) {
      std::string name = e.tensor.empty() ? "input" : e.tensor;
      auto [it, added] = inputs.try_emplace(name, "in" + std::to_string(inputs.size()));
      if (added)
        os << "  " << it->second << " [label=" << quoted(name) << "];\n";
      from = it->second;
    } else {
      const WorkItem &w = g.items[e.from];
      from = nodeOf(w.id, w.members.empty() ? 0 : w.members.size() - 1);
      if (isCluster(w))
        attrs += ", ltail=cluster_" + std::to_string(w.id);
    }
    if (e.to < 0) {
      to = "out" + std::to_string(outputs++);
      os << "  " << to << " [label=" << quoted(e.tensor.empty() ? "output" : e.tensor)
         << "];\n";
    } else {
      const WorkItem &w = g.items[e.to];
      to = nodeOf(w.id, 0);
      if (isCluster(w))
        attrs += ", lhead=cluster_" + std::to_string(w.id);
    }
    os << "  " << from << " -> " << to << " [" << attrs << "];\n";
  }
  os << "}\n";
  return s;
}

llvm::Expected<std::string> renderSvg(llvm::StringRef dot) {
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName("dot");
  if (!program)
    return failure("Graphviz 'dot' was not found on PATH");
  return svgFromTool(*program, {"-Tsvg"}, dot, "dot");
}

} // namespace dmc::report
