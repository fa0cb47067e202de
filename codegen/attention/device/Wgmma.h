//===- Wgmma.h - Warpgroup tensor-core MMA (sm_90a) for the forward ----*- CUDA -*-===//
//
// The Hopper path of the attention forward (Cfg::kWgmma): the four warps of a
// block form one warpgroup, and S = Q K^T and O += P V each run as
// wgmma.mma_async m64n64k16 (f32 accumulators) instead of a warp's
// ldmatrix + mma.sync per 16 x 8 atom:
//
//   wgmmaSS   D (64x64) += A (64x16, shared, K-major) * B (16x64, shared, K-major)
//   wgmmaRS   D (64x64) += A (64x16, registers)       * B (16x64, shared, N-major)
//
// Operands in shared memory are read through matrix descriptors. The tiles
// of Tile.h with D = 64 are exactly the 128-byte swizzle layout: rows of 128
// bytes, 16-byte chunk c of row r at chunk c ^ (r % 8), so a tile based at a
// 1024-byte boundary is a column of 8-row swizzle atoms 1024 bytes apart
// (the stride byte offset). A K-major operand's k-step kk starts 32 kk
// bytes into the atom (the hardware applies the XOR to the address it
// forms); V read N-major (keys = K, head dim = N) advances 16 rows = 2048
// bytes a k-step, its head dim one 64-element atom wide (so the leading
// byte offset, the stride between atoms along N, is never used).
//
// Fragments: warp w of the group owns rows 16w .. 16w + 15 of D, in the
// layout of mma.m16n8k16's C repeated over the 8 atoms of 8 columns (d[a][e]
// = C element e of atom a), and of A (registers) as mma.m16n8k16's A: so
// the softmax, masks and dropout of Forward.h run unchanged on them.
//
// wgmma is asynchronous: wgmmaFence orders earlier register writes of the
// accumulators and A before the next wgmma, wgmmaCommit closes a group and
// wgmmaWait<N> waits until at most N groups are in flight. Shared memory
// written by cp.async must be made visible to the async proxy
// (fenceProxyAsync) before the barrier that publishes it.
//
// With DMC_ATTENTION_EMULATION defined (host tests), the emulator defines the
// instructions itself (tests/unit/codegen/attention/WarpEmulator.h).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_WGMMA_H
#define DMC_ATTENTION_DEVICE_WGMMA_H

#include "codegen/attention/device/Tile.h"

namespace dmcattn {

/// Bytes between the 8-row swizzle atoms of a tile of 128-byte rows.
constexpr uint32_t kSwizzleAtomBytes = 1024;

/// A shared-memory matrix descriptor with the 128-byte swizzle: start
/// address and leading byte offset (each >> 4 in 14 bits), the stride byte
/// offset of the atoms (kSwizzleAtomBytes), mode 1 in bits 62-63; `address`
/// is a shared-window address.
DMC_ATTN_DEV uint64_t swizzle128Descriptor(uint32_t address, uint32_t leadingBytes) {
  return (uint64_t)((address & 0x3FFFFu) >> 4) |
         ((uint64_t)((leadingBytes & 0x3FFFFu) >> 4) << 16) |
         ((uint64_t)(kSwizzleAtomBytes >> 4) << 32) | (1ull << 62);
}

} // namespace dmcattn

#if !defined(DMC_ATTENTION_EMULATION)

namespace dmcattn {

DMC_ATTN_DEV void wgmmaFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
DMC_ATTN_DEV void wgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> DMC_ATTN_DEV void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
/// Orders this thread's generic-proxy shared writes (cp.async landed,
/// st.shared) before later async-proxy reads (wgmma operands).
DMC_ATTN_DEV void fenceProxyAsync() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

/// Keeps the compiler from moving reads or writes of the accumulators across
/// this point (they change asynchronously between a wgmma and its wait).
template <int N> DMC_ATTN_DEV void pinAccumulators(float (&d)[N][4]) {
  DMC_ATTN_UNROLL
  for (int a = 0; a < N; ++a)
    asm volatile("" : "+f"(d[a][0]), "+f"(d[a][1]), "+f"(d[a][2]), "+f"(d[a][3])::"memory");
}

// The 32 accumulator operands of an m64n64 f32 wgmma, %0 .. %31.
#define DMC_WGMMA_D                                                                        \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
  "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define DMC_WGMMA_D_OPERANDS(d)                                                            \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]),           \
      "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),           \
      "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]),           \
      "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]),           \
      "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])

// The instruction of `shape` (e.g. "m64n64k16") on element type T ("bf16" or
// "f16"), f32 accumulators; each wrapper below spells its statement once, as
// a macro of T, and picks T by Bf16.
#define DMC_WGMMA(shape, T) "wgmma.mma_async.sync.aligned." shape ".f32." T "." T " "

/// d (64x64 over the warpgroup) = A B + (accumulate ? d : 0); A and B
/// K-major in shared memory (descriptors).
template <bool Bf16>
DMC_ATTN_DEV void wgmmaSS(float (&d)[8][4], uint64_t descA, uint64_t descB, bool accumulate) {
  const int scaleD = accumulate ? 1 : 0;
#define DMC_WGMMA_SS64(T)                                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" DMC_WGMMA("m64n64k16", T)      \
                   DMC_WGMMA_D ", %32, %33, p, 1, 1, 0, 0;\n}\n"                              \
               : DMC_WGMMA_D_OPERANDS(d)                                                    \
               : "l"(descA), "l"(descB), "r"(scaleD))
  if (Bf16)
    DMC_WGMMA_SS64("bf16");
  else
    DMC_WGMMA_SS64("f16");
