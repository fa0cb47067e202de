//===- Comparison.cpp - An output against its reference -------------------===//
#include "runtime/Comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace dmrt {

namespace {

/// The RMS of the finite values of `ref` (0 when there are none).
double rmsOfFinite(const std::vector<double> &ref) {
  double sumSq = 0;
  int64_t finite = 0;
  for (double r : ref)
    if (std::isfinite(r)) {
      sumSq += r * r;
      ++finite;
    }
  return finite ? std::sqrt(sumSq / double(finite)) : 0;
}

} // namespace

Comparison compareOutput(const std::vector<double> &ref,
                         const std::vector<double> &got, double rtol,
                         const std::vector<double> *spread) {
  return compareWithBound(ref, got, rtol, rtol * rmsOfFinite(ref), spread);
}

Comparison compareWithBound(const std::vector<double> &ref,
                            const std::vector<double> &got, double rtol, double atol,
                            const std::vector<double> *spread) {
  const double inf = std::numeric_limits<double>::infinity();
  Comparison c;
  c.rtol = rtol;
  c.spread = spread != nullptr;
  if (ref.size() != got.size() || (spread && spread->size() != ref.size())) {
    c.sizeMismatch = true;
    c.maxAbsErr = c.maxRatio = inf;
    return c;
  }
  bool anyFinite = false;
  for (double r : ref)
    if (std::isfinite(r)) {
      c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(r));
      anyFinite = true;
    }
  c.scale = rmsOfFinite(ref);
  c.atol = atol;
  c.zeroReference = anyFinite && c.maxAbsRef == 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double r = ref[i], g = got[i], err, bound = 0;
    if (!std::isfinite(r)) {
      bool same = std::isnan(r) ? std::isnan(g) : g == r;
      err = same ? 0 : inf;
    } else if (!std::isfinite(g)) {
      ++c.nonFinite;
      err = inf;
    } else {
      err = std::fabs(g - r);
      bound = c.atol + rtol * std::fabs(r) + (spread ? (*spread)[i] : 0.0);
    }
    // err / bound, with 0 / 0 = 0 (exact match under a zero bound).
    double ratio = err == 0 ? 0 : bound > 0 ? err / bound : inf;
    c.maxAbsErr = std::max(c.maxAbsErr, err);
    if (ratio > 1)
      ++c.failing;
    if (c.worstIndex < 0 || ratio > c.maxRatio) {
      c.maxRatio = ratio;
      c.worstIndex = static_cast<int64_t>(i);
      c.worstRef = r;
      c.worstGot = g;
      c.worstErr = err;
      c.worstBound = bound;
    }
  }
  c.compared = static_cast<int64_t>(ref.size());
  c.pass = c.failing == 0 && !c.zeroReference;
  return c;
}

std::string describeComparison(const Comparison &c) {
  char buf[320];
  if (c.sizeMismatch)
    return c.spread ? "the output, its reference and its spread differ in size"
                    : "the output and its reference differ in size";
  if (c.zeroReference)
    return "the reference is all zeros: nothing to compare against (a zeroed "
           "output would pass)";
  std::snprintf(buf, sizeof buf,
                "%lld of %lld compared elements exceed |got - ref| <= %.3g + "
                "%.3g |ref|%s (RMS of the reference %.3g); worst at element %lld: ref "
                "%.6g, got %.6g, |err| %.3g = %.3g x its bound",
                (long long)c.failing, (long long)c.compared, c.atol, c.rtol,
                c.spread ? " + spread" : "", c.scale, (long long)c.worstIndex, c.worstRef,
                c.worstGot, c.worstErr, c.maxRatio);
  return buf;
}

const char *plantedFaultName(PlantedFault f) {
  switch (f) {
  case PlantedFault::None: return "none";
  case PlantedFault::Zero: return "zero";
  case PlantedFault::Scale: return "scale";
  case PlantedFault::Shift: return "shift";
  case PlantedFault::Permute: return "permute";
  }
  return "?";
}

bool parsePlantedFault(const std::string &s, PlantedFault &out) {
  for (PlantedFault f : {PlantedFault::Zero, PlantedFault::Scale, PlantedFault::Shift,
                         PlantedFault::Permute})
    if (s == plantedFaultName(f)) {
      out = f;
      return true;
    }
  return false;
}

void plantFault(std::vector<double> &values, PlantedFault f) {
  switch (f) {
  case PlantedFault::None:
    return;
  case PlantedFault::Zero:
    std::fill(values.begin(), values.end(), 0.0);
    return;
  case PlantedFault::Scale:
    for (double &v : values)
      v *= 1.05;
    return;
  case PlantedFault::Shift: {
    double shift = 0.03 * rmsOfFinite(values);
    for (double &v : values)
      v += shift;
    return;
  }
  case PlantedFault::Permute:
    for (size_t g = 0; g + 8 <= values.size(); g += 8)
      std::reverse(values.begin() + g, values.begin() + g + 8);
    return;
  }
}

} // namespace dmrt
