//===- GemmRunner.cpp - One contraction as one cublasLtMatmul -------------===//
#include "runtime/GemmRunner.h"

#include <algorithm>

namespace dmrt {

bool toCudaDataType(DType t, cudaDataType_t &out) {
  switch (t) {
  case DType::BF16: out = CUDA_R_16BF; return true;
  case DType::F16: out = CUDA_R_16F; return true;
  case DType::F32: out = CUDA_R_32F; return true;
  default: return false;
  }
}

const char *cublasStatusName(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  default: return "CUBLAS_STATUS_(unknown)";
  }
}

GemmRunner::~GemmRunner() { release(); }

void GemmRunner::release() {
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  if (la_) cublasLtMatrixLayoutDestroy(la_);
  if (lb_) cublasLtMatrixLayoutDestroy(lb_);
  if (lc_) cublasLtMatrixLayoutDestroy(lc_);
  if (ld_) cublasLtMatrixLayoutDestroy(ld_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  pref_ = nullptr;
  la_ = lb_ = lc_ = ld_ = nullptr;
  op_ = nullptr;
  algos_.clear();
}

bool GemmRunner::check(cublasStatus_t s, const char *call,
                       std::string &error) const {
  if (s == CUBLAS_STATUS_SUCCESS)
    return true;
  error = std::string(call) + " failed: " + cublasStatusName(s) + " (" +
          cublasLtGetStatusString(s) + ") for " + what_;
  return false;
}

bool GemmRunner::init(cublasLtHandle_t handle, const dmcgen::GemmDescriptor &g,
                      DType typeA, DType typeB, DType typeD, DType biasType,
                      void *workspace, std::string &error) {
  release();
  handle_ = handle;
  workspace_ = workspace;
  what_ = g.describe();
  cudaDataType_t ta, tb, td, tbias = CUDA_R_32F;
  if (!toCudaDataType(typeA, ta) || !toCudaDataType(typeB, tb) ||
      !toCudaDataType(typeD, td)) {
    error = std::string("unsupported operand types A=") + dtypeName(typeA) +
            " B=" + dtypeName(typeB) + " D=" + dtypeName(typeD) + " for " + what_;
    return false;
  }
  cublasLtEpilogue_t epi;
  switch (g.epilogue) {
  case dmcgen::Epilogue::None: epi = CUBLASLT_EPILOGUE_DEFAULT; break;
  case dmcgen::Epilogue::Bias:
    epi = CUBLASLT_EPILOGUE_BIAS;
    bias_ = true;
    if (!toCudaDataType(biasType, tbias)) {
      error = std::string("unsupported bias type ") + dtypeName(biasType);
      return false;
    }
    break;
  default:
    error = std::string("epilogue ") + dmcgen::epilogueName(g.epilogue) +
            " is not supported by the runner yet (only DEFAULT and BIAS)";
    return false;
  }
  alpha_ = static_cast<float>(g.alpha);
  beta_ = static_cast<float>(g.beta);
  cublasOperation_t opA = g.transA, opB = g.transB;
  if (!check(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
             "cublasLtMatmulDescCreate", error) ||
      !check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                            sizeof(opA)),
             "cublasLtMatmulDescSetAttribute(TRANSA)", error) ||
      !check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                            sizeof(opB)),
             "cublasLtMatmulDescSetAttribute(TRANSB)", error) ||
      !check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                            &epi, sizeof(epi)),
             "cublasLtMatmulDescSetAttribute(EPILOGUE)", error))
    return false;
  if (bias_) {
    int64_t bs = g.biasBatchStride;
    if (!check(cublasLtMatmulDescSetAttribute(
                   op_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &tbias, sizeof(tbias)),
               "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)", error) ||
        !check(cublasLtMatmulDescSetAttribute(
                   op_, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bs, sizeof(bs)),
               "cublasLtMatmulDescSetAttribute(BIAS_BATCH_STRIDE)", error))
      return false;
  }
  auto layout = [&](cublasLtMatrixLayout_t &l, cudaDataType_t t,
                    const dmcgen::MatrixLayout &m, const char *name) {
    std::string call = std::string("cublasLtMatrixLayoutCreate(") + name + ")";
    if (!check(cublasLtMatrixLayoutCreate(&l, t, m.rows, m.cols, m.ld),
               call.c_str(), error))
      return false;
    int32_t count = m.batchCount;
    int64_t stride = m.batchStride;
    call = std::string("cublasLtMatrixLayoutSetAttribute(") + name + ", BATCH)";
    return check(cublasLtMatrixLayoutSetAttribute(
                     l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                 call.c_str(), error) &&
           check(cublasLtMatrixLayoutSetAttribute(
                     l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                     sizeof(stride)),
                 call.c_str(), error);
  };
  if (!layout(la_, ta, g.a, "A") || !layout(lb_, tb, g.b, "B") ||
      !layout(lc_, td, g.c, "C") || !layout(ld_, td, g.d, "D"))
    return false;
  size_t ws = kWorkspaceBytes;
  return check(cublasLtMatmulPreferenceCreate(&pref_),
               "cublasLtMatmulPreferenceCreate", error) &&
         check(cublasLtMatmulPreferenceSetAttribute(
                   pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)", error);
}

bool GemmRunner::algorithms(int k,
                            std::vector<cublasLtMatmulHeuristicResult_t> &out,
                            std::string &error) {
  if (!op_) {
    error = "GemmRunner::algorithms before init";
    return false;
  }
  if (static_cast<int>(algos_.size()) < k) {
    std::vector<cublasLtMatmulHeuristicResult_t> res(k);
    int found = 0;
    if (!check(cublasLtMatmulAlgoGetHeuristic(handle_, op_, la_, lb_, lc_, ld_,
                                              pref_, k, res.data(), &found),
               "cublasLtMatmulAlgoGetHeuristic", error))
      return false;
    res.resize(found);
    algos_ = res;
  }
  out.assign(algos_.begin(),
             algos_.begin() + std::min<size_t>(algos_.size(), k));
  if (out.empty()) {
    error = "cublasLtMatmulAlgoGetHeuristic found no algorithm for " + what_;
    return false;
  }
  return true;
}

bool GemmRunner::run(const void *a, const void *b, void *d, const void *bias,
                     cudaStream_t stream, const cublasLtMatmulAlgo_t *algo,
                     std::string &error) {
  if (!algo) {
    std::vector<cublasLtMatmulHeuristicResult_t> best;
    if (!algorithms(1, best, error))
      return false;
    algo = &algos_[0].algo;
  }
  if (bias_) {
    if (!bias) {
      error = "BIAS epilogue without a bias pointer for " + what_;
      return false;
    }
    if (!check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                              &bias, sizeof(bias)),
               "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", error))
      return false;
  }
  return check(cublasLtMatmul(handle_, op_, &alpha_, a, la_, b, lb_, &beta_, d,
                              lc_, d, ld_, algo, workspace_, kWorkspaceBytes,
                              stream),
               "cublasLtMatmul", error);
}

} // namespace dmrt
