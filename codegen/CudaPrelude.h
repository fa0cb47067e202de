//===- CudaPrelude.h - device helpers every generated kernel includes -----===//
//
// Shipped inside each kernel's source: the bundle format's device headers
// (fixed-width integers, Philox, bf16/fp16; embedded by the NVRTC driver),
// loads and stores per storage type through the runtime's bit-exact bf16/fp16
// conversions, and block reductions.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_CUDAPRELUDE_H
#define DMC_CODEGEN_CUDAPRELUDE_H

namespace dmc::codegen {

inline constexpr const char *kCudaPrelude = R"cuda(
#include "runtime/format/device/Philox.h"
#include "runtime/format/device/Float16.h"

template <typename I> __device__ __forceinline__ float dmcLoad(const float *p, I o) { return p[o]; }
template <typename I> __device__ __forceinline__ float dmcLoadBf16(const uint16_t *p, I o) {
  return dmrt::bf16ToFloat(p[o]);
}
template <typename I> __device__ __forceinline__ float dmcLoadHalf(const uint16_t *p, I o) {
  return dmrt::halfToFloat(p[o]);
}
template <typename I> __device__ __forceinline__ void dmcStore(float *p, I o, float v) { p[o] = v; }
template <typename I> __device__ __forceinline__ void dmcStoreBf16(uint16_t *p, I o, float v) {
  p[o] = dmrt::floatToBf16(v);
}
template <typename I> __device__ __forceinline__ void dmcStoreHalf(uint16_t *p, I o, float v) {
  p[o] = dmrt::floatToHalf(v);
}

/// Copies N consecutive elements with one access of N * sizeof(T) bytes (16,
/// 8 or 4; element by element otherwise): global memory to registers for
/// vector loads, registers to global memory for vector stores. Both pointers
/// are aligned to the access size.
template <int N, typename T> __device__ __forceinline__ void dmcCopyVec(T *dst, const T *src) {
  constexpr int bytes = N * sizeof(T);
  if (bytes == 16)
    *reinterpret_cast<uint4 *>(dst) = *reinterpret_cast<const uint4 *>(src);
  else if (bytes == 8)
    *reinterpret_cast<uint2 *>(dst) = *reinterpret_cast<const uint2 *>(src);
  else if (bytes == 4)
    *reinterpret_cast<unsigned *>(dst) = *reinterpret_cast<const unsigned *>(src);
  else
    for (int k = 0; k < N; ++k)
      dst[k] = src[k];
}

/// Two floats rounded to bf16 (fp16) and packed, `lo` in the low half: one
/// instruction, the same rounding as dmrt::floatToBf16 (floatToHalf).
__device__ __forceinline__ uint32_t dmcPackBf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ uint32_t dmcPackHalfx2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// Vector loads: N consecutive elements (one access) converted to fp32.
template <int N> __device__ __forceinline__ void dmcLoadVec(float (&dst)[N], const float *src) {
  dmcCopyVec<N>(dst, src);
}
/// The raw elements of one access, fetched now and converted later: a row
/// kernel with column sums fetches its next rows' inputs into these while it
/// reduces the current ones (KernelEmitter.cpp).
template <int N, typename T> struct DmcRawVec {
  alignas(16) T v[N];
};
template <int N, typename T>
__device__ __forceinline__ void dmcFetchVec(DmcRawVec<N, T> &raw, const T *src) {
  dmcCopyVec<N>(raw.v, src);
}
/// The raw elements, each converted by `Convert`.
template <typename T, float (*Convert)(T), int N>
__device__ __forceinline__ void dmcConvertVecAs(float (&dst)[N], const DmcRawVec<N, T> &raw) {
#pragma unroll
  for (int k = 0; k < N; ++k)
    dst[k] = Convert(raw.v[k]);
}
/// One access, each element converted by `Convert`.
template <typename T, float (*Convert)(T), int N>
__device__ __forceinline__ void dmcLoadVecAs(float (&dst)[N], const T *src) {
  DmcRawVec<N, T> raw;
  dmcFetchVec<N>(raw, src);
  dmcConvertVecAs<T, Convert>(dst, raw);
}
__device__ __forceinline__ float dmcIntToFloat(int v) { return (float)v; }
__device__ __forceinline__ float dmcFloatToFloat(float v) { return v; }
template <int N> __device__ __forceinline__ void dmcLoadVecI32(float (&dst)[N], const int *src) {
  dmcLoadVecAs<int, dmcIntToFloat>(dst, src);
}
template <int N>
__device__ __forceinline__ void dmcLoadVecBf16(float (&dst)[N], const uint16_t *src) {
  dmcLoadVecAs<uint16_t, dmrt::bf16ToFloat>(dst, src);
}
template <int N>
__device__ __forceinline__ void dmcLoadVecHalf(float (&dst)[N], const uint16_t *src) {
  dmcLoadVecAs<uint16_t, dmrt::halfToFloat>(dst, src);
}
/// dmcLoadVec<suffix> of elements fetched earlier by dmcFetchVec.
template <int N>
__device__ __forceinline__ void dmcConvertVec(float (&dst)[N], const DmcRawVec<N, float> &raw) {
  dmcConvertVecAs<float, dmcFloatToFloat>(dst, raw);
}
template <int N>
__device__ __forceinline__ void dmcConvertVecI32(float (&dst)[N], const DmcRawVec<N, int> &raw) {
  dmcConvertVecAs<int, dmcIntToFloat>(dst, raw);
}
template <int N>
__device__ __forceinline__ void dmcConvertVecBf16(float (&dst)[N],
                                                  const DmcRawVec<N, uint16_t> &raw) {
  dmcConvertVecAs<uint16_t, dmrt::bf16ToFloat>(dst, raw);
}
template <int N>
__device__ __forceinline__ void dmcConvertVecHalf(float (&dst)[N],
                                                  const DmcRawVec<N, uint16_t> &raw) {
  dmcConvertVecAs<uint16_t, dmrt::halfToFloat>(dst, raw);
}
/// Vector stores: N fp32 values converted and written with one access;
/// 16-bit types are rounded two at a time.
template <int N> __device__ __forceinline__ void dmcStoreVec(float *dst, const float (&src)[N]) {
  dmcCopyVec<N>(dst, src);
}
template <bool Bf16, int N>
__device__ __forceinline__ void dmcStoreVec16(uint16_t *dst, const float (&src)[N]) {
  if constexpr (N % 2 == 0) {
    alignas(16) uint32_t packed[N / 2];
#pragma unroll
    for (int k = 0; k < N / 2; ++k)
      packed[k] = Bf16 ? dmcPackBf16x2(src[2 * k], src[2 * k + 1])
                       : dmcPackHalfx2(src[2 * k], src[2 * k + 1]);
    dmcCopyVec<N / 2>(reinterpret_cast<uint32_t *>(dst), packed);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k)
      dst[k] = Bf16 ? dmrt::floatToBf16(src[k]) : dmrt::floatToHalf(src[k]);
  }
}
template <int N>
__device__ __forceinline__ void dmcStoreVecBf16(uint16_t *dst, const float (&src)[N]) {
  dmcStoreVec16<true>(dst, src);
}
template <int N>
__device__ __forceinline__ void dmcStoreVecHalf(uint16_t *dst, const float (&src)[N]) {
  dmcStoreVec16<false>(dst, src);
}

