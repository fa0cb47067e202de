//===- TensorConvert.cpp - DType helpers and element conversions ----------===//
//
// The safetensors dtype codes and the Tensor <-> double conversions declared in
// Safetensors.h. Elements are stored little-endian; the host is assumed to be
// little-endian (x86-64, aarch64), which is checked at compile time.
//
//===----------------------------------------------------------------------===//
#include "runtime/format/device/Float16.h"
#include "runtime/Safetensors.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace dmrt {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dmrt assumes a little-endian host"
#endif

const char *safetensorsDTypeName(DType t) {
  switch (t) {
  case DType::F64: return "F64";
  case DType::F32: return "F32";
  case DType::F16: return "F16";
  case DType::BF16: return "BF16";
  case DType::I64: return "I64";
  case DType::I32: return "I32";
  case DType::U8: return "U8";
  case DType::BOOL: return "BOOL";
  }
  return "?";
}

bool parseSafetensorsDType(const std::string &s, DType &out) {
  for (DType t : kAllDTypes)
    if (s == safetensorsDTypeName(t)) {
      out = t;
      return true;
    }
  return false;
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const Tensor *TensorFile::find(const std::string &name) const {
  for (const Tensor &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

namespace {

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void store(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof v);
}

/// double -> float rounding to odd: the float nearest `v` towards zero, with
/// its last bit set when inexact. A later round-to-nearest-even to a format
/// with at most 22 significand bits then equals a direct rounding of `v`
/// (no double-rounding error).
float roundToOddFloat(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || static_cast<double>(f) == v)
    return f;
  uint32_t bits = floatBits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v))
    --bits; // step the magnitude down by one ulp (inf -> FLT_MAX too)
  return bitsToFloat(bits | 1u);
}

/// Round to nearest (ties to even) and saturate into [lo, hi]; NaN -> 0.
template <typename T> T toInt(double v) {
  if (std::isnan(v))
    return 0;
  double r = std::nearbyint(v);
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (r <= lo)
    return std::numeric_limits<T>::min();
  if (r >= hi) // for int64, hi rounds up to 2^63, which must saturate too
    return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

} // namespace

std::vector<double> toDoubles(const Tensor &t) {
  size_t size = dtypeSize(t.dtype);
  size_t n = size ? t.bytes.size() / size : 0;
  std::vector<double> out(n);
  const uint8_t *p = t.bytes.data();
  for (size_t i = 0; i < n; ++i, p += size) {
    switch (t.dtype) {
    case DType::F64: out[i] = load<double>(p); break;
    case DType::F32: out[i] = load<float>(p); break;
    case DType::F16: out[i] = halfToFloat(load<uint16_t>(p)); break;
    case DType::BF16: out[i] = bf16ToFloat(load<uint16_t>(p)); break;
    case DType::I64: out[i] = static_cast<double>(load<int64_t>(p)); break;
    case DType::I32: out[i] = load<int32_t>(p); break;
    case DType::U8: out[i] = *p; break;
    case DType::BOOL: out[i] = *p ? 1.0 : 0.0; break;
    }
  }
  return out;
}

Tensor fromDoubles(const std::string &name, DType dtype,
                   std::vector<int64_t> shape,
                   const std::vector<double> &values) {
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = t.numElements();
  if (n < 0)
    n = 0;
  size_t size = dtypeSize(dtype);
  t.bytes.assign(static_cast<size_t>(n) * size, 0);
  uint8_t *p = t.bytes.data();
  for (int64_t i = 0; i < n; ++i, p += size) {
    double v = static_cast<size_t>(i) < values.size() ? values[i] : 0.0;
    switch (dtype) {
    case DType::F64: store<double>(p, v); break;
    case DType::F32: store<float>(p, static_cast<float>(v)); break;
    case DType::F16: store<uint16_t>(p, floatToHalf(roundToOddFloat(v))); break;
    case DType::BF16: store<uint16_t>(p, floatToBf16(roundToOddFloat(v))); break;
    case DType::I64: store<int64_t>(p, toInt<int64_t>(v)); break;
    case DType::I32: store<int32_t>(p, toInt<int32_t>(v)); break;
    case DType::U8: *p = toInt<uint8_t>(v); break;
    case DType::BOOL: *p = v != 0.0 ? 1 : 0; break;
    }
  }
  return t;
}

} // namespace dmrt
