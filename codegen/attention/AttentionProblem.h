//===- AttentionProblem.h - Fused attention kernels: problem, tiles, source -*- C++ -*-===//
//
// The MLIR-free description of one fused (flash-style) attention and the
// NVRTC source of its three kernels:
//
//   Forward  o[b,h,j,:] = sum_k dropout(softmax_k(scale q.k, masked))[j,k] v[b,h,k,:]
//            lse[b,h,j] = log sum_k exp(scale q.k)   (natural log, masked keys left out)
//   GradQ    dQ, Drow from q, k, v, o, dO, lse   (query-block-major, deterministic)
//   GradKV   dK, dV   from q, k, v, dO, lse, Drow (key-block-major, deterministic)
//
// Drow[b,h,j] = dO[b,h,j,:] . o[b,h,j,:] (f32): grad-q computes it once per
// query tile and writes it; grad-kv, run after, reads it.
//
// Dropout masks are Philox4x32-10 words over the element index. By default
// every kernel draws them again; with `keepBits` the forward also writes the
// mask (AND the causal / padding visibility) as one bit per element, 32 keys
// to an int32 word, and the backward kernels read those words instead of
// drawing: Philox runs once per training step instead of three times, for
// 1/16 of the memory the saved bf16 probabilities would take.
//
// Everything a kernel is specialised on lives in AttentionProblem; the
// emitted source is a config struct of constants plus a one-line entry, the
// logic lives in the device headers codegen/attention/device/*.h (embedded
// for NVRTC by codegen/nvrtc). Plain C++17: no MLIR, no CUDA headers.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_ATTENTION_ATTENTIONPROBLEM_H
#define DMC_CODEGEN_ATTENTION_ATTENTIONPROBLEM_H

#include "runtime/format/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmcgen {

/// Element strides of a 4-d tensor over its logical dims (b, h, row, p):
/// row is j (query position) for q, o, dO, dQ and k (key position) for k, v,
/// dK, dV. The head-dim stride `p` must be 1.
struct AttentionStrides {
  int64_t b = 0, h = 0, row = 0, p = 1;
};

/// Strides of lse and of Drow (f32) over (b, h, j).
struct LseStrides {
  int64_t b = 0, h = 0, j = 0;
};

/// Strides of the dropout's logical element index over (b, h, j, k): the
/// Philox element index is n = b*sb + h*sh + j*sj + k*sk, the row-major index
/// over the op's `order` attribute (order "bhjk": sk = 1, sj = Lk,
/// sh = Lq*Lk, sb = H*Lq*Lk). See runtime/format/device/Philox.h.
struct DropoutStrides {
  int64_t b = 0, h = 0, j = 0, k = 0;
};

/// Strides of the saved dropout keep bits, int32 words over (b, h, j, w): bit
/// i (LSB first) of word w of row (b, h, j) is 1 iff key k = 32 w + i is
/// below Lk, visible (not masked: causal, key padding) and kept by dropout
/// (the Philox word of its element is >= the threshold). ceil(Lk / 32) words
/// per row; bits past Lk are 0.
struct KeepBitsStrides {
  int64_t b = 0, h = 0, j = 0, w = 0;
};

struct AttentionProblem {
  dmrt::DType dtype = dmrt::DType::BF16; ///< of q, k, v, o, dO, dQ, dK, dV: bf16 or f16
  int64_t B = 1, H = 1; ///< batch, heads
  int64_t Lq = 1, Lk = 1; ///< query and key positions
  int64_t D = 64;         ///< head dim
  AttentionStrides q, k, v, o, dO, dQ, dK, dV;
  LseStrides lse, drow;
  double scale = 0.125; ///< applied to q.k before masking
  bool causal = false;  ///< key index > query index masked (-inf)
  bool keyPadding = false; ///< an int32 input lens[B]: keys k >= lens[b] masked
  double dropout = 0;      ///< drop probability p in [0, 1); 0 = no dropout
  uint32_t dropoutId = 0;  ///< the dropout op's Philox id
  DropoutStrides dropoutStrides;
  /// With dropout in a training graph: the forward also writes the keep bits
  /// (an output after lse) and the backward kernels read them (an input after
  /// lse) instead of drawing Philox words. False: every kernel draws.
  bool keepBits = false;
  KeepBitsStrides bits; ///< contiguousProblem: row-major (b, h, j, w)
};

