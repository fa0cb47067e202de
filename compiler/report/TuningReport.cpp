//===- TuningReport.cpp - a tuning database's measurements as a page -----===//
#include "compiler/report/TuningReport.h"

#include "compiler/report/ReportFormat.h"
#include "compiler/report/SvgTool.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace dmc::report {
namespace {

/// One violin's entry (violins.py's format) of a kernel's or contraction's
/// choice, or nothing when it has no measurements.
template <class Choice>
void addViolin(llvm::json::Array &ops, const std::string &name, const Choice &c) {
  if (c.candidateUs.empty())
    return;
  llvm::json::Array times;
  for (double t : c.candidateUs)
    times.push_back(t);
  ops.push_back(llvm::json::Object{
      {"name", name},
      {"times_us", std::move(times)},
      {"default_us", c.defaultUs >= 0 ? llvm::json::Value(c.defaultUs) : nullptr},
      {"chosen_us", c.chosenUs >= 0 ? llvm::json::Value(c.chosenUs) : nullptr}});
}

/// The plot's input: kernels, then contractions, with measurements only.
std::string plotInput(const tuningdb::KnobSelection &sel, const std::string &title) {
  llvm::json::Array kernels;
  for (const tuningdb::KernelChoice &k : sel.kernels)
    addViolin(kernels, k.kernel, k);
  for (const tuningdb::ContractionChoice &c : sel.contractions)
    addViolin(kernels, c.contraction + " " + c.equation, c);
  std::string text;
  llvm::raw_string_ostream(text)
      << llvm::json::Value(llvm::json::Object{{"title", title}, {"kernels", std::move(kernels)}});
  return text;
}

std::string us(double v) { return v < 0 ? "-" : llvm::formatv("{0:f1}", v).str(); }

} // namespace

llvm::Error writeTuningReport(const tuningdb::KnobSelection &sel, const std::string &device,
                              const std::string &model, const std::string &dbPath,
                              const std::string &path) {
  std::string title =
      model + " on " + device + ": measured configurations per kernel and contraction";
  // The violins, or why there are none.
  std::string svg, missing;
  // $DMC_PYTHON, else Debian's python3 (where python3-matplotlib installs),
  // else the first python3 on PATH.
  llvm::ErrorOr<std::string> python = std::make_error_code(std::errc::no_such_file_or_directory);
  if (const char *env = std::getenv("DMC_PYTHON"); env && *env)
    python = std::string(env);
  else if (llvm::sys::fs::can_execute("/usr/bin/python3"))
    python = std::string("/usr/bin/python3");
  else
    python = llvm::sys::findProgramByName("python3");
  if (!python) {
    missing = "python3 was not found ($DMC_PYTHON, /usr/bin/python3, PATH)";
  } else {
    int rc = -1;
    auto drawn = svgFromTool(*python, {DMC_SOURCE_DIR "/compiler/report/violins.py"},
                             plotInput(sel, title), "json", &rc);
    if (drawn)
      svg = std::move(*drawn);
    else
      missing = rc == 3 ? "matplotlib is missing (Debian: apt-get install python3-matplotlib)"
                        : llvm::toString(drawn.takeError());
  }

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + path + ": " + ec.message());
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << htmlEscape(title)
     << "</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
        "collapse}td,th{border:1px solid #ccc;padding:2px 8px}td.num{text-align:right}"
        ".notice{background:#fff3cd;padding:8px}</style></head><body>\n";
  os << "<h1>" << htmlEscape(title) << "</h1>\n<p>Database <code>" << htmlEscape(dbPath)
     << "</code>; records matched on device, NVRTC and codegen version: "
     << sel.match.matched.size() << ". Each violin: the kernel's measured configurations "
     << "in its default layouts (a contraction's: its measured cuBLASLt algorithms), "
     << "median time over its fastest; circle: the default configuration, diamond: the "
     << "chosen one (the global selection may also move layouts; see <code>dmc "
     << "compile</code>'s output).</p>\n";
  if (!svg.empty())
    os << "<div id=\"violins\">" << svg << "</div>\n";
  else
    os << "<div class=\"notice\" id=\"violins-missing\">No plot: " << htmlEscape(missing)
       << ". The table below has the same figures.</div>\n";
  os << "<table id=\"kernels\">\n<tr><th>kernel</th><th>candidates</th><th>default us</th>"
        "<th>fastest us</th><th>fastest configuration</th></tr>\n";
  for (const tuningdb::KernelChoice &k : sel.kernels)
    os << "<tr><td>" << htmlEscape(k.kernel) << "</td><td class=\"num\">" << k.candidates
       << "</td><td class=\"num\">" << us(k.defaultUs) << "</td><td class=\"num\">"
       << us(k.chosenUs) << "</td><td>" << htmlEscape(k.chosen) << "</td></tr>\n";
  os << "</table>\n<p>Kernels measured with their default knobs too: " << sel.comparable
     << "; their time " << us(sel.defaultSumUs) << " us default, " << us(sel.chosenSumUs)
     << " us fastest.</p>\n";
  if (!sel.contractions.empty()) {
    os << "<table id=\"contractions\">\n<tr><th>contraction</th><th>algorithms</th>"
          "<th>default us</th><th>chosen us</th><th>chosen algorithm</th></tr>\n";
    for (const tuningdb::ContractionChoice &c : sel.contractions)
      os << "<tr><td>" << htmlEscape(c.contraction + " " + c.equation)
         << "</td><td class=\"num\">" << c.candidates << "</td><td class=\"num\">"
         << us(c.defaultUs) << "</td><td class=\"num\">" << us(c.chosenUs) << "</td><td>"
         << htmlEscape(c.chosen) << "</td></tr>\n";
    os << "</table>\n<p>Contractions measured with the heuristic's algorithm too: "
       << sel.contractionsComparable << "; their time " << us(sel.contractionDefaultSumUs)
       << " us default, " << us(sel.contractionChosenSumUs) << " us chosen.</p>\n";
  }
  os << "</body></html>\n";
  return llvm::Error::success();
}

} // namespace dmc::report