/// e^x through the hardware exp2 (2 ulp; far below the 16-bit rounding of
/// what it feeds: softmax, the GELU derivative).
__device__ __forceinline__ float dmcExp(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x * 1.44269504088896341f));
  return r;
}

/// 1 / x through the hardware reciprocal (1 ulp; x >= 1 where it is used).
__device__ __forceinline__ float dmcRcp(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

/// The standard normal's upper tail Q(|x|) = 0.5 erfc(|x| / sqrt 2) within
/// about 1e-7 (Abramowitz & Stegun 7.1.26, the 1/2 and 1/sqrt 2 folded into
/// its constants), and through `e` the exp(-x^2 / 2) it is built on, which
/// the normal density shares: two hardware approximations (reciprocal, exp2)
/// and ten arithmetic instructions, far below the bf16/fp16 rounding of what
/// they feed (GELU and its derivative).
__device__ __forceinline__ float dmcNormalTail(float x, float &e) {
  const float t = dmcRcp(fmaf(0.2316419f, fabsf(x), 1.f));
  const float q = t * fmaf(t, fmaf(t, fmaf(t, fmaf(t, 0.5307027145f, -0.7265760135f),
                                           0.7107068705f), -0.142248368f), 0.127414796f);
  float x2 = x * (x * -0.72134752044448170f); // -x^2 / 2 in base 2
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x2));
  return q * e;
}

/// The standard normal CDF Phi(x) from its tail; `e` as in dmcNormalTail.
__device__ __forceinline__ float dmcNormalCdf(float x, float &e) {
  const float h = dmcNormalTail(x, e);
  return x >= 0.f ? 1.f - h : h;
}

/// GELU with the exact (erf) form: x Phi(x).
__device__ __forceinline__ float dmcGelu(float x) {
  float e;
  return x * dmcNormalCdf(x, e);
}

/// Its derivative Phi(x) + x phi(x): one exponential serves both terms.
__device__ __forceinline__ float dmcGeluGrad(float x) {
  float e;
  const float cdf = dmcNormalCdf(x, e);
  return fmaf(x * e, 0.39894228040143267794f, cdf);
}

struct DmcSum {
  __device__ static float apply(float a, float b) { return a + b; }
};
struct DmcMax {
  __device__ static float apply(float a, float b) { return fmaxf(a, b); }
};