/// Keep-bit words per (b, h, j) row: ceil(Lk / 32).
inline int64_t keepBitsWords(const AttentionProblem &p) { return (p.Lk + 31) / 32; }
/// Contiguous keep-bit words laid out (b, h, w, j), consecutive queries
/// adjacent: the layout dm-fuse-attention gives them.
inline KeepBitsStrides queryContiguousKeepBits(const AttentionProblem &p) {
  const int64_t words = keepBitsWords(p);
  return {p.H * words * p.Lq, words * p.Lq, 1, p.Lq};
}
/// Whether the forward writes (and the backward kernels read) keep bits.
inline bool usesKeepBits(const AttentionProblem &p) { return p.keepBits && p.dropout > 0; }

/// Row-major strides of a (b, h, row, p) tensor whose physical order is
/// `order`, a permutation of "bhjp" or "bhkp" (e.g. "bjhp": q laid out as
/// [B][L][H][D]); `rows` is L. "" on success, else why not.
std::string rowMajorStrides(const std::string &order, int64_t B, int64_t H, int64_t rows,
                            int64_t D, AttentionStrides &out);

/// A problem whose eight tensors are laid out "bhjp"/"bhkp", lse and Drow "bhj", the
/// dropout order "bhjk" and the keep bits "bhjw" (scale 1/sqrt(D), no mask,
/// no dropout, keepBits off).
AttentionProblem contiguousProblem(dmrt::DType dtype, int64_t B, int64_t H, int64_t Lq,
                                   int64_t Lk, int64_t D);

/// "" when the kernels support `p`; otherwise one message naming the field,
/// its value and what is allowed.
std::string validate(const AttentionProblem &p);

enum class AttentionKernelKind { Forward, GradKV, GradQ };
const char *kernelKindName(AttentionKernelKind kind); ///< "forward", "grad-kv", "grad-q"

/// Dynamic shared memory one block may use on sm_90 (227 KiB).
inline constexpr unsigned kMaxSharedBytesSm90 = 227 * 1024;

/// Tile knobs. blockM query positions and blockN key positions per tile;
/// each warp owns 16 rows of the block-major dim: 16 queries (Forward,
/// GradQ: blockM == 16 * warps) or 16 keys (GradKV: blockN == 16 * warps).
/// The other tile dim is the inner loop's step. `wgmma`: the kernel's
/// products run as warpgroup MMA (device/Wgmma.h; sm_90a, head dim 64, 64
/// rows of the block-major dim on 4 warps, the other a multiple of 64)
/// instead of each warp's mma.sync.
struct AttentionTiles {
  int blockM = 0, blockN = 0, warps = 0;
  bool wgmma = false;
  /// Blocks ptxas must fit on an SM (__launch_bounds__'s minimum, which caps
  /// registers at 65536 / (32 warps x minBlocks)); 0: the kind's own hint
  /// (hintedBlocks).
  int minBlocks = 0;
  bool operator==(const AttentionTiles &o) const {
    return blockM == o.blockM && blockN == o.blockN && warps == o.warps && wgmma == o.wgmma &&
           minBlocks == o.minBlocks;
  }
};

/// 32-bit registers an SM holds for its blocks (sm_80 to sm_90).
inline constexpr int kRegistersPerSM = 65536;
/// Registers a thread at the kernels' usual occupancy: what the forward's
/// launch bounds ask for, and about what ptxas gives the backward kernels at
/// head dim 64 (153-164).
inline constexpr int kUsualRegisters = 168;
/// Blocks of `warps` warps an SM holds at `registers` a thread (at least 1).
inline int blocksAtRegisters(int warps, int registers) {
  const int blocks = kRegistersPerSM / (32 * warps * registers);
  return blocks > 1 ? blocks : 1;
}

/// The blocks an SM a kernel's launch bounds ask for when the tiles name
/// none: the forward's, blocks of kUsualRegisters a thread (3 of 4 warps);
/// the backward kernels leave it to ptxas (0).
int hintedBlocks(AttentionKernelKind kind, int warps);

