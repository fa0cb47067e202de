//===- ReportFormat.h - number and text formatting shared by the reports --===//
//
// One place for the units the report uses, so that the text, JSON and HTML
// outputs agree: MB is 10^6 bytes, GFLOP is 10^9 flop, percentages have one
// decimal.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_REPORT_REPORTFORMAT_H
#define DMC_COMPILER_REPORT_REPORTFORMAT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdint>
#include <string>

namespace dmc::report {

/// How bytes are counted, in one sentence (printed by every format).
inline constexpr const char *kCountingRule =
    "every non-view op (unfused) or kernel/contraction (fused) reads each distinct "
    "operand once and writes each result once; views move nothing";

inline double toMB(int64_t bytes) { return double(bytes) / 1e6; }
inline double toGFLOP(double flop) { return flop / 1e9; }

/// `part` as a percentage of `whole` (0 when `whole` is 0).
inline double percentOf(double part, double whole) {
  return whole != 0 ? 100.0 * part / whole : 0.0;
}

/// `value` with `decimals` digits after the point.
inline std::string fixed(double value, int decimals) {
  switch (decimals) {
  case 0:
    return llvm::formatv("{0:F0}", value).str();
  case 1:
    return llvm::formatv("{0:F1}", value).str();
  case 2:
    return llvm::formatv("{0:F2}", value).str();
  default:
    return llvm::formatv("{0:F3}", value).str();
  }
}

inline std::string fmtMB(int64_t bytes) { return fixed(toMB(bytes), 1); }
inline std::string fmtGFLOP(double flop) { return fixed(toGFLOP(flop), 3); }
inline std::string fmtPercent(double percent) { return fixed(percent, 1); }

/// Bytes in the largest decimal unit that keeps the number >= 1: "8.0 MB".
inline std::string humanBytes(int64_t bytes) {
  const char *units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  return u == 0 ? std::to_string(bytes) + " B" : fixed(v, 1) + " " + units[u];
}

/// `text` safe inside HTML element content and quoted attribute values.
inline std::string htmlEscape(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_REPORTFORMAT_H
