//===- WarpEmulator.h - The attention kernels' device code on the host -*- C++ -*-===//
//
// Runs codegen/attention/device/*.h on the CPU: every CUDA thread of a block
// is a fiber (ucontext), scheduled round-robin; __syncthreads and the warp
// collectives (shuffle, ldmatrix, mma.sync) are barriers on which the lanes
// exchange their operands, each computed from the PTX ISA's fragment
// layouts. cp.async copies land only at cp.async.wait_group, so a read
// before the wait sees stale shared memory (filled with NaN at launch).
// Shared-memory accesses out of the launch's dynamic size, misaligned
// ldmatrix / cp.async addresses and cp.async reads outside the registered
// global buffers abort with a message.
//
// Include this instead of the device headers' CUDA primitives: it defines
// DMC_ATTENTION_EMULATION and the functions device/Mma.h would.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_ATTENTION_WARPEMULATOR_H
#define DMC_TESTS_ATTENTION_WARPEMULATOR_H

#define DMC_ATTENTION_EMULATION 1
#define DMC_ATTN_DEV inline

#include "runtime/format/device/Float16.h"
#include "runtime/format/device/Types.h"

#include <cmath>
#include <cstddef>
#include <functional>
#include <math.h>

namespace dmcemu {

/// Runs `body(smem)` on every thread of every block of a grid, block after
/// block; `threads` per block, `sharedBytes` of dynamic shared memory.
void launch(const unsigned grid[3], unsigned threads, unsigned sharedBytes,
            const std::function<void(unsigned char *smem)> &body);

/// Global memory cp.async may read: [begin, begin + bytes). Cleared by clearBuffers.
void registerBuffer(const void *begin, size_t bytes);
void clearBuffers();

/// Shared memory seen as a 32-bit window (as cvta.to.shared): byte offset
/// from the block's shared memory plus a nonzero base.
uint32_t sharedAddress(const void *p);
void *sharedPointer(uint32_t address);

int threadIndex();
int blockIndex(int axis);
int gridSize(int axis);
void syncThreads();
uint32_t shuffleXor(uint32_t v, int laneMask);
void ldmatrix(uint32_t (&r)[4], const void *rowAddress, bool trans);
void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, bool bf16);
/// One warp's 16 rows of a wgmma m64nNk16 (N = 8 atoms, 64 or 32): d (16 x N
/// of this warp, atoms x 4 floats) += A B,
/// A from descriptor `descA` (K-major; rows 16 * warp-in-group ..) or, when
/// `a` is given, this warp's registers; B from `descB` (K-major, or N-major
/// when transB). Descriptors are decoded as the 128-byte swizzle layout.
void wgmma(float *d, int atoms, uint64_t descA, const uint32_t *a, uint64_t descB, bool transB,
           bool accumulate, bool bf16);
/// Checks the warpgroup protocol: a wgmma without a wgmma.fence since the
/// thread's last wait aborts, as does a thread ending with groups in flight.
void wgmmaFence();
void wgmmaCommit();
void wgmmaWait(int groups);
void cpAsync(void *dst, const void *src, bool valid);
void cpAsyncCommit();
void cpAsyncWait(int groups);

} // namespace dmcemu

namespace dmcattn {

inline int threadIndex() { return dmcemu::threadIndex(); }
inline int laneId() { return dmcemu::threadIndex() & 31; }
inline int blockIndexX() { return dmcemu::blockIndex(0); }
inline int blockIndexY() { return dmcemu::blockIndex(1); }
inline int blockIndexZ() { return dmcemu::blockIndex(2); }
inline int gridSizeX() { return dmcemu::gridSize(0); }
inline int gridSizeY() { return dmcemu::gridSize(1); }
inline int gridSizeZ() { return dmcemu::gridSize(2); }
inline void syncThreads() { dmcemu::syncThreads(); }
inline uint32_t shflXor(uint32_t v, int m) { return dmcemu::shuffleXor(v, m); }
inline float shflXor(float v, int m) {
  return dmrt::bitsToFloat(dmcemu::shuffleXor(dmrt::floatBits(v), m));
}
inline float fastExp2(float x) { return std::exp2(x); }
inline void mulWide(uint32_t a, uint32_t b, uint32_t &lo, uint32_t &hi) {
  const uint64_t p = (uint64_t)a * b;
  lo = (uint32_t)p;
  hi = (uint32_t)(p >> 32);
}
inline uint32_t sharedAddress(const void *p) { return dmcemu::sharedAddress(p); }
template <bool Trans> inline void ldsm4(uint32_t (&r)[4], uint32_t a) {
  dmcemu::ldmatrix(r, dmcemu::sharedPointer(a), Trans);
}
template <bool Bf16>
inline void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  dmcemu::mma(d, a, b0, b1, Bf16);
}
inline void cpAsync16(uint32_t dst, const void *src, bool valid) {
  dmcemu::cpAsync(dmcemu::sharedPointer(dst), src, valid);
}
inline void cpAsyncCommit() { dmcemu::cpAsyncCommit(); }
template <int N> inline void cpAsyncWait() { dmcemu::cpAsyncWait(N); }
inline void wgmmaFence() { dmcemu::wgmmaFence(); }
inline void wgmmaCommit() { dmcemu::wgmmaCommit(); }
/// The emulator runs each wgmma when issued: a wait only checks the protocol.
template <int N> inline void wgmmaWait() { dmcemu::wgmmaWait(N); }
inline void fenceProxyAsync() {}
template <int N> inline void pinAccumulators(float (&)[N][4]) {}
template <bool Bf16>
inline void wgmmaSS(float (&d)[8][4], uint64_t descA, uint64_t descB, bool accumulate) {
  dmcemu::wgmma(&d[0][0], 8, descA, nullptr, descB, false, accumulate, Bf16);
}
template <bool Bf16>
inline void wgmmaSS32(float (&d)[4][4], uint64_t descA, uint64_t descB, bool accumulate) {
  dmcemu::wgmma(&d[0][0], 4, descA, nullptr, descB, false, accumulate, Bf16);
}
template <bool Bf16>
inline void wgmmaRS(float (&d)[8][4], const uint32_t (&a)[4], uint64_t descB) {
  dmcemu::wgmma(&d[0][0], 8, 0, a, descB, true, true, Bf16);
}
template <bool Bf16> inline uint32_t pack2(float lo, float hi) {
  const uint16_t l = Bf16 ? dmrt::floatToBf16(lo) : dmrt::floatToHalf(lo);
  const uint16_t h = Bf16 ? dmrt::floatToBf16(hi) : dmrt::floatToHalf(hi);
  return (uint32_t)l | ((uint32_t)h << 16);
}

} // namespace dmcattn

#include "codegen/attention/device/Forward.h"
#include "codegen/attention/device/GradKV.h"
#include "codegen/attention/device/GradQ.h"

#endif // DMC_TESTS_ATTENTION_WARPEMULATOR_H
