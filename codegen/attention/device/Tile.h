//===- Tile.h - Swizzled shared-memory tiles of [rows][D] b16 elements -*- CUDA -*-===//
//
// A tile holds `Rows` rows of a q/k/v/o/dO block, D elements each, in
// 16-byte chunks. Chunk c of row r is stored at chunk (c ^ swizzle(r)) of
// the row so that the 8 row addresses of one ldmatrix (8 consecutive rows,
// same column) fall into 8 different 16-byte bank groups: no conflicts for
// ldmatrix nor for the cp.async stores. Rows are padded to a power of two
// chunks (D = 16, 32) or a multiple of 8 chunks, so XOR stays in the row.
//
// Fragment loads (ldsm4 on 16x16 sub-blocks at (row0, col0)) come in two
// lane patterns:
//   APattern: regs = (rows 0-7, cols 0-7), (rows 8-15, cols 0-7),
//                    (rows 0-7, cols 8-15), (rows 8-15, cols 8-15)
//     - no trans: an mma A operand of a row-major [m][k] block;
//     - trans: B operands of two n8 atoms of a row-major [k][n] block
//       (regs 0,1: atom n 0-7; regs 2,3: atom n 8-15).
//   BPattern (no trans): regs = (rows 0-7, cols 0-7), (rows 0-7, cols 8-15),
//                    (rows 8-15, cols 0-7), (rows 8-15, cols 8-15):
//     B operands of two n8 atoms of a [n][k] block (rows = n).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_TILE_H
#define DMC_ATTENTION_DEVICE_TILE_H

#include "codegen/attention/device/Mma.h"

