//===- Report.h - `dmc report`: where bytes and time go -------------------===//
#ifndef DMC_COMPILER_REPORT_REPORT_H
#define DMC_COMPILER_REPORT_REPORT_H

#include "compiler/report/DataMovement.h"
#include "passes/Pipeline.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
class MLIRContext;
}

namespace dmc::report {

/// Builds the model's training graph three times (as built; stacked; through
/// `last`, with the optional passes `options` says) and costs each.
llvm::Expected<DataMovementReport> analyzeModel(mlir::MLIRContext &ctx,
                                                llvm::StringRef modelPath, Stage last,
                                                PipelineOptions options = {});

/// Tables for people: summary, per-class table, per-kernel table.
void printText(const DataMovementReport &report, llvm::raw_ostream &os);
/// The same for tools; the schema is documented in docs/report-schema.md.
void printJson(const DataMovementReport &report, llvm::raw_ostream &os);
/// One self-contained HTML page: the tables and the dataflow graph drawn by
/// Graphviz (`dot -Tsvg`, embedded). Without `dot` the page says how to
/// install it and still has the tables.
void printHtml(const DataMovementReport &report, llvm::raw_ostream &os);

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_REPORT_H
