//===- Mma.h - Warp-level tensor-core and async-copy primitives -----*- CUDA -*-===//
//
// The few instructions the attention kernels are built from, each behind a
// small inline function (PTX through inline asm, sm_80+):
//
//   mma16816   mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: D += A B
//   ldsm4      ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16
//   cpAsync16  cp.async.cg.shared.global, 16 bytes, zero-filled when invalid
//   pack2      two floats -> bf16x2 / f16x2, round to nearest even
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with
// g = lane / 4 and t = lane % 4:
//   A 16x16: reg0 (g, 2t..2t+1), reg1 (g+8, 2t..), reg2 (g, 2t+8..), reg3 (g+8, 2t+8..)
//   B 16x8:  reg0 (k 2t..2t+1, n g), reg1 (k 2t+8..2t+9, n g)
//   C 16x8:  c0, c1 (g, 2t..2t+1), c2, c3 (g+8, 2t..2t+1)
// The low 16 bits of a register hold the element with the lower index.
//
// With DMC_ATTENTION_EMULATION defined (host tests), the emulator defines
// these functions itself before including the kernels (a fiber per thread).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_MMA_H
#define DMC_ATTENTION_DEVICE_MMA_H

#include "runtime/format/device/Float16.h"
#include "runtime/format/device/Types.h"

#if defined(DMC_ATTENTION_EMULATION)
#define DMC_ATTN_UNROLL
#else
#define DMC_ATTN_DEV __device__ __forceinline__
#define DMC_ATTN_UNROLL _Pragma("unroll")

namespace dmcattn {

DMC_ATTN_DEV int threadIndex() { return (int)threadIdx.x; }
DMC_ATTN_DEV int laneId() { return (int)(threadIdx.x & 31u); }
DMC_ATTN_DEV int blockIndexX() { return (int)blockIdx.x; }
DMC_ATTN_DEV int blockIndexY() { return (int)blockIdx.y; }
DMC_ATTN_DEV int blockIndexZ() { return (int)blockIdx.z; }
DMC_ATTN_DEV int gridSizeX() { return (int)gridDim.x; }
DMC_ATTN_DEV int gridSizeY() { return (int)gridDim.y; }
DMC_ATTN_DEV int gridSizeZ() { return (int)gridDim.z; }
DMC_ATTN_DEV void syncThreads() { __syncthreads(); }

DMC_ATTN_DEV float shflXor(float v, int laneMask) {
  return __shfl_xor_sync(0xffffffffu, v, laneMask);
}
DMC_ATTN_DEV uint32_t shflXor(uint32_t v, int laneMask) {
  return __shfl_xor_sync(0xffffffffu, v, laneMask);
}

/// 2^x, approximate (ex2.approx.ftz: ~2 ulp); 2^-inf = 0.
DMC_ATTN_DEV float fastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// The 32-bit shared-window address of a generic pointer into shared memory
/// (computed once per tile; fragment and copy addresses are 32-bit offsets).
DMC_ATTN_DEV uint32_t sharedAddress(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

/// Four 8x8 b16 matrices from shared memory: lane l gives the shared
/// address of row l % 8 of matrix l / 8 (16 bytes, 16-byte aligned); r[i] is
/// matrix i's fragment (row g, cols 2t..2t+1), or with Trans its
/// transpose's (rows 2t, 2t+1 of col g).
template <bool Trans> DMC_ATTN_DEV void ldsm4(uint32_t (&r)[4], uint32_t a) {
  if (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

/// d (16x8 f32) += a (16x16) * b (16x8, registers b0 b1).
template <bool Bf16>
DMC_ATTN_DEV void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if (Bf16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// 16 bytes global -> shared, asynchronously; when !valid the 16 bytes are
/// zero-filled and nothing is read (`src` must still be a mapped address).
DMC_ATTN_DEV void cpAsync16(uint32_t dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
DMC_ATTN_DEV void cpAsyncCommit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/// Waits until at most N committed groups of this thread are in flight.
template <int N> DMC_ATTN_DEV void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/// (lo, hi) rounded to bf16 (f16) and packed, lo in the low half.
template <bool Bf16> DMC_ATTN_DEV uint32_t pack2(float lo, float hi) {
  uint32_t r;
  if (Bf16)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

} // namespace dmcattn

#endif // DMC_ATTENTION_EMULATION

namespace dmcattn {

/// Two consecutive floats, 8-byte aligned: read as one access (from shared
/// memory one 64-bit load instead of two).
struct alignas(8) FloatPair {
  float x, y;
};
DMC_ATTN_DEV FloatPair loadPair(const float *p) {
  return *reinterpret_cast<const FloatPair *>(p);
}

/// Element value of a stored bf16/f16.
template <bool Bf16> DMC_ATTN_DEV float toFloat(uint16_t h) {
  return Bf16 ? dmrt::bf16ToFloat(h) : dmrt::halfToFloat(h);
}

/// The two elements of a packed pair as floats.
template <bool Bf16> DMC_ATTN_DEV void unpack2(uint32_t v, float &lo, float &hi) {
  lo = toFloat<Bf16>((uint16_t)(v & 0xFFFFu));
  hi = toFloat<Bf16>((uint16_t)(v >> 16));
}

/// The tile (of queries or keys) and head (h, b) a block of the grid (tiles,
/// H, B) works on. Without a causal mask every tile is the same work:
/// blockIdx as it is, tiles counted down from the last when HighHeavy. Under
/// a causal mask tile i's work grows with i (HighHeavy: query tiles see keys
/// up to their last query) or shrinks (key tiles are seen by queries from
/// their first key), by up to the tile count, and the GPU dispatches blocks
/// in linear order: the heaviest tile of every head runs first, then the
/// next heaviest of every head, so the last blocks dispatched are the
/// lightest (longest processing time first). Dispatched head by head, the
/// last head's heaviest tile started last and the kernel waited for it.
template <bool Causal, bool HighHeavy>
DMC_ATTN_DEV void blockTile(int &tile, int &h, int &b) {
  if (!Causal) {
    tile = HighHeavy ? gridSizeX() - 1 - blockIndexX() : blockIndexX();
    h = blockIndexY();
    b = blockIndexZ();
    return;
  }
  const int heads = gridSizeY() * gridSizeZ();
  const int linear = blockIndexX() + gridSizeX() * (blockIndexY() + gridSizeY() * blockIndexZ());
  const int rank = linear / heads, head = linear - rank * heads;
  h = head % gridSizeY();
  b = head / gridSizeY();
  tile = HighHeavy ? gridSizeX() - 1 - rank : rank;
}

/// Sum and max over the 4 lanes of a quad (lanes sharing g = lane / 4).
DMC_ATTN_DEV float quadSum(float v) {
  v += shflXor(v, 1);
  return v + shflXor(v, 2);
}
DMC_ATTN_DEV float quadMax(float v) {
  v = fmaxf(v, shflXor(v, 1));
  return fmaxf(v, shflXor(v, 2));
}
DMC_ATTN_DEV float warpSum(float v) {
  DMC_ATTN_UNROLL
  for (int m = 16; m > 0; m >>= 1)
    v += shflXor(v, m);
  return v;
}

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_MMA_H
