//===- ReferenceData.h - seeded tensor values the CPU and the GPU agree on ===//
//
// The one generator of test data: `dmc eval` draws missing layer arguments
// with it, and reference checks of single kernels draw the same inputs on the
// CPU (where the interpreter computes the expected outputs) and on the GPU,
// rather than shipping gigabytes:
//   element e of input stream S: w = Philox4x32-10(counter {lo32(e), hi32(e),
//   S, 0x72656621 "ref!"}, key {lo32(seed), hi32(seed)}) word 0;
//   floats: (w >> 8) / 2^23 - 1, in [-1, 1); integers: 1 + w % maxInt;
//   then rounded to the tensor's storage type.
// Large expected outputs are stored sampled: every `stride`-th element, the
// stride odd (referenceStride).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_REFERENCEDATA_H
#define DMRT_REFERENCEDATA_H

#include "runtime/format/device/Philox.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

/// The stream of argument `name` (what dmc eval and dmc-run draw it from):
/// FNV-1a 32 of its name.
inline uint32_t argumentStream(const std::string &name) {
  uint32_t h = 2166136261u;
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

/// The stream of input `k` of kernel `n` (contractions: 1000 + n).
inline uint32_t referenceStream(uint32_t unit, uint32_t input) { return unit * 64 + input; }

/// Element `e` of stream `stream` (before rounding to storage): a float in
/// [-1, 1), an integer in [1, maxInt], or with maxInt < 0 any 32-bit word as
/// an int32 (bit fields such as a fused attention's saved keep bits, whose
/// every bit a check must exercise).
inline double referenceValue(int64_t e, uint64_t seed, uint32_t stream, bool integer,
                             int64_t maxInt) {
  uint32_t key[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  uint32_t ctr[4] = {uint32_t(e), uint32_t(uint64_t(e) >> 32), stream, 0x72656621u};
  uint32_t out[4];
  philox4x32_10(ctr, key, out);
  if (integer && maxInt < 0) // any 32-bit word (bit fields: saved keep bits)
    return double(int32_t(out[0]));
  return integer ? double(1 + out[0] % uint64_t(maxInt < 1 ? 1 : maxInt))
                 : double(out[0] >> 8) / 8388608.0 - 1.0;
}

/// Elements [begin, end) of a stream into values[begin, end) (ranges can be
/// filled in parallel).
inline void referenceRange(double *values, int64_t begin, int64_t end, uint64_t seed,
                           uint32_t stream, bool integer, int64_t maxInt) {
  for (int64_t e = begin; e < end; ++e)
    values[e] = referenceValue(e, seed, stream, integer, maxInt);
}

/// `count` values of a stream (before rounding to storage).
inline std::vector<double> referenceValues(int64_t count, uint64_t seed, uint32_t stream,
                                           bool integer, int64_t maxInt) {
  std::vector<double> values(count);
  referenceRange(values.data(), 0, count, seed, stream, integer, maxInt);
  return values;
}

/// The sampling stride of an output of `count` elements: 1 (every element)
/// when count <= maxStored, else the smallest odd number that keeps at most
/// maxStored elements. Odd, so the sampled elements 0, s, 2s, ... run through
/// every residue modulo any power of two: every lane of a vector of 2, 4 or
/// 8 (an unwritten lane keeps its NaN fill and fails), every word of a
/// Philox draw (dropout uses word e % 4), every column of a power-of-two row.
/// (An even stride would sample only lane 0.)
inline int64_t referenceStride(int64_t count, int64_t maxStored = 1 << 18) {
  if (maxStored < 1)
    maxStored = 1;
  if (count <= maxStored)
    return 1;
  int64_t s = (count + maxStored - 1) / maxStored;
  return s % 2 ? s : s + 1;
}

/// Elements stored at stride `stride` (> 0): ceil(count / stride).
inline int64_t referenceSampleCount(int64_t count, int64_t stride) {
  return count <= 0 ? 0 : (count + stride - 1) / stride;
}

/// values[0], values[stride], ...: what the reference stores of an output,
/// and what the harness compares with it.
template <typename T>
std::vector<T> referenceSample(const std::vector<T> &values, int64_t stride) {
  if (stride <= 1)
    return values;
  std::vector<T> out;
  out.reserve(size_t(referenceSampleCount(int64_t(values.size()), stride)));
  for (size_t e = 0; e < values.size(); e += size_t(stride))
    out.push_back(values[e]);
  return out;
}

} // namespace dmrt

#endif // DMRT_REFERENCEDATA_H
