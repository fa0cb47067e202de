//===- EpilogueCase.h - The cases of the GPU epilogue test ---------*- C++ -*-===//
//
// One case of tests/gpu/GemmEpilogueTest.cpp: an epilogue, a data type, a
// shape, op(A)/op(B), padding and batch strides, alpha and beta, and the
// GemmDescriptor it becomes. Host-only.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_EPILOGUECASE_H
#define DMC_TESTS_GPU_EPILOGUECASE_H

#include "runtime/format/DType.h"
#include "runtime/format/GemmDescriptor.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace dmctest {

using dmrt::DType;
using dmrt::Epilogue;
using dmrt::GemmDescriptor;

inline constexpr Epilogue kEpilogues[] = {
    Epilogue::None,       Epilogue::Bias,        Epilogue::Relu,
    Epilogue::ReluBias,   Epilogue::ReluAux,     Epilogue::ReluAuxBias,
    Epilogue::Gelu,       Epilogue::GeluBias,    Epilogue::GeluAux,
    Epilogue::GeluAuxBias, Epilogue::DRelu,      Epilogue::DReluBGrad,
    Epilogue::DGelu,      Epilogue::DGeluBGrad,  Epilogue::BGradA,
    Epilogue::BGradB,
};

struct Options {
  std::string only;
  int algos = 3;
  bool verbose = false, strict = false;
  bool emulated = false, corrupt = false; // checks of the check, no GPU
  /// --emulated-device=unsupported:NAME: every case of epilogue NAME is
  /// reported unsupported, as by a cuBLASLt without it (checks the summary).
  std::string unsupported;
};

/// Elements a strided-batched column-major matrix spans.
inline int64_t span(const dmrt::MatrixLayout &l) {
  return (int64_t)(l.batchCount - 1) * l.batchStride + l.ld * l.cols;
}

inline int64_t roundUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

struct Case {
  Epilogue epi;
  DType dtype;
  int64_t m, n, k;
  int32_t batch;
  bool ta, tb, pad, perBatchBias;
  double alpha, beta;

  std::string name() const {
    std::ostringstream os;
    os << dmrt::epilogueName(epi) << " " << (dtype == DType::BF16 ? "bf16" : "f32")
       << " m=" << m << " n=" << n << " k=" << k << " batch=" << batch
       << " op=" << (ta ? 'T' : 'N') << (tb ? 'T' : 'N') << " alpha=" << alpha
       << " beta=" << beta << (pad ? " padded" : " packed");
    if (batch > 1 && (dmrt::epilogueReadsBias(epi) ||
                      dmrt::epilogueWritesBias(epi)))
      os << (perBatchBias ? " bias/batch" : " bias shared");
    return os.str();
  }
};

inline GemmDescriptor makeDescriptor(const Case &c) {
  GemmDescriptor g;
  g.transA = c.ta ? dmrt::Transpose::T : dmrt::Transpose::N;
  g.transB = c.tb ? dmrt::Transpose::T : dmrt::Transpose::N;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.batchCount = c.batch;
  auto mat = [&](int64_t rows, int64_t cols) {
    dmrt::MatrixLayout l;
    l.rows = rows;
    l.cols = cols;
    l.ld = rows + (c.pad ? 8 : 0); // keeps 16-byte aligned columns
    l.batchCount = c.batch;
    l.batchStride = l.ld * cols + (c.pad ? 64 : 0);
    return l;
  };
  g.a = c.ta ? mat(c.k, c.m) : mat(c.m, c.k);
  g.b = c.tb ? mat(c.n, c.k) : mat(c.k, c.n);
  g.d = mat(c.m, c.n);
  g.c = g.d;
  g.alpha = c.alpha;
  g.beta = c.beta;
  g.epilogue = c.epi;
  bool readsBias = dmrt::epilogueReadsBias(c.epi);
  bool writesBias = dmrt::epilogueWritesBias(c.epi);
  if (readsBias || writesBias) {
    g.biasLength = c.epi == Epilogue::BGradB ? c.n : c.m;
    // A bias gradient is one vector per batch (the mapping never reduces
    // over the batch); an input bias may be shared or per batch.
    g.biasBatchStride =
        c.batch > 1 && (writesBias || c.perBatchBias) ? g.biasLength : 0;
  }
  if (dmrt::epilogueWritesAux(c.epi) || dmrt::epilogueReadsAux(c.epi)) {
    int64_t align = dmrt::epilogueIsRelu(c.epi) ? 128 : 8;
    g.auxLd = roundUp(c.m, align) + (c.pad ? align : 0);
    g.auxBatchStride = c.batch > 1 ? g.auxLd * c.n + (c.pad ? align : 0) : 0;
  }
  return g;
}

} // namespace dmctest

#endif // DMC_TESTS_GPU_EPILOGUECASE_H
