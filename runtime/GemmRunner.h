//===- GemmRunner.h - One contraction as one cublasLtMatmul -------*- C++ -*-===//
//
// Runs a dmrt::GemmDescriptor with cuBLASLt: compute CUBLAS_COMPUTE_32F,
// scale CUDA_R_32F, A/B/C/D types from the tensors' dtypes, column-major
// strided-batched layouts, transa/transb, 32 MiB workspace. Algorithms come
// from cublasLtMatmulAlgoGetHeuristic; `algorithms(k)` exposes the top k so a
// tuner can time each, and `enumerateAlgorithms` adds configurations built
// from cublasLtMatmulAlgoGetIds (runtime/GemmAlgorithms.h). Every cuBLAS
// failure becomes a message naming the call and the epilogue.
//
// Epilogues: every one the descriptor defines (DEFAULT, BIAS, RELU[_AUX][_BIAS],
// GELU[_AUX][_BIAS], DRELU[_BGRAD], DGELU[_BGRAD], BGRADA, BGRADB), set as
// CUBLASLT_MATMUL_DESC_EPILOGUE. Whether cuBLASLt has a kernel for a given
// epilogue, layout and type is its own business: without one the heuristic
// fails with CUBLAS_STATUS_NOT_SUPPORTED (see lastStatus()).
//  - bias (CUBLASLT_MATMUL_DESC_BIAS_POINTER): read by the *BIAS epilogues,
//    written (the gradient) by D*_BGRAD, BGRADA and BGRADB. Its type
//    (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE) is `biasType`; cuBLASLt documents
//    the bias / bias gradient as D's type for the non-FP8 types run here.
//    CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = g.biasBatchStride.
//  - aux (CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER): written by *_AUX, read
//    by DRELU* / DGELU*. _AUX_LD = g.auxLd, _AUX_BATCH_STRIDE =
//    g.auxBatchStride. ReLU: a bit-mask, ld and stride in bits (multiples of
//    128; bit i of the buffer is bit i%8 of byte i/8); no aux data type.
//    GELU: the GELU input in D's type (ld, stride in elements, multiples of 8).
//    CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE is left at its default (-1:
//    bit-mask / D's type): cuBLASLt accepts another aux type only for FP8
//    kernels, which this runner does not run, and documents that it must
//    otherwise stay unset. auxBytes() says how big the buffer must be.
//
// Operands are the *cuBLASLt* operands: when the descriptor has swapOperands,
// the caller passes tensor b as `a` and tensor a as `b`.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_GEMMRUNNER_H
#define DMRT_GEMMRUNNER_H

#include "runtime/format/GemmDescriptor.h"
#include "runtime/GemmAlgorithms.h"
#include "runtime/Safetensors.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

/// The bundle format's epilogue and op() as cuBLASLt's enums.
cublasLtEpilogue_t toCublasLt(Epilogue e);
cublasOperation_t toCublasLt(Transpose t);

/// DType -> cudaDataType (bf16, f16, f32); false for others.
bool toCudaDataType(DType t, cudaDataType_t &out);
/// "CUBLAS_STATUS_X" for a status.
const char *cublasStatusName(cublasStatus_t s);

class GemmRunner {
public:
  static constexpr size_t kWorkspaceBytes = 32u << 20;
  static constexpr cublasComputeType_t kComputeType = CUBLAS_COMPUTE_32F;
  static constexpr cudaDataType_t kScaleType = CUDA_R_32F;
  /// Heuristic results enumerateAlgorithms puts first by default.
  static constexpr int kDefaultHeuristicCount = 8;
  /// At most this many cublasLtMatmulAlgoCheck calls per enumeration.
  static constexpr int kMaxAlgoChecks = 50000;
  /// ... and at most this many per id and round-robin turn.
  static constexpr int kAlgoChecksPerTurn = 1000;

  GemmRunner() = default;
  ~GemmRunner();
  GemmRunner(const GemmRunner &) = delete;
  GemmRunner &operator=(const GemmRunner &) = delete;

  /// Bytes the aux buffer of `g` needs when D has type `typeD` (0: the
  /// epilogue has no aux): ReLU bit-mask: g.auxSize() bits rounded up to whole
  /// 16-byte words; GELU input: g.auxSize() elements of typeD.
  static int64_t auxBytes(const dmrt::GemmDescriptor &g, DType typeD);

  /// Validates `g` (dmrt::validateDescriptor) and creates the descriptors.
  /// typeA/typeB: the cuBLASLt operands' dtypes (after the swap); typeD also
  /// for C; biasType for the bias vector or bias gradient (ignored when the
  /// epilogue has none). `handle` and `workspace` (kWorkspaceBytes) are owned
  /// by the caller.
  bool init(cublasLtHandle_t handle, const dmrt::GemmDescriptor &g,
            DType typeA, DType typeB, DType typeD, DType biasType,
            void *workspace, std::string &error);