/// Combines `v` over the TY threads sharing a row (threadIdx.y); every thread
/// gets the result. `smem` holds TX*TY floats.
template <typename Op, int TX, int TY>
__device__ __forceinline__ float dmcBlockReduce(float v, float *smem) {
  if (TY == 1)
    return v;
  if (32 % TX == 0 && TX * TY % 32 == 0) {
    // A warp holds 32 / TX threads of each of its TX rows: shuffle across
    // them (offsets TX and up keep threadIdx.x), then across the warps.
    constexpr int kRowThreadsPerWarp = 32 / TX;
    for (int offset = 16; offset >= TX; offset >>= 1)
      v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (TY <= kRowThreadsPerWarp)
      return v;
    if (threadIdx.y % kRowThreadsPerWarp == 0)
      smem[threadIdx.y / kRowThreadsPerWarp * TX + threadIdx.x] = v;
    __syncthreads();
    float r = smem[threadIdx.x];
    for (int w = 1; w < TY / kRowThreadsPerWarp; ++w)
      r = Op::apply(r, smem[w * TX + threadIdx.x]);
    __syncthreads();
    return r;
  }
  smem[threadIdx.y * TX + threadIdx.x] = v;
  __syncthreads();
  for (int s = TY / 2; s > 0; s >>= 1) {
    if (threadIdx.y < s)
      smem[threadIdx.y * TX + threadIdx.x] =
          Op::apply(smem[threadIdx.y * TX + threadIdx.x], smem[(threadIdx.y + s) * TX + threadIdx.x]);
    __syncthreads();
  }
  float r = smem[threadIdx.x];
  __syncthreads();
  return r;
}

/// A thread's VEC consecutive partial sums written with 16-byte accesses
/// where VEC allows (`dst` aligned to VEC floats): written one float at a
/// time by the few lanes of a warp that hold them, each store took a 32-byte
/// sector of its own.
template <int VEC>
__device__ __forceinline__ void dmcStorePartials(float *dst, const float (&src)[VEC]) {
  if constexpr (VEC % 4 == 0) {
#pragma unroll
    for (int k = 0; k < VEC; k += 4)
      *reinterpret_cast<float4 *>(dst + k) = make_float4(src[k], src[k + 1], src[k + 2], src[k + 3]);
  } else if constexpr (VEC == 2) {
    *reinterpret_cast<float2 *>(dst) = make_float2(src[0], src[1]);
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      dst[k] = src[k];
  }
}
/// VEC consecutive fp32 partial sums other blocks wrote, read through the L2
/// (ld.global.cg: this SM's L1 may hold the lines from an earlier launch) in
/// 16-byte accesses where VEC allows; `src` is aligned to VEC floats.
template <int VEC>
__device__ __forceinline__ void dmcLoadPartials(float (&dst)[VEC], const float *src) {
  if constexpr (VEC % 4 == 0) {
#pragma unroll
    for (int k = 0; k < VEC; k += 4) {
      const float4 q = __ldcg(reinterpret_cast<const float4 *>(src + k));
      dst[k] = q.x;
      dst[k + 1] = q.y;
      dst[k + 2] = q.z;
      dst[k + 3] = q.w;
    }
  } else if constexpr (VEC == 2) {
    const float2 q = __ldcg(reinterpret_cast<const float2 *>(src));
    dst[0] = q.x;
    dst[1] = q.y;
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      dst[k] = __ldcg(src + k);
  }
}

/// Combines VEC values per thread over the TY threads of each column
/// threadIdx.x of a TX x TY block (TX a power of two up to 32): shuffles
/// within each warp, then one exchange through `smem` (TX * TY * VEC / 32
/// floats, at least TX * VEC). The threads with threadIdx.y == 0 get the
/// results in v; two barriers whatever VEC is.
template <typename Op, int TX, int TY, int VEC>
__device__ __forceinline__ void dmcColumnReduce(float (&v)[VEC], float *smem) {
  for (int offset = TX; offset < 32; offset <<= 1)
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      v[k] = Op::apply(v[k], __shfl_xor_sync(0xffffffffu, v[k], offset));
  constexpr int kWarps = TX * TY / 32;
  if (kWarps == 1)
    return;
  const int t = threadIdx.y * TX + threadIdx.x, lane = t % 32, warp = t / 32;
  if (lane < TX)
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      smem[(warp * TX + lane) * VEC + k] = v[k];
  __syncthreads();
  if (threadIdx.y == 0)
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      float r = smem[threadIdx.x * VEC + k];
      for (int w = 1; w < kWarps; ++w)
        r = Op::apply(r, smem[(w * TX + threadIdx.x) * VEC + k]);
      v[k] = r;
    }
  __syncthreads();
}
)cuda";

} // namespace dmc::codegen

#endif // DMC_CODEGEN_CUDAPRELUDE_H
