//===- EpilogueHost.h - Host data of the GPU epilogue test ---------*- C++ -*-===//
//
// Conversions between float host data and the device's bf16/fp32 bytes,
// device buffer copies, and the per-case comparison state.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_EPILOGUEHOST_H
#define DMC_TESTS_GPU_EPILOGUEHOST_H

#include "EpilogueTester.h"

#include "runtime/format/device/Float16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace dmctest {

inline size_t elemSize(DType t) { return t == DType::F32 ? 4 : 2; }

/// Rounds host values to what `t` can hold (bf16: round to nearest even), so
/// the emulator sees exactly the device's inputs.
inline void quantize(std::vector<float> &v, DType t) {
  if (t == DType::BF16)
    for (float &x : v)
      x = dmrt::bf16ToFloat(dmrt::floatToBf16(x));
}

inline std::vector<uint8_t> toDevice(const std::vector<float> &v, DType t) {
  std::vector<uint8_t> out(v.size() * elemSize(t));
  if (t == DType::F32) {
    if (!v.empty())
      std::memcpy(out.data(), v.data(), out.size());
  } else {
    for (size_t i = 0; i < v.size(); ++i) {
      uint16_t h = dmrt::floatToBf16(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

inline float fromDevice(const std::vector<uint8_t> &bytes, size_t i, DType t) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * i, 2);
  return dmrt::bf16ToFloat(h);
}

inline void upload(DevBuf &b, const std::vector<uint8_t> &host) {
  if (!host.empty())
    CUDA_OK(cudaMemcpy(b.p, host.data(), host.size(), cudaMemcpyHostToDevice));
}

inline std::vector<uint8_t> download(const DevBuf &b, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  if (bytes)
    CUDA_OK(cudaMemcpy(host.data(), b.p, bytes, cudaMemcpyDeviceToHost));
  return host;
}

/// The comparison state of one case (one algorithm).
struct Checker {
  std::string what;
  int errors = 0;
  double worst = 0; // max |err| / tol
  std::vector<std::string> lines;

  void fail(const std::string &s) {
    if (++errors <= 8)
      lines.push_back(s);
  }
  bool near(const char *array, int64_t idx, double got, double ref, double tol) {
    double err = std::fabs(got - ref);
    if (!(err <= tol)) { // NaN fails too
      std::ostringstream os;
      os << array << "[" << idx << "]: got " << got << ", want " << ref
         << " (|err| " << err << " > tol " << tol << ")";
      fail(os.str());
      return false;
    }
    if (tol > 0)
      worst = std::max(worst, err / tol);
    return true;
  }
};

inline double maxAbs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v)
    m = std::max(m, (double)std::fabs(x));
  return m;
}

} // namespace dmctest

#endif // DMC_TESTS_GPU_EPILOGUEHOST_H
