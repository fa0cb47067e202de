//===- HarnessChecks.cpp - inputs, output checks and timing statistics ----===//
//
// The CPU side of the harness: deterministic inputs, reference sampling, the
// statistics of timed repetitions (the comparison is runtime/Comparison.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/Harness.h"

#include "runtime/ReferenceData.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace dmrt {


double inputValue(uint64_t seed, uint32_t stream, DType dtype, int64_t index,
                  int64_t intMax) {
  return referenceValue(index, seed, stream, !isFloatDType(dtype), intMax);
}

std::vector<uint8_t> makeInput(uint64_t seed, uint32_t stream, DType dtype,
                               int64_t numElements, int64_t intMax) {
  std::vector<double> v(static_cast<size_t>(numElements));
  for (int64_t i = 0; i < numElements; ++i)
    v[i] = inputValue(seed, stream, dtype, i, intMax);
  return fromDoubles("", dtype, {numElements}, v).bytes;
}

double defaultTolerance(DType t) {
  switch (t) {
  case DType::BF16:
    return 1.0 / 128; // 2^-7: 4 x bf16's rounding (2^-9 of |x|)
  case DType::F16:
    return 1.0 / 512; // 2^-9: 4 x fp16's rounding (2^-11 of |x|)
  case DType::F32:
  case DType::F64:
    return 1e-4;
  default:
    return 0; // integers: exact
  }
}

bool referenceSampling(const TensorFile &ref, const std::string &path,
                       const std::string &name, int64_t numElements,
                       int64_t stored, int64_t &stride, std::string &error) {
  stride = 1;
  auto field = [&](const std::string &key, int64_t &out) {
    auto it = ref.metadata.find(key);
    if (it == ref.metadata.end())
      return true;
    uint64_t v = 0;
    if (!parseU64(it->second, v) || v < 1 || v > uint64_t(INT64_MAX)) {
      error = path + ": metadata " + key + " \"" + it->second +
              "\" is not a positive integer";
      return false;
    }
    out = static_cast<int64_t>(v);
    return true;
  };
  int64_t count = numElements;
  if (!field("stride." + name, stride) || !field("count." + name, count))
    return false;
  if (count != numElements) {
    error = path + ": metadata count." + name + " is " + std::to_string(count) +
            " but the bundle's tensor has " + std::to_string(numElements) +
            " elements (a reference of another shape)";
    return false;
  }
  int64_t want = referenceSampleCount(numElements, stride);
  if (stored != want) {
    error = path + ": " + name + " holds " + std::to_string(stored) +
            " elements; every " + std::to_string(stride) + "-th of " +
            std::to_string(numElements) + " (stride." + name + ") is " +
            std::to_string(want);
    return false;
  }
  return true;
}

ReferenceLookup lookupReference(char prefix, int64_t id, const std::string &path,
                                bool exists, const TensorFile *file) {
  ReferenceLookup r;
  std::string step = std::string(1, prefix) + std::to_string(id);
  if (!exists || !file) {
    r.message = "--reference: " + path +
                (exists ? " was not read" : " does not exist") +
                " (dmc compile --reference writes one for every kernel and "
                "contraction, a record for those it skips; recompile the bundle)";
    return r;
  }
  auto it = file->metadata.find("skipped");
  if (it == file->metadata.end()) {
    r.kind = ReferenceLookup::Check;
    return r;
  }
  if (prefix != 'c') {
    r.message = "--reference: " + path + " says skipped (\"" + it->second +
                "\"), but every kernel (" + step + ") must have a reference";
  } else if (!file->tensors.empty()) {
    r.message = "--reference: " + path + " says skipped (\"" + it->second +
                "\") but holds " + std::to_string(file->tensors.size()) +
                " tensor(s)";
  } else {
    r.kind = ReferenceLookup::Skipped;
    r.message = it->second.empty() ? std::string("skipped by the compiler")
                                   : it->second;
  }
  return r;
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