/// What the target offers the tiles: dynamic shared memory one block may use,
/// and whether it runs sm_90a's warpgroup MMA.
struct TileLimits {
  unsigned maxSharedBytes = kMaxSharedBytesSm90;
  bool wgmma = false;
};


/// Row blocks of 16 each warp owns (keys for grad-kv, queries otherwise):
/// 1, or 2 where grad-kv's blockN is 32 * warps; 0 when the tiles fit neither.
int rowBlocksPerWarp(const AttentionTiles &tiles, AttentionKernelKind kind);
/// "" when `tiles` can run `kind` of `p` within `maxSharedBytes`, else why
/// not. A forward that writes keep bits needs blockN a multiple of 32 (each
/// key tile writes whole words).
std::string checkTiles(const AttentionProblem &p, const AttentionTiles &tiles,
                       AttentionKernelKind kind, const TileLimits &limits = {});
/// The default tiles for `kind` of `p` (by head dim; wgmma where `limits`
/// allow and it measured faster); always pass checkTiles under `limits`.
AttentionTiles defaultTiles(const AttentionProblem &p, AttentionKernelKind kind,
                            const TileLimits &limits = {});

struct TileCandidate {
  AttentionTiles tiles;
  std::string rejected; ///< "" when feasible, else checkTiles' reason
};
/// Every blockM, blockN in {16, 32, 64, 128} and warps in {1, 2, 4, 8}, with
/// the reason each infeasible one is rejected (the tuner's search space);
/// grad-kv's tiles of two row blocks a warp last, then the wgmma tiles (64
/// rows owned, 64 or 128 the other dim, 4 warps) where the limits allow wgmma;
/// last, each feasible one of at least 4 warps again with more blocks an SM
/// (minBlocks) where 128 registers a thread and the shared memory leave room
/// for more than blocks of 168 registers (4 warps: 4 blocks instead of 3).
std::vector<TileCandidate> tileCandidates(const AttentionProblem &p, AttentionKernelKind kind,
                                          const TileLimits &limits = {});

struct AttentionLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0; ///< dynamic shared memory (above 48 KiB needs the opt-in attribute)
};
/// Grid (tiles of the block-major dim, H, B), block (32 * warps) and dynamic
/// shared memory. `p` and `tiles` must be valid (validate, checkTiles).
AttentionLaunch launchGeometry(const AttentionProblem &p, const AttentionTiles &tiles,
                               AttentionKernelKind kind);
/// Dynamic shared memory of `kind` with `tiles`, in bytes.
unsigned sharedBytes(const AttentionProblem &p, const AttentionTiles &tiles,
                     AttentionKernelKind kind);

/// The names of the entry's tensor parameters in order (the kernel ABI of
/// runtime/format/KernelAbi.h: inputs, outputs, then `seed`):
///   Forward: q, k, v, [lens], o, lse, [bits]
///   GradKV:  q, k, v, dO, lse, drow, [bits], [lens], dK, dV
///   GradQ:   q, k, v, o, dO, lse, [bits], [lens], dQ, drow
/// ([bits]: when keepBits and dropout > 0.)
std::vector<std::string> kernelInputs(const AttentionProblem &p, AttentionKernelKind kind);
std::vector<std::string> kernelOutputs(const AttentionProblem &p, AttentionKernelKind kind);

/// A complete CUDA C++ translation unit for NVRTC: the device headers, a
/// config struct of constants and `extern "C" __global__ void entryName(...)`
/// with the parameters above (bf16/f16 as uint16_t, lens int32_t, lse float)
/// and `unsigned long long seed` last. `p` and `tiles` must be valid.
/// Pointers must be 16-byte aligned.
std::string emitAttentionSource(const AttentionProblem &p, const AttentionTiles &tiles,
                                AttentionKernelKind kind, const std::string &entryName);

/// The device headers the emitted source includes (embedded for NVRTC).
const std::vector<std::string> &attentionDeviceHeaders();

} // namespace dmcgen

#endif // DMC_CODEGEN_ATTENTION_ATTENTIONPROBLEM_H