namespace dmcattn {

/// Chunks (16 bytes) per padded row of D elements.
constexpr int pitchChunks(int D) {
  return D / 8 <= 4 ? D / 8 : (D / 8 + 7) / 8 * 8;
}

template <int Rows, int D> struct SmemTile {
  static_assert(D % 16 == 0 && D >= 16, "head dim: a multiple of 16");
  static_assert(Rows % 16 == 0, "tile rows: a multiple of 16");
  static constexpr int kChunks = D / 8;            ///< logical chunks per row
  static constexpr int kPitch = pitchChunks(D);    ///< stored chunks per row
  static constexpr int kGroup = kPitch < 8 ? kPitch : 8; ///< XOR range
  static constexpr int kRowsPerLine = 8 / kGroup;  ///< rows sharing 128 bytes
  static constexpr int kBytes = Rows * kPitch * 16;

  /// Byte offset of chunk `c` of row `r`.
  static DMC_ATTN_DEV int offset(int r, int c) {
    return (r * kPitch + (c ^ ((r / kRowsPerLine) & (kGroup - 1)))) * 16;
  }

  /// Issues cp.async copies (to the tile at shared address `tile`) of rows
  /// [row0, row0 + Rows) of a row-major
  /// global block (`base` at row 0, `rowStride` elements between rows);
  /// rows >= rowLimit are zero-filled. All NT threads of the block call it.
  template <int NT>
  static DMC_ATTN_DEV void load(uint32_t tile, const uint16_t *base, int64_t rowStride,
                                int row0, int rowLimit) {
    constexpr int kTotal = Rows * kChunks;
    const int tid = threadIndex();
    DMC_ATTN_UNROLL
    for (int i = 0; i < (kTotal + NT - 1) / NT; ++i) {
      const int id = tid + i * NT;
      if (kTotal % NT != 0 && id >= kTotal)
        break;
      const int r = id / kChunks, c = id % kChunks;
      const bool valid = row0 + r < rowLimit;
      const uint16_t *src = valid ? base + (int64_t)(row0 + r) * rowStride + c * 8 : base;
      cpAsync16(tile + offset(r, c), src, valid);
    }
  }

  /// The ldsm4 of the 16x16 block at (row0, col0); see the patterns above.
  template <bool Trans, bool APattern>
  static DMC_ATTN_DEV void fragment(uint32_t (&reg)[4], uint32_t tile, int row0, int col0) {
    const int l = laneId();
    const int r = row0 + (l & 7) + (APattern ? (l & 8) : (l & 16) >> 1);
    const int c = (col0 >> 3) + (APattern ? (l >> 4) : (l >> 3) & 1);
    ldsm4<Trans>(reg, tile + offset(r, c));
  }
  /// An mma A operand: rows [row0, row0+16) x cols [col0, col0+16).
  static DMC_ATTN_DEV void loadA(uint32_t (&reg)[4], uint32_t tile, int row0, int col0) {
    fragment<false, true>(reg, tile, row0, col0);
  }
  /// B operands of two n8 atoms where the tile is [n][k]: n rows
  /// [row0, row0+16), k cols [col0, col0+16). Atom 0: reg0, reg1; atom 1: reg2, reg3.
  static DMC_ATTN_DEV void loadBRows(uint32_t (&reg)[4], uint32_t tile, int row0, int col0) {
    fragment<false, false>(reg, tile, row0, col0);
  }
  /// B operands of two n8 atoms where the tile is [k][n]: k rows
  /// [row0, row0+16), n cols [col0, col0+16). Atom 0: reg0, reg1; atom 1: reg2, reg3.
  static DMC_ATTN_DEV void loadBCols(uint32_t (&reg)[4], uint32_t tile, int row0, int col0) {
    fragment<true, true>(reg, tile, row0, col0);
  }

  /// out[r] = sum_c a[r][c] * b[r][c] for every row of two tiles, by all NT
  /// threads of the block: NT / Rows consecutive lanes per row (or Rows / NT
  /// rows per thread), 16-byte shared loads, a shuffle reduction.
  template <int NT, bool Bf16>
  static DMC_ATTN_DEV void rowDot(float *out, const unsigned char *a, const unsigned char *b) {
    constexpr int TPR = NT >= Rows ? NT / Rows : 1; // threads per row
    constexpr int RPT = Rows > NT ? Rows / NT : 1;  // rows per thread
    constexpr int CPT = (kChunks + TPR - 1) / TPR;  // chunks per thread
    static_assert(TPR <= 32 && NT % (Rows / RPT) == 0, "rows split over lanes of one warp");
    const int tid = threadIndex(), sub = tid % TPR;
    DMC_ATTN_UNROLL
    for (int i = 0; i < RPT; ++i) {
      const int r = tid / TPR + i * (NT / TPR);
      float acc = 0.f;
      DMC_ATTN_UNROLL
      for (int j = 0; j < CPT; ++j) {
        const int c = sub + j * TPR;
        if (kChunks % TPR != 0 && c >= kChunks)
          break;
        const Chunk x = *reinterpret_cast<const Chunk *>(a + offset(r, c));
        const Chunk y = *reinterpret_cast<const Chunk *>(b + offset(r, c));
        DMC_ATTN_UNROLL
        for (int w = 0; w < 4; ++w) {
          float x0, x1, y0, y1;
          unpack2<Bf16>(x.w[w], x0, x1);
          unpack2<Bf16>(y.w[w], y0, y1);
          acc += x0 * y0 + x1 * y1;
        }
      }
      DMC_ATTN_UNROLL
      for (int m = TPR / 2; m > 0; m >>= 1)
        acc += shflXor(acc, m);
      if (sub == 0)
        out[r] = acc;
    }
  }

private:
  struct alignas(16) Chunk {
    uint32_t w[4];
  };
};

/// The A operand for k-chunk kk of a 16 x (8 * NA) f32 accumulator (atoms
/// 2kk and 2kk+1), each element times the factor the caller folded in.
template <bool Bf16, int NA>
DMC_ATTN_DEV void accumulatorAsA(uint32_t (&a)[4], const float (&acc)[NA][4], int kk) {
  a[0] = pack2<Bf16>(acc[2 * kk][0], acc[2 * kk][1]);
  a[1] = pack2<Bf16>(acc[2 * kk][2], acc[2 * kk][3]);
  a[2] = pack2<Bf16>(acc[2 * kk + 1][0], acc[2 * kk + 1][1]);
  a[3] = pack2<Bf16>(acc[2 * kk + 1][2], acc[2 * kk + 1][3]);
}

/// acc[m] (16 x 8*NA each) += A (rows aRow0 + 16m .. + 15, 16*KK cols of
/// `at`) * B^T, where B is a tile of [n][k] rows (n rows bRow0..+8*NA): S =
/// Q K^T and its relatives. Each B fragment loaded serves the MB row blocks
/// of the warp (2 MB mma a load).
template <bool Bf16, int MB, int NA, int KK, class ATile, class BTile>
DMC_ATTN_DEV void mmaRowsRows(float (&acc)[MB][NA][4], uint32_t at, int aRow0, uint32_t bt,
                              int bRow0) {
  DMC_ATTN_UNROLL
  for (int kk = 0; kk < KK; ++kk) {
    uint32_t a[MB][4];
    DMC_ATTN_UNROLL
    for (int m = 0; m < MB; ++m)
      ATile::loadA(a[m], at, aRow0 + 16 * m, kk * 16);
    DMC_ATTN_UNROLL
    for (int np = 0; np < NA / 2; ++np) {
      uint32_t b[4];
      BTile::loadBRows(b, bt, bRow0 + np * 16, kk * 16);
      DMC_ATTN_UNROLL
      for (int m = 0; m < MB; ++m) {
        mma16816<Bf16>(acc[m][2 * np], a[m], b[0], b[1]);
        mma16816<Bf16>(acc[m][2 * np + 1], a[m], b[2], b[3]);
      }
    }
  }
}

/// One row block: acc (16 x 8*NA) += A (16 x 16*KK from `at`, rows aRow0) * B^T.
template <bool Bf16, int NA, int KK, class ATile, class BTile>
DMC_ATTN_DEV void mmaRowsRows(float (&acc)[NA][4], uint32_t at, int aRow0, uint32_t bt,
                              int bRow0) {
  mmaRowsRows<Bf16, 1, NA, KK, ATile, BTile>(reinterpret_cast<float(&)[1][NA][4]>(acc), at,
                                             aRow0, bt, bRow0);
}

/// acc[m] (16 x 8*NA each) += P[m] (16 x 16*KK, registers) * B, where B is a
/// tile of [k][n] rows (k rows bRow0..+16*KK, n cols 0..8*NA): O = P V and
/// relatives. Each B fragment loaded serves the MB row blocks.
template <bool Bf16, int MB, int NA, int KK, class BTile, int NP>
DMC_ATTN_DEV void mmaRegsCols(float (&acc)[MB][NA][4], const float (&p)[MB][NP][4], uint32_t bt,
                              int bRow0) {
  static_assert(NP == 2 * KK, "P holds 2 atoms per k-chunk");
  DMC_ATTN_UNROLL
  for (int kk = 0; kk < KK; ++kk) {
    uint32_t a[MB][4];
    DMC_ATTN_UNROLL
    for (int m = 0; m < MB; ++m)
      accumulatorAsA<Bf16>(a[m], p[m], kk);
    DMC_ATTN_UNROLL
    for (int np = 0; np < NA / 2; ++np) {
      uint32_t b[4];
      BTile::loadBCols(b, bt, bRow0 + kk * 16, np * 16);
      DMC_ATTN_UNROLL
      for (int m = 0; m < MB; ++m) {
        mma16816<Bf16>(acc[m][2 * np], a[m], b[0], b[1]);
        mma16816<Bf16>(acc[m][2 * np + 1], a[m], b[2], b[3]);
      }
    }
  }
}

/// One row block: acc (16 x 8*NA) += P (16 x 16*KK, registers) * B.
template <bool Bf16, int NA, int KK, class BTile, int NP>
DMC_ATTN_DEV void mmaRegsCols(float (&acc)[NA][4], const float (&p)[NP][4], uint32_t bt,
                              int bRow0) {
  mmaRegsCols<Bf16, 1, NA, KK, BTile, NP>(reinterpret_cast<float(&)[1][NA][4]>(acc),
                                          reinterpret_cast<const float(&)[1][NP][4]>(p), bt,
                                          bRow0);
}

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_TILE_H
