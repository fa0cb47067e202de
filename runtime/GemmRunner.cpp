//===- GemmRunner.cpp - One contraction as one cublasLtMatmul -------------===//
#include "runtime/GemmRunner.h"

#include <algorithm>

namespace dmrt {

cublasLtEpilogue_t toCublasLt(Epilogue e) {
  switch (e) {
  case Epilogue::None: return CUBLASLT_EPILOGUE_DEFAULT;
  case Epilogue::Bias: return CUBLASLT_EPILOGUE_BIAS;
  case Epilogue::Relu: return CUBLASLT_EPILOGUE_RELU;
  case Epilogue::ReluBias: return CUBLASLT_EPILOGUE_RELU_BIAS;
  case Epilogue::ReluAux: return CUBLASLT_EPILOGUE_RELU_AUX;
  case Epilogue::ReluAuxBias: return CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
  case Epilogue::Gelu: return CUBLASLT_EPILOGUE_GELU;
  case Epilogue::GeluBias: return CUBLASLT_EPILOGUE_GELU_BIAS;
  case Epilogue::GeluAux: return CUBLASLT_EPILOGUE_GELU_AUX;
  case Epilogue::GeluAuxBias: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  case Epilogue::DRelu: return CUBLASLT_EPILOGUE_DRELU;
  case Epilogue::DReluBGrad: return CUBLASLT_EPILOGUE_DRELU_BGRAD;
  case Epilogue::DGelu: return CUBLASLT_EPILOGUE_DGELU;
  case Epilogue::DGeluBGrad: return CUBLASLT_EPILOGUE_DGELU_BGRAD;
  case Epilogue::BGradA: return CUBLASLT_EPILOGUE_BGRADA;
  case Epilogue::BGradB: return CUBLASLT_EPILOGUE_BGRADB;
  case Epilogue::Accumulate: return CUBLASLT_EPILOGUE_DEFAULT; // beta = 1, C = addend
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

cublasOperation_t toCublasLt(Transpose t) {
  return t == Transpose::T ? CUBLAS_OP_T : CUBLAS_OP_N;
}

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

int64_t GemmRunner::auxBytes(const dmrt::GemmDescriptor &g, DType typeD) {
  int64_t n = g.auxSize();
  if (n <= 0)
    return 0;
  if (dmrt::epilogueIsRelu(g.epilogue))
    return (n + 127) / 128 * 16; // bits, in whole 128-bit words
  return n * static_cast<int64_t>(dtypeSize(typeD));
}

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
  epilogue_ = dmrt::Epilogue::None;
  bias_ = aux_ = bound_ = addend_ = false;
  boundBias_ = boundAux_ = nullptr;
  status_ = CUBLAS_STATUS_SUCCESS;
  algos_.clear();
  hasChosen_ = false;
}

bool GemmRunner::check(cublasStatus_t s, const char *call, std::string &error) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return true;
  status_ = s;
  error = std::string(call) + " failed: " + cublasStatusName(s) + " (" +
          cublasLtGetStatusString(s) + ") for " + what_;
  return false;
}

bool GemmRunner::init(cublasLtHandle_t handle, const dmrt::GemmDescriptor &g,
                      DType typeA, DType typeB, DType typeD, DType biasType,
                      void *workspace, std::string &error) {
  release();
  handle_ = handle;
  workspace_ = workspace;
  what_ = g.describe();
  const char *epiName = dmrt::epilogueName(g.epilogue);
  std::string why;
  if (!dmrt::validateDescriptor(g, why)) {
    error = "invalid descriptor (" + why + ") for " + what_;
    return false;
  }
  cudaDataType_t ta, tb, td, tbias = CUDA_R_32F;
  if (!toCudaDataType(typeA, ta) || !toCudaDataType(typeB, tb) ||
      !toCudaDataType(typeD, td)) {
    error = std::string("unsupported operand types A=") + dtypeName(typeA) +
            " B=" + dtypeName(typeB) + " D=" + dtypeName(typeD) + " for " + what_;
    return false;
  }
  typeA_ = ta;
  typeB_ = tb;
  typeD_ = td;
  epilogue_ = g.epilogue;
  bias_ = dmrt::epilogueReadsBias(g.epilogue) ||
          dmrt::epilogueWritesBias(g.epilogue);
  aux_ = dmrt::epilogueWritesAux(g.epilogue) ||
         dmrt::epilogueReadsAux(g.epilogue);
  if (bias_ && !toCudaDataType(biasType, tbias)) {
    error = std::string("unsupported bias type ") + dtypeName(biasType) +
            " for epilogue " + epiName + " (bf16, f16 or f32) for " + what_;
    return false;
  }
  cublasLtEpilogue_t epi = toCublasLt(g.epilogue);
  alpha_ = static_cast<float>(g.alpha);
  beta_ = static_cast<float>(g.beta);
  addend_ = dmrt::epilogueReadsAddend(g.epilogue);
  if (addend_ && g.beta != 0) {
    error = "epilogue ACCUMULATE reads its addend as C: beta must be 0 in the descriptor, got " +
            std::to_string(g.beta) + " for " + what_;
    return false;
  }
  if (addend_)
    beta_ = 1;
  cublasOperation_t opA = toCublasLt(g.transA), opB = toCublasLt(g.transB);
  // "cublasLtMatmulDescSetAttribute(X)" for epilogue attributes.
  auto setAttr = [&](cublasLtMatmulDescAttributes_t attr, const void *buf,
                     size_t size, const char *name) {
    std::string call =
        std::string("cublasLtMatmulDescSetAttribute(") + name + ")";
    return check(cublasLtMatmulDescSetAttribute(op_, attr, buf, size),
                 call.c_str(), error);
  };
  if (!check(cublasLtMatmulDescCreate(&op_, kComputeType, kScaleType),
             "cublasLtMatmulDescCreate", error) ||
      !setAttr(CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA), "TRANSA") ||
      !setAttr(CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB), "TRANSB") ||
      !setAttr(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi), "EPILOGUE"))
    return false;
  if (bias_) {
    int64_t bs = g.biasBatchStride;
    if (!setAttr(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &tbias, sizeof(tbias),
                 "BIAS_DATA_TYPE") ||
        !setAttr(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bs, sizeof(bs),
                 "BIAS_BATCH_STRIDE"))
      return false;
  }
  if (aux_) {
    int64_t auxLd = g.auxLd, auxBs = g.auxBatchStride;
    if (!setAttr(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &auxLd, sizeof(auxLd),
                 "EPILOGUE_AUX_LD") ||
        !setAttr(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &auxBs,
                 sizeof(auxBs), "EPILOGUE_AUX_BATCH_STRIDE"))
      return false;
    // CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE stays at its default (-1):
    // the ReLU aux is a bit-mask, and the GELU input is stored in D's type.
    // cuBLASLt accepts another aux type only for FP8 kernels and documents
    // that otherwise the attribute "should be left unset or set to the
    // default value of -1" (else cublasLtMatmul fails with INVALID_VALUE).
  }
  auto layout = [&](cublasLtMatrixLayout_t &l, cudaDataType_t t,
                    const dmrt::MatrixLayout &m, const char *name) {
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

bool GemmRunner::bindPointers(const void *bias, const void *aux,
                              std::string &error) {
  if (bias_ && (!bound_ || bias != boundBias_)) {
    if (!check(cublasLtMatmulDescSetAttribute(
                   op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
               "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", error))
      return false;
    boundBias_ = bias;
  }
  if (aux_ && (!bound_ || aux != boundAux_)) {
    if (!check(cublasLtMatmulDescSetAttribute(
                   op_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux,
                   sizeof(aux)),
               "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_POINTER)", error))
      return false;
    boundAux_ = aux;
  }
  bound_ = true;
  return true;
}

bool GemmRunner::algorithms(int k,
                            std::vector<cublasLtMatmulHeuristicResult_t> &out,
                            std::string &error) {
  if (!op_) {
    error = "GemmRunner::algorithms before init";
    return false;
  }
  // The heuristic looks at the bias / aux pointers' alignment: until run()
  // binds the real ones, stand in a device address that is 256-byte aligned
  // (the workspace; never dereferenced by the heuristic).
  if (!bound_ && (bias_ || aux_) && workspace_ &&
      !bindPointers(workspace_, workspace_, error))
    return false;
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
    status_ = CUBLAS_STATUS_NOT_SUPPORTED;
    error = "cublasLtMatmulAlgoGetHeuristic found no algorithm for " + what_;
    return false;
  }
  return true;
}

bool GemmRunner::run(const void *a, const void *b, void *d, const void *bias,
                     const void *aux, cudaStream_t stream,
                     const cublasLtMatmulAlgo_t *algo, std::string &error) {
  if (!op_) {
    error = "GemmRunner::run before init";
    return false;
  }
  const char *epiName = dmrt::epilogueName(epilogue_);
  if (bias_ && !bias) {
    error = std::string("epilogue ") + epiName + " needs a bias " +
            (dmrt::epilogueWritesBias(epilogue_) ? "gradient (output)"
                                                   : "(input)") +
            " pointer for " + what_;
    return false;
  }
  if (addend_ && !bias) {
    error = "epilogue ACCUMULATE needs its addend (the bias pointer, C) for " + what_;
    return false;
  }
  if (aux_ && !aux) {
    error = std::string("epilogue ") + epiName + " needs an aux " +
            (dmrt::epilogueWritesAux(epilogue_) ? "(output)" : "(input)") +
            " pointer for " + what_;
    return false;
  }
  if (!bindPointers(bias_ ? bias : nullptr, aux_ ? aux : nullptr, error))
    return false;
  if (!algo && hasChosen_)
    algo = &chosen_.algo;
  if (!algo) {
    // The heuristic's best, asked once (no vector per run once it is known).
    std::vector<cublasLtMatmulHeuristicResult_t> best;
    if (algos_.empty() && !algorithms(1, best, error))
      return false;
    algo = &algos_[0].algo;
  }
  // C is D itself (beta 0, or an in-place beta) or the addend.
  const void *c = addend_ ? bias : d;
  return check(cublasLtMatmul(handle_, op_, &alpha_, a, la_, b, lb_, &beta_, c,
                              lc_, d, ld_, algo, workspace_, kWorkspaceBytes,
                              stream),
               "cublasLtMatmul", error);
}

} // namespace dmrt
