//===- GemmEmulator.h - CPU emulation of one cublasLtMatmul ------------------===//
//
// Test support (the unit tests of the mapping and the GPU epilogue test
// compare against it). Executes a GemmDescriptor literally, as cuBLASLt would, in fp32 data with
// double accumulation. It knows nothing about einsum letters: only m, n, k,
// op(), the column-major layouts (rows, cols, ld, batch count, batch stride),
// alpha, beta and the cuBLASLt-level epilogue.
//
//   t(r,c)  = alpha * sum_k op(A)(r,k) * op(B)(k,c) + beta * C(r,c)
//             (C is not read when beta == 0, as in cuBLAS)
//   *BIAS:  t += bias[q*biasBatchStride + r]            (added before the act.)
//   RELU*:  D = max(t, 0);  *_AUX: aux bit (r,c) = (t > 0)
//   GELU*:  D = gelu(t) (tanh approximation); *_AUX: aux (r,c) = t
//   DRELU*: D = aux bit (r,c) ? t : 0
//   DGELU*: D = t * gelu'(aux (r,c))
//   D*_BGRAD: bias[q*biasBatchStride + r] = sum_c D(r,c)
//   BGRADA: bias[q*biasBatchStride + r] = sum_k op(A)(r,k)  (length m)
//   BGRADB: bias[q*biasBatchStride + c] = sum_k op(B)(k,c)  (length n)
// aux (r,c) of batch q lives at q*auxBatchStride + r + c*auxLd. The ReLU aux
// is a bit-mask in cuBLASLt; here each bit is one float (0 or 1) at the bit's
// index, so the buffer needs desc.auxSize() floats.
// `bias` is an input for the *BIAS epilogues and an output for the
// *BGRAD* ones (cuBLASLt's single CUBLASLT_MATMUL_DESC_BIAS_POINTER).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_SUPPORT_GEMMEMULATOR_H
#define DMC_TESTS_SUPPORT_GEMMEMULATOR_H

#include "runtime/format/GemmDescriptor.h"

namespace dmctest {

/// The tanh-approximated GELU cuBLASLt uses, and its derivative.
double geluTanh(double x);
double geluTanhGrad(double x);

/// Emulates cublasLtMatmul for `g`. Aborts (with a message on stderr) if the
/// descriptor fails validateDescriptor or a needed pointer is null.
void emulateMatmul(const dmrt::GemmDescriptor &g, const float *A, const float *B,
                   const float *C, float *D, float *bias, float *aux);

} // namespace dmctest

#endif // DMC_TESTS_SUPPORT_GEMMEMULATOR_H
