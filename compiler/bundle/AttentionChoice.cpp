//===- AttentionChoice.cpp - Fused or unfused attention, by measurement ---===//
#include "compiler/bundle/AttentionChoice.h"

#include <cstdio>

namespace dmc::bundle {
namespace {

/// "fused 842.0 us (14 kernels, 12 contractions, 1234.5 MB)".
std::string price(const char *name, const DatabaseView &v) {
  char buf[160];
  if (v.complete)
    std::snprintf(buf, sizeof buf, "%s %.1f us (%zu kernels, %zu contractions, %.1f MB)", name,
                  v.predictedStepUs, v.kernels, v.contractions, double(v.bytes) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%s not priced (%zu kernels, %zu contractions, %.1f MB)", name,
                  v.kernels, v.contractions, double(v.bytes) / 1e6);
  return buf;
}

} // namespace

AttentionChoice chooseAttention(const DatabaseView &fused, const DatabaseView &unfused) {
  AttentionChoice c;
  std::string prices = price("fused", fused) + ", " + price("unfused", unfused);
  if (!fused.complete || !unfused.complete) {
    c.line = "attention: " + prices + ": fused kept, not compared (a path has kernels or "
             "contractions without records; dmc tune measures both paths)";
    return c;
  }
  c.compared = true;
  c.unfused = unfused.predictedStepUs < fused.predictedStepUs;
  const DatabaseView &win = c.unfused ? unfused : fused, &lose = c.unfused ? fused : unfused;
  char buf[200];
  std::snprintf(buf, sizeof buf, ": %s chosen, %.1f us (%.1f%%) faster, %+.1f MB moved",
                c.unfused ? "unfused" : "fused", lose.predictedStepUs - win.predictedStepUs,
                100.0 * (lose.predictedStepUs - win.predictedStepUs) / lose.predictedStepUs,
                double(win.bytes - lose.bytes) / 1e6);
  c.line = "attention: " + prices + buf;
  return c;
}

} // namespace dmc::bundle
