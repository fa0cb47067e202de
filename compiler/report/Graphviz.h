//===- Graphviz.h - the fused dataflow graph as Graphviz dot and SVG ------===//
#ifndef DMC_COMPILER_REPORT_GRAPHVIZ_H
#define DMC_COMPILER_REPORT_GRAPHVIZ_H

#include "compiler/report/DataMovement.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dmc::report {

/// Fill colour of a node of class `opClass` (also used by the HTML legend).
llvm::StringRef classColor(llvm::StringRef opClass);

/// `g` as a dot graph: each dm.kernel a boxed `subgraph cluster_N` labelled
/// with its name holding one node per member op, each contraction a single
/// node, nodes filled by class, graph inputs and outputs as small plaintext
/// nodes, edges labelled with their bytes ("8.0 MB").
std::string toDot(const GraphCost &g, llvm::StringRef title);

/// Runs `dot -Tsvg` on `dot` and returns the <svg> element alone: no XML
/// prolog, DOCTYPE, comments or xmlns attributes, so that it embeds in HTML
/// without naming any URL. Fails when `dot` is not on PATH or does not
/// succeed; the message says which.
llvm::Expected<std::string> renderSvg(llvm::StringRef dot);

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_GRAPHVIZ_H
