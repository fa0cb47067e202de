//===- HarnessChecks.cpp - inputs, output checks and timing statistics ----===//
//
// The CPU side of the harness: deterministic inputs, the comparison of an
// output with its reference, the statistics of timed repetitions.
//
//===----------------------------------------------------------------------===//
#include "runtime/Harness.h"

#include "runtime/ReferenceData.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace dmrt {


bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}

double inputValue(uint64_t seed, uint32_t stream, DType dtype, int64_t index,
                  int64_t intMax) {
  return referenceValue(index, seed, stream, !isFloat(dtype), intMax);
}

std::vector<uint8_t> makeInput(uint64_t seed, uint32_t stream, DType dtype,
                               int64_t numElements, int64_t intMax) {
  std::vector<double> v(static_cast<size_t>(numElements));
  for (int64_t i = 0; i < numElements; ++i)
    v[i] = inputValue(seed, stream, dtype, i, intMax);
  return fromDoubles("", dtype, {numElements}, v).bytes;
}

double defaultTolerance(DType t) {
  return t == DType::BF16 || t == DType::F16 ? 2e-2 : 1e-4;
}

Comparison compareOutput(const std::vector<double> &ref,
                         const std::vector<double> &got, double tolerance) {
  Comparison c;
  c.tolerance = tolerance;
  if (ref.size() != got.size()) {
    c.sizeMismatch = true;
    c.maxAbsErr = std::numeric_limits<double>::infinity();
    return c;
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    double r = ref[i], g = got[i], err;
    if (!std::isfinite(r)) {
      bool same = std::isnan(r) ? std::isnan(g) : g == r;
      err = same ? 0 : std::numeric_limits<double>::infinity();
    } else {
      c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(r));
      if (!std::isfinite(g)) {
        ++c.nonFinite;
        err = std::numeric_limits<double>::infinity();
      } else {
        err = std::fabs(g - r);
      }
    }
    if (err > c.maxAbsErr || c.worstIndex < 0) {
      if (err > c.maxAbsErr || (c.worstIndex < 0 && err >= c.maxAbsErr)) {
        c.maxAbsErr = std::max(c.maxAbsErr, err);
        c.worstIndex = static_cast<int64_t>(i);
        c.worstRef = r;
        c.worstGot = g;
      }
    }
  }
  c.bound = tolerance * std::max(1.0, c.maxAbsRef);
  c.pass = c.maxAbsErr <= c.bound;
  return c;
}

TimingStats summarizeTimes(std::vector<double> us) {
  TimingStats s;
  s.reps = static_cast<int>(us.size());
  if (us.empty())
    return s;
  std::sort(us.begin(), us.end());
  size_t n = us.size();
  s.medianUs = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
  s.minUs = us.front();
  s.maxUs = us.back();
  return s;
}

bool parseU64(const std::string &s, uint64_t &out) {
  if (s.empty() || s.size() > 20)
    return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9')
      return false;
    uint64_t d = static_cast<uint64_t>(ch - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

} // namespace dmrt