  /// Up to k heuristic algorithms, best first (cached after the first call).
  /// cuBLASLt reads the bias / aux pointers' values (alignment) here: before
  /// the first run() they are bound to the workspace (256-byte aligned).
  bool algorithms(int k, std::vector<cublasLtMatmulHeuristicResult_t> &out,
                  std::string &error);

  /// The heuristic's top `heuristicCount` (as algorithms(); source
  /// Heuristic, best first), then configurations enumerated from
  /// cublasLtMatmulAlgoGetIds for this runner's types (source Enumerated):
  /// every id's candidates (candidateConfigs), tried round-robin over the ids
  /// (selectCandidates, at most kMaxAlgoChecks checks, kAlgoChecksPerTurn
  /// per id and turn; ~4 us each on an H100), kept when
  /// cublasLtMatmulAlgoCheck accepts them with a workspace <=
  /// kWorkspaceBytes and their key differs from every heuristic result's.
  /// At most `maxCount` in all. Each entry has its configuration and
  /// description. False when cuBLAS fails, or when neither source gives an
  /// algorithm (lastStatus() CUBLAS_STATUS_NOT_SUPPORTED). No GPU work: only
  /// descriptors are checked, nothing runs.
  bool enumerateAlgorithms(int maxCount, std::vector<GemmAlgorithm> &out,
                           std::string &error,
                           int heuristicCount = kDefaultHeuristicCount,
                           GemmEnumStats *stats = nullptr);

  /// Configuration `c` as a runnable algorithm: cublasLtMatmulAlgoInit of
  /// its id, its attributes set, and cublasLtMatmulAlgoCheck's approval
  /// for these descriptors with a workspace <= kWorkspaceBytes. False with
  /// `error` saying which step refused it (an algorithm tuned under another
  /// cuBLASLt or GPU may not exist here). No GPU work.
  bool checkedAlgorithm(const GemmAlgoConfig &c, GemmAlgorithm &out, std::string &error);
  /// Makes `c` (checkedAlgorithm) what run() uses when given no algorithm,
  /// instead of the heuristic's best; false (nothing changed) when it is
  /// refused.
  bool useAlgorithm(const GemmAlgoConfig &c, std::string &error);
  /// The algorithm useAlgorithm set, or null (the heuristic's best).
  const GemmAlgorithm *chosenAlgorithm() const { return hasChosen_ ? &chosen_ : nullptr; }

  /// D = epilogue(alpha op(A) op(B) + beta D [+ bias]) with algorithm
  /// `algo` (an entry of algorithms() or enumerateAlgorithms(); nullptr:
  /// useAlgorithm's, else the heuristic's best).
  /// `bias`: input of the *BIAS epilogues, output of the *BGRAD* ones.
  /// `aux`: output of the *_AUX epilogues, input of DRELU* / DGELU*.
  /// Each must be non-null exactly when the epilogue uses it (an unused one
  /// is ignored).
  bool run(const void *a, const void *b, void *d, const void *bias,
           const void *aux, cudaStream_t stream,
           const cublasLtMatmulAlgo_t *algo, std::string &error);
  /// The same without an aux buffer (epilogues without aux).
  bool run(const void *a, const void *b, void *d, const void *bias,
           cudaStream_t stream, const cublasLtMatmulAlgo_t *algo,
           std::string &error) {
    return run(a, b, d, bias, nullptr, stream, algo, error);
  }

  /// Whether the epilogue uses a bias / bias-gradient pointer, an aux pointer.
  bool usesBias() const { return bias_; }
  bool usesAux() const { return aux_; }
  /// The status of the last cuBLAS call that failed (CUBLAS_STATUS_SUCCESS
  /// if none). A heuristic that found no algorithm reads as
  /// CUBLAS_STATUS_NOT_SUPPORTED: cuBLASLt has no kernel for this
  /// epilogue / layout / type.
  cublasStatus_t lastStatus() const { return status_; }

private:
  void release();
  bool check(cublasStatus_t s, const char *call, std::string &error);
  bool bindPointers(const void *bias, const void *aux, std::string &error);

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr,
                         ld_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  void *workspace_ = nullptr;
  cudaDataType_t typeA_ = CUDA_R_32F, typeB_ = CUDA_R_32F, typeD_ = CUDA_R_32F;
  float alpha_ = 1, beta_ = 0;
  dmrt::Epilogue epilogue_ = dmrt::Epilogue::None;
  bool bias_ = false, aux_ = false, bound_ = false;
  bool addend_ = false; ///< Epilogue::Accumulate: C is the bias pointer, beta 1
  const void *boundBias_ = nullptr, *boundAux_ = nullptr;
  cublasStatus_t status_ = CUBLAS_STATUS_SUCCESS;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
  GemmAlgorithm chosen_;
  bool hasChosen_ = false;
  std::string what_;
};

} // namespace dmrt

#endif // DMRT_GEMMRUNNER_H
