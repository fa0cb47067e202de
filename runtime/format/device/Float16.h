//===- Float16.h - bfloat16 / IEEE half conversions ---------------*- C++ -*-===//
//
// Bit-exact float <-> bf16 and float <-> binary16 conversions, round to
// nearest even, for the host runtime (safetensors, reference oracle) and for
// device code (DMRT_HD). Works without the CUDA fp16 headers so the host and
// generated kernels agree on every bit.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FLOAT16_H
#define DMRT_FLOAT16_H

#include "runtime/format/device/Types.h"

#if !defined(__CUDACC_RTC__)
#include <string.h>
#endif

namespace dmrt {

/// The IEEE-754 bits of `f`.
DMRT_HD inline uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

/// The float whose IEEE-754 bits are `u`.
DMRT_HD inline float bitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// float -> bfloat16, round to nearest even. NaN stays a (quiet) NaN with its
/// sign; values beyond the bf16 range round to infinity.
DMRT_HD inline uint16_t floatToBf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint16_t h; // the same rounding in one instruction
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
  uint32_t u = floatBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) // NaN: the canonical one, as the GPU's cvt
    return (uint16_t)0x7FFFu;
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb;
  return (uint16_t)(u >> 16);
}

/// bfloat16 -> float (exact).
DMRT_HD inline float bf16ToFloat(uint16_t h) {
  return bitsToFloat((uint32_t)h << 16);
}

/// float -> IEEE binary16, round to nearest even. Handles half subnormals,
/// overflow to infinity (anything >= 65520 in magnitude) and NaN.
DMRT_HD inline uint16_t floatToHalf(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint16_t h; // the same rounding in one instruction
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
  uint32_t u = floatBits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) { // inf or NaN
    if (a == 0x7F800000u)
      return (uint16_t)(sign | 0x7C00u);
    return (uint16_t)0x7FFFu; // NaN: the canonical one, as the GPU's cvt
  }
  int32_t e = (int32_t)(a >> 23); // biased float exponent
  uint32_t mant = a & 0x007FFFFFu;
  int32_t he = e - 127 + 15;      // biased half exponent
  if (he >= 31)
    return (uint16_t)(sign | 0x7C00u);
  if (he >= 1) { // normal half
    uint32_t h = ((uint32_t)he << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
      ++h; // a carry into the exponent is correct, up to 0x7C00 == inf
    return (uint16_t)(sign | h);
  }
  // Half subnormal (or zero): value = sig * 2^(e-150), unit = 2^-24, so
  // m = round(sig >> shift) with shift = 126 - e.
  int32_t shift = 126 - e;
  if (shift > 25) // below half of the smallest subnormal: rounds to zero
    return sign;
  uint32_t sig = mant | 0x00800000u;
  uint32_t m = sig >> shift;
  uint32_t rem = sig & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (m & 1u)))
    ++m; // may become 0x400, the smallest normal: still the right encoding
  return (uint16_t)(sign | m);
}

/// IEEE binary16 -> float (exact).
DMRT_HD inline float halfToFloat(uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f; // exact, as below
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#endif
  uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
  uint32_t e = ((uint32_t)h >> 10) & 0x1Fu;
  uint32_t mant = (uint32_t)h & 0x03FFu;
  if (e == 0) {
    // zero or subnormal: mant * 2^-24, exact in float
    float v = (float)mant * 5.9604644775390625e-8f;
    return bitsToFloat(floatBits(v) | sign);
  }
  if (e == 31)
    return bitsToFloat(sign | 0x7F800000u | (mant << 13));
  return bitsToFloat(sign | ((e + 112u) << 23) | (mant << 13));
}

} // namespace dmrt

#endif // DMRT_FLOAT16_H