#undef DMC_WGMMA_SS64
}

/// d (64x64) += A B; A in registers (each warp its 16 rows, mma.m16n8k16's A
/// layout), B N-major in shared memory (the descriptor's transpose flag).
template <bool Bf16>
DMC_ATTN_DEV void wgmmaRS(float (&d)[8][4], const uint32_t (&a)[4], uint64_t descB) {
#define DMC_WGMMA_RS64(T)                                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" DMC_WGMMA("m64n64k16", T)      \
                   DMC_WGMMA_D ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                \
               : DMC_WGMMA_D_OPERANDS(d)                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(1))
  if (Bf16)
    DMC_WGMMA_RS64("bf16");
  else
    DMC_WGMMA_RS64("f16");
#undef DMC_WGMMA_RS64
}

// The 16 accumulator operands of an m64n32 f32 wgmma, %0 .. %15.
#define DMC_WGMMA_D32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define DMC_WGMMA_D32_OPERANDS(d)                                                          \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]),           \
      "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])

/// d (64x32 over the warpgroup) = A B + (accumulate ? d : 0), as wgmmaSS.
template <bool Bf16>
DMC_ATTN_DEV void wgmmaSS32(float (&d)[4][4], uint64_t descA, uint64_t descB, bool accumulate) {
  const int scaleD = accumulate ? 1 : 0;
#define DMC_WGMMA_SS32(T)                                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" DMC_WGMMA("m64n32k16", T)      \
                   DMC_WGMMA_D32 ", %16, %17, p, 1, 1, 0, 0;\n}\n"                            \
               : DMC_WGMMA_D32_OPERANDS(d)                                                  \
               : "l"(descA), "l"(descB), "r"(scaleD))
  if (Bf16)
    DMC_WGMMA_SS32("bf16");
  else
    DMC_WGMMA_SS32("f16");
#undef DMC_WGMMA_SS32
}

#undef DMC_WGMMA
#undef DMC_WGMMA_D
#undef DMC_WGMMA_D_OPERANDS
#undef DMC_WGMMA_D32
#undef DMC_WGMMA_D32_OPERANDS

} // namespace dmcattn

#endif // !DMC_ATTENTION_EMULATION

namespace dmcattn {

/// The first swizzle-atom boundary in the dynamic shared memory `smem` (the
/// wgmma kernels ask for an atom of slack): the tiles start there.
DMC_ATTN_DEV unsigned char *atomAligned(unsigned char *smem) {
  const uint32_t a = sharedAddress(smem);
  return smem + (((a + kSwizzleAtomBytes - 1) & ~(kSwizzleAtomBytes - 1)) - a);
}

/// acc (16 x 8 NA a warp, 64 x 8 NA the group) = A B^T over a head dim of
/// 64: A the 64 rows of the tile at shared address `at`, B the 8 NA rows at
/// `bt`, both 1024-byte aligned tiles of 128-byte rows (S = Q K^T and its
/// relatives; Tile.h's mmaRowsRows). Issued after a fence; not committed.
template <bool Bf16, int NA>
DMC_ATTN_DEV void wgmmaRowsRows(float (&acc)[NA][4], uint32_t at, uint32_t bt) {
  static_assert(NA % 8 == 0 || NA == 4, "wgmma: B tiles of 32 rows or multiples of 64");
  pinAccumulators(acc);
  wgmmaFence();
  if constexpr (NA == 4) { // one m64n32 product
    DMC_ATTN_UNROLL
    for (int kk = 0; kk < 4; ++kk)
      wgmmaSS32<Bf16>(acc, swizzle128Descriptor(at + 32 * kk, 16),
                      swizzle128Descriptor(bt + 32 * kk, 16), kk > 0);
  } else {
    DMC_ATTN_UNROLL
    for (int n = 0; n < NA / 8; ++n) {
      float(&chunk)[8][4] = *reinterpret_cast<float(*)[8][4]>(&acc[8 * n][0]);
      DMC_ATTN_UNROLL
      for (int kk = 0; kk < 4; ++kk)
        wgmmaSS<Bf16>(chunk, swizzle128Descriptor(at + 32 * kk, 16),
                      swizzle128Descriptor(bt + 64 * 128 * n + 32 * kk, 16),
                      kk > 0);
    }
  }
}

/// The A operands of a 16 x 16 KK register block (accumulator layout) for
/// wgmmaRegsCols: k-chunk kk from atoms 2kk and 2kk + 1 (Tile.h accumulatorAsA).
template <bool Bf16, int NP>
DMC_ATTN_DEV void packOperands(uint32_t (&a)[NP / 2][4], const float (&p)[NP][4]) {
  DMC_ATTN_UNROLL
  for (int kk = 0; kk < NP / 2; ++kk)
    accumulatorAsA<Bf16>(a[kk], p, kk);
}

/// acc (16 x 64 a warp) += A B: A the warp's 16 x 16 KK block in registers
/// (packOperands), B the tile's 16 KK rows of 64 at shared address `bt` read
/// N-major (O += P V and relatives; Tile.h's mmaRegsCols). Issued after a
/// fence; not committed.
template <bool Bf16, int KK>
DMC_ATTN_DEV void wgmmaRegsCols(float (&acc)[8][4], const uint32_t (&a)[KK][4], uint32_t bt) {
  pinAccumulators(acc);
  wgmmaFence(); // the packed A and earlier writes of acc, before the reads
  DMC_ATTN_UNROLL
  for (int kk = 0; kk < KK; ++kk)
    wgmmaRS<Bf16>(acc, a[kk],
                  swizzle128Descriptor(bt + 16 * 128 * kk, 64 * 128));
}

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_WGMMA_H
