//===- GemmRunner.h - One contraction as one cublasLtMatmul -------*- C++ -*-===//
//
// Runs a dmcgen::GemmDescriptor with cuBLASLt: compute CUBLAS_COMPUTE_32F,
// scale CUDA_R_32F, A/B/C/D types from the tensors' dtypes, column-major
// strided-batched layouts, transa/transb, epilogue DEFAULT or BIAS (others
// are reported unsupported), 32 MiB workspace. Algorithms come from
// cublasLtMatmulAlgoGetHeuristic; `algorithms(k)` exposes the top k so a tuner
// can time each. Every cuBLAS failure becomes a message naming the call.
//
// Operands are the *cuBLASLt* operands: when the descriptor has swapOperands,
// the caller passes tensor b as `a` and tensor a as `b`.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_GEMMRUNNER_H
#define DMRT_GEMMRUNNER_H

#include "codegen/gemm/GemmMapping.h"
#include "runtime/Safetensors.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace dmrt {

/// DType -> cudaDataType (bf16, f16, f32); false for others.
bool toCudaDataType(DType t, cudaDataType_t &out);
/// "CUBLAS_STATUS_X" for a status.
const char *cublasStatusName(cublasStatus_t s);

class GemmRunner {
public:
  static constexpr size_t kWorkspaceBytes = 32u << 20;

  GemmRunner() = default;
  ~GemmRunner();
  GemmRunner(const GemmRunner &) = delete;
  GemmRunner &operator=(const GemmRunner &) = delete;

  /// Creates the descriptors. typeA/typeB: the cuBLASLt operands' dtypes
  /// (after the swap); typeD also for C; biasType for the bias vector.
  /// `handle` and `workspace` (kWorkspaceBytes) are owned by the caller.
  bool init(cublasLtHandle_t handle, const dmcgen::GemmDescriptor &g,
            DType typeA, DType typeB, DType typeD, DType biasType,
            void *workspace, std::string &error);

  /// Up to k heuristic algorithms, best first (cached after the first call).
  bool algorithms(int k, std::vector<cublasLtMatmulHeuristicResult_t> &out,
                  std::string &error);

  /// D = epilogue(alpha op(A) op(B) + beta D [+ bias]) with algorithm
  /// `algo` (an entry of algorithms(); nullptr: the heuristic's best).
  bool run(const void *a, const void *b, void *d, const void *bias,
           cudaStream_t stream, const cublasLtMatmulAlgo_t *algo,
           std::string &error);

private:
  void release();
  bool check(cublasStatus_t s, const char *call, std::string &error) const;

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr,
                         ld_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  void *workspace_ = nullptr;
  float alpha_ = 1, beta_ = 0;
  bool bias_ = false;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
  std::string what_;
};

} // namespace dmrt

#endif // DMRT_GEMMRUNNER_H
