//===- GemmMapping.h - einsum contraction -> one cublasLtMatmul -------------===//
//
// MLIR-free. Maps a contraction over named dimensions (einsum letters), with
// given physical layouts of its three tensors, onto the descriptor of a single
// cublasLtMatmul call: D = epilogue(alpha * op(A) * op(B) + beta * C [+ bias]),
// all matrices column-major (CUBLASLT_ORDER_COL), strided batched.
//
// Letter classes:  batch = in a, b and d;  M = in a and d;  N = in b and d;
//                  K = in a and b.  A letter in one tensor only is invalid.
// Dims of size 1 carry no addressing and are ignored by every rule below.
//
// Legality (all must hold; mapContraction names the first one that fails):
//  1. Each group (batch, M, N, K) is *adjacent* in storage order in every
//     tensor holding it (no other dim between its letters), and its letters
//     appear in the *same relative order* in all those tensors. Then it
//     flattens to one index whose stride in a tensor is the stride of its
//     innermost letter there (row-major tensors: last letter contiguous).
//     The batch group may sit anywhere (outer, between M and K, ...): each
//     matrix gets its own batch stride (CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
//     and ld may exceed rows (interleaved batches are fine).
//  2. D must be a column-major matrix with unit row stride: its innermost dim
//     must belong to the M group (rows = M, no swap) or the N group (rows = N:
//     the mapping computes D^T = B^T A^T, swapOperands = true). D has no op
//     (CUBLASLT_MATMUL_DESC_TRANSC supports only N), so an innermost batch dim
//     in d is unmappable.
//  3. Each operand must have one of its two groups contiguous: the op() choice
//     (N or T) absorbs which one. An innermost batch dim is unmappable.
//     (A group that is empty/all size 1 has extent 1 and may take any role.)
//  4. Broadcast batch (fallback, only when the contraction has no batch dims):
//     a block of M dims (or of N dims), adjacent in d and leaving at least one
//     dim (of size > 1) in its group, may be mapped as the batch, with batch
//     stride 0 in the operand that lacks it; rules 1-3 then
//     apply to the rest. E.g. bji,shpi->sbjhp (stacked QKV written s-major):
//     batch = s, b's batch stride = h*p*i, a's = 0. The block is tried from
//     each start position of d, shortest first.
//  5. Epilogues (cuBLASLt-level, after the swap):
//     - bias (BIAS, RELU_BIAS, GELU_BIAS, *_AUX_BIAS) is a packed vector of
//       length rows(D) broadcast over columns: the bias letters must be the
//       group on D's rows, in D's order, optionally preceded by the batch group
//       (then CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = rows, else 0 =
//       broadcast over the batch). There is no column-bias epilogue.
//     - *_AUX writes / D* reads an aux matrix of D's shape (rows x cols,
//       column-major, own ld): ReLU: a bit-mask, ld in bits, multiple of 128;
//       GELU: the GELU input, ld multiple of 8. The backward GEMM that reads
//       it must have the same rows/cols/batch (see auxCompatible).
//     - DRELU_BGRAD / DGELU_BGRAD also write the bias gradient: the sum over
//       the columns of the final D, one vector of length rows per batch.
//     - BGRADA: sum over k of op(A) (length m = rows); BGRADB: sum over k of
//       op(B) (length n = cols). The contraction-level BGradA (reduce tensor a
//       over K) becomes BGRADB after a swap, and vice versa.
//     - A bias gradient cannot also reduce over the batch: with batchCount > 1
//       its letters must include the batch group.
//     - ACCUMULATE (not a cuBLASLt epilogue): D = ... + addend, read as C
//       with beta 1, so the addend's letters (biasDims) must be D's in D's
//       storage order (C shares D's matrix layout); the contraction itself
//       keeps beta 0.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_GEMM_GEMMMAPPING_H
#define DMC_CODEGEN_GEMM_GEMMMAPPING_H

#include "runtime/format/GemmDescriptor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmcgen {

/// A tensor's dims in storage order, row-major (the last dim is contiguous),
/// one letter per dim; sizes[i] is the extent of dims[i].
struct TensorLayout {
  std::string dims;
  std::vector<int64_t> sizes;
};

/// d = epilogue(alpha * sum a*b + beta * d [+ bias]).
/// biasDims: the letters (storage order, row-major, packed) of the bias vector
/// read by the *Bias epilogues or of the bias gradient written by *BGrad*.
struct Contraction {
  TensorLayout a, b, d;
  double alpha = 1, beta = 0;
  dmrt::Epilogue epilogue = dmrt::Epilogue::None;
  std::string biasDims;
};

/// Maps a contraction with given layouts to one cublasLtMatmul, or returns
/// false with `reason` saying exactly why not. `out` is only valid on success.
bool mapContraction(const Contraction &c, dmrt::GemmDescriptor &out,
                    std::string &reason);

} // namespace dmcgen

#endif // DMC_CODEGEN_GEMM_GEMMMAPPING_H
