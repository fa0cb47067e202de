//===- GemmEmulator.cpp - CPU emulation of one cublasLtMatmul ----------------===//

#include "tests/support/GemmEmulator.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace dmctest {

using namespace dmrt;

static const double kSqrt2OverPi = 0.7978845608028654;
static const double kCoeff = 0.044715;

double geluTanh(double x) {
  double u = kSqrt2OverPi * (x + kCoeff * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(u));
}

double geluTanhGrad(double x) {
  double u = kSqrt2OverPi * (x + kCoeff * x * x * x);
  double t = std::tanh(u);
  double du = kSqrt2OverPi * (1.0 + 3.0 * kCoeff * x * x);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
}

[[noreturn]] static void die(const std::string &s) {
  std::fprintf(stderr, "emulateMatmul: %s\n", s.c_str());
  std::abort();
}

void emulateMatmul(const GemmDescriptor &g, const float *A, const float *B,
                   const float *C, float *D, float *bias, float *aux) {
  std::string why;
  if (!validateDescriptor(g, why))
    die("invalid descriptor: " + why);
  if (!A || !B || !D || (g.beta != 0 && !C))
    die("null A, B, D, or C with beta != 0");
  Epilogue e = g.epilogue;
  bool readsBias = epilogueReadsBias(e), writesBias = epilogueWritesBias(e);
  bool writesAux = epilogueWritesAux(e), readsAux = epilogueReadsAux(e);
  if ((readsBias || writesBias) && !bias)
    die(std::string("epilogue ") + epilogueName(e) + " needs a bias pointer");
  if ((readsAux || writesAux) && !aux)
    die(std::string("epilogue ") + epilogueName(e) + " needs an aux pointer");

  bool ta = g.transA == dmrt::Transpose::T, tb = g.transB == dmrt::Transpose::T;
  auto opA = [&](int64_t q, int64_t r, int64_t kk) -> double {
    const float *base = A + q * g.a.batchStride;
    return ta ? base[kk + r * g.a.ld] : base[r + kk * g.a.ld];
  };
  auto opB = [&](int64_t q, int64_t kk, int64_t c) -> double {
    const float *base = B + q * g.b.batchStride;
    return tb ? base[c + kk * g.b.ld] : base[kk + c * g.b.ld];
  };

  for (int64_t q = 0; q < g.batchCount; ++q) {
    std::vector<double> rowSum(writesBias ? g.m : 0, 0.0);
    for (int64_t c = 0; c < g.n; ++c) {
      for (int64_t r = 0; r < g.m; ++r) {
        double acc = 0;
        for (int64_t kk = 0; kk < g.k; ++kk)
          acc += opA(q, r, kk) * opB(q, kk, c);
        double t = g.alpha * acc;
        if (g.beta != 0)
          t += g.beta * (double)C[q * g.c.batchStride + r + c * g.c.ld];
        if (readsBias)
          t += bias[q * g.biasBatchStride + r];
        int64_t ai = q * g.auxBatchStride + r + c * g.auxLd;
        switch (e) {
        case Epilogue::Relu:
        case Epilogue::ReluBias:
        case Epilogue::ReluAux:
        case Epilogue::ReluAuxBias:
          if (writesAux)
            aux[ai] = t > 0 ? 1.0f : 0.0f;
          t = t > 0 ? t : 0;
          break;
        case Epilogue::Gelu:
        case Epilogue::GeluBias:
        case Epilogue::GeluAux:
        case Epilogue::GeluAuxBias:
          if (writesAux)
            aux[ai] = (float)t;
          t = geluTanh(t);
          break;
        case Epilogue::DRelu:
        case Epilogue::DReluBGrad:
          t = aux[ai] != 0 ? t : 0;
          break;
        case Epilogue::DGelu:
        case Epilogue::DGeluBGrad:
          t = t * geluTanhGrad(aux[ai]);
          break;
        default:
          break;
        }
        float stored = (float)t;
        D[q * g.d.batchStride + r + c * g.d.ld] = stored;
        if (e == Epilogue::DReluBGrad || e == Epilogue::DGeluBGrad)
          rowSum[r] += stored;
      }
    }
    if (e == Epilogue::DReluBGrad || e == Epilogue::DGeluBGrad)
      for (int64_t r = 0; r < g.m; ++r)
        bias[q * g.biasBatchStride + r] = (float)rowSum[r];
    if (e == Epilogue::BGradA)
      for (int64_t r = 0; r < g.m; ++r) {
        double s = 0;
        for (int64_t kk = 0; kk < g.k; ++kk)
          s += opA(q, r, kk);
        bias[q * g.biasBatchStride + r] = (float)s;
      }
    if (e == Epilogue::BGradB)
      for (int64_t c = 0; c < g.n; ++c) {
        double s = 0;
        for (int64_t kk = 0; kk < g.k; ++kk)
          s += opB(q, kk, c);
        bias[q * g.biasBatchStride + c] = (float)s;
      }
  }
}

} // namespace dmctest
