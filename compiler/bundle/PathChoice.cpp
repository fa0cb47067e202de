//===- PathChoice.cpp - One of two graphs of a layer, by measurement ------===//
#include "compiler/bundle/PathChoice.h"

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

PathChoice choosePath(const PathNames &names, const DatabaseView &current,
                      const DatabaseView &alternative) {
  PathChoice c;
  std::string what = names.what;
  std::string prices =
      price(names.current, current) + ", " + price(names.alternative, alternative);
  if (!current.complete && alternative.complete) {
    // Every later choice and the prediction are priced on the path kept: a
    // database older than a new default path (its kernels unmeasured) still
    // tunes the path it measured.
    c.alternative = true;
    c.line = what + ": " + prices + ": " + names.alternative +
             " chosen, the only path priced in full (" + names.current +
             " has kernels or contractions without records; dmc tune measures both paths)";
    return c;
  }
  if (!current.complete || !alternative.complete) {
    c.line = what + ": " + prices + ": " + names.current +
             " kept, not compared (a path has kernels or contractions without records; dmc "
             "tune measures both paths)";
    return c;
  }
  c.compared = true;
  c.alternative = alternative.predictedStepUs < current.predictedStepUs;
  const DatabaseView &win = c.alternative ? alternative : current,
                     &lose = c.alternative ? current : alternative;
  char buf[200];
  std::snprintf(buf, sizeof buf, ": %s chosen, %.1f us (%.1f%%) faster, %+.1f MB moved",
                c.alternative ? names.alternative : names.current,
                lose.predictedStepUs - win.predictedStepUs,
                100.0 * (lose.predictedStepUs - win.predictedStepUs) / lose.predictedStepUs,
                double(win.bytes - lose.bytes) / 1e6);
  c.line = what + ": " + prices + buf;
  return c;
}

} // namespace dmc::bundle
