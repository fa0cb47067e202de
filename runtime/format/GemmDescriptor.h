//===- GemmDescriptor.h - One cublasLtMatmul call, as data ---------*- C++ -*-===//
//
// The cuBLASLt form of a contraction as the bundle stores it and the runtime
// executes it: D = epilogue(alpha * op(A) * op(B) + beta * C [+ bias]), all
// matrices column-major, strided batched. Part of the bundle format: CUDA-free
// (cuBLASLt's own enum values are applied in runtime/GemmRunner). How an
// einsum maps onto it is codegen/gemm/GemmMapping.h.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_GEMMDESCRIPTOR_H
#define DMRT_FORMAT_GEMMDESCRIPTOR_H

#include <cstdint>
#include <string>

namespace dmrt {

/// op() of a cuBLASLt operand (real types: N or T).
enum class Transpose { N, T };

/// Epilogues, named as cuBLASLt's (cublasLtEpilogue_t). In a Contraction they
/// have the contraction-level meaning (BGradA: reduce tensor a over its K
/// dims); in a GemmDescriptor the cuBLASLt meaning (BGradA: reduce op(A)).
enum class Epilogue {
  None,        // CUBLASLT_EPILOGUE_DEFAULT
  Bias,        // + bias
  Relu,        // relu(x)
  ReluBias,    // relu(x + bias)
  ReluAux,     // relu(x), aux = bit-mask (x > 0)
  ReluAuxBias, // relu(x + bias), aux = bit-mask
  Gelu,        // gelu(x), tanh approximation
  GeluBias,    // gelu(x + bias)
  GeluAux,     // gelu(x), aux = x
  GeluAuxBias, // gelu(x + bias), aux = x + bias
  DRelu,       // x * (aux bit ? 1 : 0)
  DReluBGrad,  // DRelu, and bias = row sums of the result
  DGelu,       // x * gelu'(aux)
  DGeluBGrad,  // DGelu, and bias = row sums of the result
  BGradA,      // bias = sum over k of op(A)   (length m)
  BGradB,      // bias = sum over k of op(B)   (length n)
  /// Not a cuBLASLt epilogue: DEFAULT with beta = 1 and C the addend, a
  /// tensor of D's shape and layout (the manifest's `bias` field names it):
  /// D = alpha op(A) op(B) + addend, summed in f32 before D is rounded.
  Accumulate,
};

/// cuBLASLt's name without the prefix: "DEFAULT", "BIAS", "GELU_AUX_BIAS", ...
const char *epilogueName(Epilogue e);
/// The manifest spelling: epilogueName in lower case, "none" for None.
std::string epilogueManifestName(Epilogue e);
/// Inverse of epilogueManifestName ("default" also reads as None).
bool parseEpilogue(const std::string &s, Epilogue &out);
bool epilogueReadsBias(Epilogue e);   // bias is an input vector
bool epilogueWritesBias(Epilogue e);  // bias pointer receives a gradient
bool epilogueReadsAddend(Epilogue e); // Accumulate: C is the bias pointer's tensor
bool epilogueWritesAux(Epilogue e);   // *_AUX
bool epilogueReadsAux(Epilogue e);    // DRELU*, DGELU*
bool epilogueIsRelu(Epilogue e);      // aux (if any) is a ReLU bit-mask

/// As given to cublasLtMatrixLayoutCreate (CUDA_R_*, rows, cols, ld) plus the
/// attributes CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT / _STRIDED_BATCH_OFFSET.
/// Column-major: element (r, c) of batch q is at q*batchStride + r + c*ld.
struct MatrixLayout {
  int64_t rows = 0, cols = 0, ld = 0;
  int32_t batchCount = 1;
  int64_t batchStride = 0;
};

struct GemmDescriptor {
  /// true: the call computes D^T = B^T A^T, i.e. cuBLASLt's A is tensor b and
  /// cuBLASLt's B is tensor a (so that D's contiguous group is its rows).
  bool swapOperands = false;
  Transpose transA = Transpose::N, transB = Transpose::N;
  int64_t m = 1, n = 1, k = 1;
  int32_t batchCount = 1;
  /// a, b: the first / second cublasLtMatmul operand (after any swap); c == d.
  MatrixLayout a, b, c, d;
  double alpha = 1, beta = 0;
  /// cuBLASLt-level epilogue (after the swap).
  Epilogue epilogue = Epilogue::None;
  /// CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE (elements); 0: one vector for all.
  int64_t biasBatchStride = 0;
  /// Length of the bias / bias-gradient vector (m, or n for BGRADB); 0: none.
  int64_t biasLength = 0;
  /// CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD / _AUX_BATCH_STRIDE: in bits for the
  /// ReLU bit-mask, in elements for the GELU input. 0 when there is no aux.
  int64_t auxLd = 0, auxBatchStride = 0;

  /// For the tuner and describe(): which letters (flattening order) went where.
  std::string rowDims, colDims, kDims, batchDims;

  /// Number of aux elements (bits for ReLU) the aux buffer must hold.
  int64_t auxSize() const;
  /// Human-readable one-liner.
  std::string describe() const;
};

/// "b,j,h" for the letters "bjh" (in messages).
std::string commaSeparated(const std::string &letters);

/// Checks a descriptor against cuBLASLt's own rules (shapes consistent with
/// op(), ld >= rows, batch counts, aux ld alignment, ...). Independent of any
/// einsum; the emulator refuses descriptors that fail it.
bool validateDescriptor(const GemmDescriptor &g, std::string &reason);

/// Whether the aux written by `producer` (a *_AUX epilogue) can be read by
/// `consumer` (DRELU* / DGELU*): same rows, cols, batch, aux ld and stride.
bool auxCompatible(const GemmDescriptor &producer,
                   const GemmDescriptor &consumer, std::string &reason);

} // namespace dmrt

#endif // DMRT_FORMAT_GEMMDESCRIPTOR_H
