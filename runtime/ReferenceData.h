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
// Large expected outputs are stored sampled: every `stride`-th element.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_REFERENCEDATA_H
#define DMRT_REFERENCEDATA_H

#include "runtime/format/device/Philox.h"

#include <cstdint>
#include <vector>

namespace dmrt {

/// The stream of input `k` of kernel `n` (contractions: 1000 + n).
inline uint32_t referenceStream(uint32_t unit, uint32_t input) { return unit * 64 + input; }

/// Element `e` of stream `stream` (before rounding to storage).
inline double referenceValue(int64_t e, uint64_t seed, uint32_t stream, bool integer,
                             int64_t maxInt) {
  uint32_t key[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  uint32_t ctr[4] = {uint32_t(e), uint32_t(uint64_t(e) >> 32), stream, 0x72656621u};
  uint32_t out[4];
  philox4x32_10(ctr, key, out);
  return integer ? double(1 + out[0] % uint64_t(maxInt < 1 ? 1 : maxInt))
                 : double(out[0] >> 8) / 8388608.0 - 1.0;
}

/// `count` values of a stream (before rounding to storage).
inline std::vector<double> referenceValues(int64_t count, uint64_t seed, uint32_t stream,
                                           bool integer, int64_t maxInt) {
  std::vector<double> values(count);
  for (int64_t e = 0; e < count; ++e)
    values[e] = referenceValue(e, seed, stream, integer, maxInt);
  return values;
}

/// The sampling stride that keeps at most `maxStored` elements of `count`.
inline int64_t referenceStride(int64_t count, int64_t maxStored = 1 << 18) {
  return count <= maxStored ? 1 : (count + maxStored - 1) / maxStored;
}

} // namespace dmrt

#endif // DMRT_REFERENCEDATA_H
