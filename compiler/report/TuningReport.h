//===- TuningReport.h - a tuning database's measurements as a page -------===//
//
// `dmc compile --db DB --db-report OUT.html`: one self-contained HTML page
// with, per kernel of the compiled bundle, the distribution of its measured
// configurations' times (violin plots drawn by compiler/report/violins.py
// with matplotlib, embedded as SVG: the paper's Fig. 5), its default and
// chosen configurations marked, and the table behind them.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_REPORT_TUNINGREPORT_H
#define DMC_COMPILER_REPORT_TUNINGREPORT_H

#include "tuning-db/KnobSelection.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dmc::report {

/// Writes the page to `path`. Without python3 or matplotlib the page still
/// has the table and says what to install; errors name the file.
llvm::Error writeTuningReport(const tuningdb::KnobSelection &selection,
                              const std::string &device, const std::string &model,
                              const std::string &dbPath, const std::string &path);

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_TUNINGREPORT_H
