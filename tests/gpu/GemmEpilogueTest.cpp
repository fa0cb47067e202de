//===- GemmEpilogueTest.cpp - GemmRunner epilogues vs the CPU emulator -----===//
//
// GPU test (label gpu). For every epilogue of dmrt::Epilogue, small shapes
// (m in {64,128}, n = 96, k in {32,80}, batch 1 and 2), opA/opB N and T, bf16
// and fp32 data, with and without padded leading dimensions / batch strides,
// beta 0 and 0.5: builds a GemmDescriptor (validateDescriptor decides which
// are valid), fills A, B, C (= D's initial contents), bias and the aux input
// with seeded random values, runs dmrt::GemmRunner with each of the
// heuristic's first algorithms and compares D, the aux output (ReLU bit-mask
// or GELU input) and the bias gradient with dmctest::emulateMatmul.
//
// Tolerances: |gpu - ref| <= rtol * (|ref| + 0.5 * max(1, max|ref|)) with
// rtol 2e-2 for bf16 data, 2e-3 for fp32 (cuBLASLt's GELU is the tanh
// approximation, as the emulator's, but may use fast tanh); a ReLU aux bit may
// differ only where the pre-activation is within that tolerance of 0; a bias
// gradient within rtolSum * (|ref| + the sum of the magnitudes it adds up),
// rtolSum 1e-2 for bf16, 2e-3 for fp32. The padding of D (rows m..ld) must
// be left untouched.
//
// A configuration cuBLASLt has no kernel for (the heuristic says
// CUBLAS_STATUS_NOT_SUPPORTED or finds no algorithm) is counted as
// unsupported, not as a failure; the summary lists them per epilogue and
// counts them ("SUMMARY: N cases ran, M unsupported by this cuBLASLt, ...").
// Any other error, or a mismatch, fails the test; so does a run in which no
// case ran at all, or in which an epilogue dmc proposes (DEFAULT included;
// EpilogueSummary.h requiredEpilogues) never ran: it never passes vacuously.
//
// Exit status: 0 pass, 1 fail, 77 no GPU (ctest SKIP_RETURN_CODE).
// Options: --epilogue NAME (only that one, e.g. RELU_AUX), --algos N (how
// many heuristic algorithms per case, default 3), --verbose (a line per case),
// --strict (also fail when an epilogue has no supported case at all),
// --emulated-device (no GPU: checks the check itself, with the emulator's
// results, in device layout and types, standing in for the GPU's; every case
// must pass), --emulated-device=corrupt (the same with one element of each
// case's results made wrong; every case must fail),
// --emulated-device=unsupported:NAME (the same, with every case of epilogue
// NAME reported unsupported: checks the summary's verdict).
//
//===----------------------------------------------------------------------===//
#include "EpilogueSummary.h"
#include "GpuTestDevice.h"
#include "tests/support/GemmEmulator.h"
#include "runtime/format/GemmDescriptor.h"
#include "runtime/format/device/Float16.h"
#include "runtime/GemmRunner.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using dmrt::Epilogue;
using dmrt::GemmDescriptor;
using dmrt::DType;

namespace {

const Epilogue kEpilogues[] = {
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

/// One device allocation, freed on scope exit.
struct DevBuf {
  void *p = nullptr;
  size_t bytes = 0;
  DevBuf() = default;
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  ~DevBuf() {
    if (p)
      cudaFree(p);
  }
};

/// Throws-free CUDA error handling: a failed CUDA runtime call aborts the
/// whole test (the device is not usable), with the call named.
#define CUDA_OK(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "FATAL: %s failed: %s (%s) at %s:%d\n", #call,       \
                   cudaGetErrorName(e_), cudaGetErrorString(e_), __FILE__,      \
                   __LINE__);                                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

void alloc(DevBuf &b, size_t bytes) {
  b.bytes = std::max<size_t>(bytes, 16);
  CUDA_OK(cudaMalloc(&b.p, b.bytes));
}

size_t elemSize(DType t) { return t == DType::F32 ? 4 : 2; }

/// Rounds host values to what `t` can hold (bf16: round to nearest even), so
/// the emulator sees exactly the device's inputs.
void quantize(std::vector<float> &v, DType t) {
  if (t == DType::BF16)
    for (float &x : v)
      x = dmrt::bf16ToFloat(dmrt::floatToBf16(x));
}

std::vector<uint8_t> toDevice(const std::vector<float> &v, DType t) {
  std::vector<uint8_t> out(v.size() * elemSize(t));
  if (t == DType::F32) {
    if (!v.empty())
      std::memcpy(out.data(), v.data(), out.size());
  } else {
    for (size_t i = 0; i < v.size(); ++i) {
      uint16_t h = dmrt::floatToBf16(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

float fromDevice(const std::vector<uint8_t> &bytes, size_t i, DType t) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * i, 2);
  return dmrt::bf16ToFloat(h);
}

void upload(DevBuf &b, const std::vector<uint8_t> &host) {
  if (!host.empty())
    CUDA_OK(cudaMemcpy(b.p, host.data(), host.size(), cudaMemcpyHostToDevice));
}

std::vector<uint8_t> download(const DevBuf &b, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  if (bytes)
    CUDA_OK(cudaMemcpy(host.data(), b.p, bytes, cudaMemcpyDeviceToHost));
  return host;
}

/// Elements a strided-batched column-major matrix spans.
int64_t span(const dmrt::MatrixLayout &l) {
  return (int64_t)(l.batchCount - 1) * l.batchStride + l.ld * l.cols;
}

int64_t roundUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

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

GemmDescriptor makeDescriptor(const Case &c) {
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

/// The comparison state of one case (one algorithm).
struct Checker {
  std::string what;
  int errors = 0;
  double worst = 0; // max |err| / tol
  std::vector<std::string> lines;

  void fail(const std::string &s) {
    if (++errors <= 8)
      lines.push_back(s);
  }
  bool near(const char *array, int64_t idx, double got, double ref, double tol) {
    double err = std::fabs(got - ref);
    if (!(err <= tol)) { // NaN fails too
      std::ostringstream os;
      os << array << "[" << idx << "]: got " << got << ", want " << ref
         << " (|err| " << err << " > tol " << tol << ")";
      fail(os.str());
      return false;
    }
    if (tol > 0)
      worst = std::max(worst, err / tol);
    return true;
  }
};

double maxAbs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v)
    m = std::max(m, (double)std::fabs(x));
  return m;
}

using Stats = dmc::test::EpilogueStats;

class Tester {
public:
  Tester(const Options &opt, cublasLtHandle_t lt, void *workspace,
         cudaStream_t stream)
      : opt_(opt), lt_(lt), workspace_(workspace), stream_(stream) {}

  void runCase(const Case &c, uint64_t seed, Stats &st);

private:
  const Options &opt_;
  cublasLtHandle_t lt_;
  void *workspace_;
  cudaStream_t stream_;
};

void Tester::runCase(const Case &c, uint64_t seed, Stats &st) {
  GemmDescriptor g = makeDescriptor(c);
  std::string why;
  if (!dmrt::validateDescriptor(g, why)) {
    ++st.invalid;
    if (opt_.verbose)
      std::printf("  invalid   %s: %s\n", c.name().c_str(), why.c_str());
    return;
  }
  const Epilogue e = c.epi;
  const DType dt = c.dtype;
  if (opt_.emulated && opt_.unsupported == dmrt::epilogueName(e)) {
    ++st.unsupported;
    st.unsupportedCases.push_back(c.name());
    return;
  }
  const bool readsBias = dmrt::epilogueReadsBias(e);
  const bool writesBias = dmrt::epilogueWritesBias(e);
  const bool writesAux = dmrt::epilogueWritesAux(e);
  const bool readsAux = dmrt::epilogueReadsAux(e);
  const bool relu = dmrt::epilogueIsRelu(e);

  // Host data (float, rounded to the device type).
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::vector<float> &v, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (float &x : v)
      x = (float)u(rng);
    quantize(v, dt);
  };
  // A, B such that sum_k a*b has a standard deviation near 1.2.
  double w = std::sqrt(3.0 * std::sqrt(1.5 / (double)c.k));
  std::vector<float> A(span(g.a)), B(span(g.b)), C(span(g.d));
  uniform(A, -w, w);
  uniform(B, -w, w);
  uniform(C, -1, 1); // D's initial contents: C when beta != 0, else ignored
  int64_t biasCount = 0;
  if (readsBias || writesBias)
    biasCount = (int64_t)(c.batch - 1) * g.biasBatchStride + g.biasLength;
  std::vector<float> bias(biasCount);
  if (readsBias)
    uniform(bias, -0.5, 0.5);
  else
    std::fill(bias.begin(), bias.end(), 0.0f);
  int64_t auxCount = g.auxSize();
  int64_t auxBytes = dmrt::GemmRunner::auxBytes(g, dt);
  std::vector<float> aux(auxCount, 0.0f);       // emulator's view
  std::vector<uint8_t> auxDev(auxBytes, 0);     // device bytes
  if (readsAux) {
    if (relu) {
      for (uint8_t &byte : auxDev)
        byte = (uint8_t)(rng() & 0xFF);
      for (int64_t i = 0; i < auxCount; ++i)
        aux[i] = (auxDev[i / 8] >> (i % 8)) & 1 ? 1.0f : 0.0f;
    } else {
      uniform(aux, -3, 3); // GELU inputs
      auxDev = toDevice(aux, dt);
    }
  }

  // Reference.
  std::vector<float> Dref(C), biasRef(bias), auxRef(aux);
  dmctest::emulateMatmul(g, A.data(), B.data(), C.data(), Dref.data(),
                        biasRef.empty() ? nullptr : biasRef.data(),
                        auxRef.empty() ? nullptr : auxRef.data());
  // ReLU aux: the pre-activation, to excuse bits whose sign is a rounding tie.
  std::vector<float> pre;
  if (writesAux && relu) {
    GemmDescriptor gp = g;
    gp.epilogue = readsBias ? Epilogue::Bias : Epilogue::None;
    gp.auxLd = gp.auxBatchStride = 0;
    pre = C;
    std::vector<float> biasCopy(bias);
    dmctest::emulateMatmul(gp, A.data(), B.data(), C.data(), pre.data(),
                          biasCopy.empty() ? nullptr : biasCopy.data(), nullptr);
  }
  // BGRADA / BGRADB: the sums of magnitudes, for the tolerance.
  std::vector<float> biasMag;
  if (e == Epilogue::BGradA || e == Epilogue::BGradB) {
    std::vector<float> absA(A), absB(B), Dtmp(C);
    for (float &x : absA)
      x = std::fabs(x);
    for (float &x : absB)
      x = std::fabs(x);
    biasMag.assign(biasCount, 0.0f);
    dmctest::emulateMatmul(g, absA.data(), absB.data(), C.data(), Dtmp.data(),
                          biasMag.data(), nullptr);
  }

  const double rtol = dt == DType::BF16 ? 2e-2 : 2e-3;
  // Bias gradients: per added term (bf16: the rounding of D, 2^-9, and of
  // the activation's fast approximations).
  const double rtolSum = dt == DType::BF16 ? 1e-2 : 2e-3;
  const double dScale = 0.5 * std::max(1.0, maxAbs(Dref));
  const double auxScale = 0.5 * std::max(1.0, maxAbs(auxRef));
  std::vector<uint8_t> hA = toDevice(A, dt), hB = toDevice(B, dt),
                       hC = toDevice(C, dt), hBias = toDevice(bias, dt);
  auto dTol = [&](double ref) { return rtol * (std::fabs(ref) + dScale); };
  // The ReLU pre-activation of (q, r, col) (D's layout) and whether it is so
  // close to 0 that its aux bit may go either way.
  auto preAt = [&](int64_t q, int64_t r, int64_t col) {
    return pre[q * g.d.batchStride + r + col * g.d.ld];
  };
  auto reluTie = [&](int64_t q, int64_t r, int64_t col) {
    return std::fabs(preAt(q, r, col)) <= rtol * dScale;
  };
  // Magnitude of the terms bias gradient element i adds up.
  auto biasMagAt = [&](int64_t q, int64_t r) {
    if (e == Epilogue::BGradA || e == Epilogue::BGradB)
      return (double)biasMag[q * g.biasBatchStride + r];
    double mag = 0; // the row sum of D
    for (int64_t col = 0; col < c.n; ++col)
      mag += std::fabs(Dref[q * g.d.batchStride + r + col * g.d.ld]);
    return mag;
  };
  auto biasTol = [&](double ref, double mag) {
    return rtolSum * (std::fabs(ref) + mag) + 1e-6;
  };

  // Compares one run's D, aux and bias bytes (device layout) with the
  // reference.
  auto check = [&](const std::vector<uint8_t> &gotD,
                   const std::vector<uint8_t> &gotAux,
                   const std::vector<uint8_t> &gotBias, Checker &chk) {
    // D inside the matrix; its padding (rows m..ld) untouched.
    for (int64_t q = 0; q < c.batch; ++q)
      for (int64_t col = 0; col < c.n; ++col)
        for (int64_t r = 0; r < g.d.ld; ++r) {
          int64_t i = q * g.d.batchStride + r + col * g.d.ld;
          if (r < c.m) {
            chk.near("D", i, fromDevice(gotD, i, dt), Dref[i], dTol(Dref[i]));
          } else if (std::memcmp(gotD.data() + i * elemSize(dt),
                                 hC.data() + i * elemSize(dt),
                                 elemSize(dt)) != 0) {
            std::ostringstream os;
            os << "D padding [" << i << "] (row " << r << " >= m) was written";
            chk.fail(os.str());
          }
        }
    if (writesAux) {
      int lsbBad = 0, msbBad = 0;
      for (int64_t q = 0; q < c.batch; ++q)
        for (int64_t col = 0; col < c.n; ++col)
          for (int64_t r = 0; r < c.m; ++r) {
            int64_t i = q * g.auxBatchStride + r + col * g.auxLd;
            if (relu) {
              int lsb = (gotAux[i / 8] >> (i % 8)) & 1;
              int msb = (gotAux[i / 8] >> (7 - i % 8)) & 1;
              int want = auxRef[i] != 0 ? 1 : 0;
              // A bit may differ only where the pre-activation is ~0.
              bool tie = reluTie(q, r, col);
              if (msb != want && !tie)
                ++msbBad;
              if (lsb != want && !tie) {
                ++lsbBad;
                std::ostringstream os;
                os << "ReLU aux bit " << i << " (batch " << q << ", row " << r
                   << ", col " << col << "): got " << lsb << ", want " << want
                   << " (pre-activation " << preAt(q, r, col) << ")";
                chk.fail(os.str());
              }
            } else {
              double ref = auxRef[i];
              chk.near("GELU aux", i, fromDevice(gotAux, i, dt), ref,
                       rtol * (std::fabs(ref) + auxScale));
            }
          }
      if (relu && lsbBad > 0 && msbBad == 0)
        chk.fail("note: the ReLU bit-mask matches when read MSB-first within "
                 "each byte: the bit order documented in GemmRunner.h is wrong");
    }
    if (writesBias)
      for (int64_t q = 0; q < c.batch; ++q)
        for (int64_t r = 0; r < g.biasLength; ++r) {
          int64_t i = q * g.biasBatchStride + r;
          chk.near("bias gradient", i, fromDevice(gotBias, i, dt), biasRef[i],
                   biasTol(biasRef[i], biasMagAt(q, r)));
        }
  };
  auto report = [&](const Checker &chk, const std::string &run) {
    if (chk.errors) {
      std::printf("FAIL %s (%s): %d mismatches\n", c.name().c_str(),
                  run.c_str(), chk.errors);
      for (const std::string &l : chk.lines)
        std::printf("    %s\n", l.c_str());
    } else if (opt_.verbose) {
      std::printf("  ok        %s (%s, worst err/tol %.3f)\n", c.name().c_str(),
                  run.c_str(), chk.worst);
    }
  };

  if (opt_.emulated) {
    // No GPU: the emulator's own results, in device layout, stand in for the
    // device's; with --corrupt one element of them is made wrong (cycling
    // over D, D's padding, the aux output and the bias gradient) and the
    // check must catch it.
    std::vector<uint8_t> gotD = toDevice(Dref, dt), gotBias = toDevice(biasRef, dt);
    std::vector<uint8_t> gotAux(auxBytes, 0);
    if (writesAux) {
      if (relu) {
        for (int64_t i = 0; i < auxCount; ++i)
          if (auxRef[i] != 0)
            gotAux[i / 8] |= (uint8_t)(1u << (i % 8));
      } else {
        gotAux = toDevice(auxRef, dt);
      }
    }
    std::string corrupted = "none";
    if (opt_.corrupt) {
      auto setD = [&](int64_t i, float v) {
        std::vector<uint8_t> one = toDevice(std::vector<float>{v}, dt);
        std::memcpy(gotD.data() + i * elemSize(dt), one.data(), elemSize(dt));
      };
      int kind = (int)(seed % 4);
      if (kind == 1 && !c.pad)
        kind = 0;
      if (kind == 2 && !writesAux)
        kind = 0;
      if (kind == 3 && !writesBias)
        kind = 0;
      if (kind == 2 && relu) {
        // Flip a bit whose pre-activation is clearly away from 0.
        int64_t flip = -1;
        for (int64_t col = 0; col < c.n && flip < 0; ++col)
          for (int64_t r = 0; r < c.m && flip < 0; ++r)
            if (!reluTie(0, r, col))
              flip = r + col * g.auxLd;
        if (flip < 0)
          kind = 0;
        else
          gotAux[flip / 8] ^= (uint8_t)(1u << (flip % 8));
      }
      if (kind == 0) {
        setD(0, (float)(Dref[0] + 0.2 * (std::fabs(Dref[0]) + dScale) + 1));
        corrupted = "D[0]";
      } else if (kind == 1) {
        setD(c.m, (float)(C[c.m] + 1)); // row m of column 0: padding
        corrupted = "D padding";
      } else if (kind == 2 && relu) {
        corrupted = "ReLU aux bit";
      } else if (kind == 2) {
        std::vector<float> v(auxRef);
        v[0] += (float)(0.2 * (std::fabs(v[0]) + auxScale) + 1);
        gotAux = toDevice(v, dt);
        corrupted = "GELU aux[0]";
      } else {
        std::vector<float> v(biasRef);
        v[0] += (float)(0.2 * (std::fabs(v[0]) + biasMagAt(0, 0)) + 1);
        gotBias = toDevice(v, dt);
        corrupted = "bias gradient[0]";
      }
    }
    Checker chk;
    check(gotD, gotAux, gotBias, chk);
    report(chk, "emulated device, corrupted " + corrupted);
    if (chk.errors)
      ++st.failed;
    else
      ++st.ran;
    return;
  }

  // Device buffers.
  DevBuf dA, dB, dD, dBias, dAux;
  alloc(dA, hA.size());
  alloc(dB, hB.size());
  alloc(dD, hC.size());
  upload(dA, hA);
  upload(dB, hB);
  if (biasCount)
    alloc(dBias, hBias.size());
  if (auxBytes)
    alloc(dAux, auxBytes);

  dmrt::GemmRunner runner;
  std::string error;
  if (!runner.init(lt_, g, dt, dt, dt, dt, workspace_, error)) {
    ++st.failed;
    std::printf("FAIL %s: init: %s\n", c.name().c_str(), error.c_str());
    return;
  }
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  if (!runner.algorithms(opt_.algos, algos, error)) {
    if (runner.lastStatus() == CUBLAS_STATUS_NOT_SUPPORTED) {
      ++st.unsupported;
      st.unsupportedCases.push_back(c.name());
      if (opt_.verbose)
        std::printf("  unsupported %s: %s\n", c.name().c_str(), error.c_str());
      return;
    }
    ++st.failed;
    std::printf("FAIL %s: %s\n", c.name().c_str(), error.c_str());
    return;
  }

  bool caseFailed = false;
  int algosRan = 0;
  for (size_t ai = 0; ai < algos.size(); ++ai) {
    std::string run = "algorithm " + std::to_string(ai) + " of " +
                      std::to_string(algos.size());
    // Fresh inputs / outputs for each algorithm.
    upload(dD, hC);
    if (biasCount) {
      if (readsBias) {
        upload(dBias, hBias);
      } else {
        std::vector<float> sentinel(biasCount, 12345.0f);
        upload(dBias, toDevice(sentinel, dt));
      }
    }
    if (auxBytes) {
      if (readsAux)
        upload(dAux, auxDev);
      else
        CUDA_OK(cudaMemset(dAux.p, 0, auxBytes));
    }
    if (!runner.run(dA.p, dB.p, dD.p, dBias.p, dAux.p, stream_,
                    &algos[ai].algo, error)) {
      caseFailed = true;
      std::printf("FAIL %s (%s): %s\n", c.name().c_str(), run.c_str(),
                  error.c_str());
      continue;
    }
    cudaError_t ce = cudaStreamSynchronize(stream_);
    if (ce != cudaSuccess) {
      std::printf("FATAL %s (%s): cudaStreamSynchronize: %s (%s)\n",
                  c.name().c_str(), run.c_str(), cudaGetErrorName(ce),
                  cudaGetErrorString(ce));
      std::exit(1);
    }
    ++algosRan;
    std::vector<uint8_t> gotD = download(dD, hC.size());
    std::vector<uint8_t> gotAux, gotBias;
    if (writesAux)
      gotAux = download(dAux, auxBytes);
    if (writesBias)
      gotBias = download(dBias, hBias.size());
    Checker chk;
    check(gotD, gotAux, gotBias, chk);
    report(chk, run);
    caseFailed |= chk.errors > 0;
  }
  if (caseFailed)
    ++st.failed;
  else if (algosRan > 0)
    ++st.ran;
}

bool parseArgs(int argc, char **argv, Options &opt) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--epilogue" && i + 1 < argc) {
      opt.only = argv[++i];
    } else if (a == "--algos" && i + 1 < argc) {
      opt.algos = std::atoi(argv[++i]);
      if (opt.algos < 1)
        return false;
    } else if (a == "--verbose") {
      opt.verbose = true;
    } else if (a == "--strict") {
      opt.strict = true;
    } else if (a == "--emulated-device") {
      opt.emulated = true;
    } else if (a == "--emulated-device=corrupt") {
      opt.emulated = opt.corrupt = true;
    } else if (a.rfind("--emulated-device=unsupported:", 0) == 0) {
      opt.emulated = true;
      opt.unsupported = a.substr(a.find(':') + 1);
    } else {
      return false;
    }
  }
  for (const std::string *name : {&opt.only, &opt.unsupported}) {
    if (name->empty())
      continue;
    bool known = false;
    for (Epilogue e : kEpilogues)
      known |= *name == dmrt::epilogueName(e);
    if (!known) {
      std::fprintf(stderr, "unknown epilogue %s\n", name->c_str());
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!parseArgs(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: %s [--epilogue NAME] [--algos N] [--verbose] "
                 "[--strict] [--emulated-device[=corrupt|=unsupported:NAME]]\n",
                 argv[0]);
    return 2;
  }
  cublasLtHandle_t lt = nullptr;
  DevBuf workspace;
  cudaStream_t stream = nullptr;
  if (opt.emulated) {
    std::printf("emulated device: the emulator's results stand in for the "
                "GPU's (%s)\n",
                opt.corrupt ? "each case corrupted: every case must fail"
                            : "every case must pass");
  } else {
    if (int status = dmc::test::checkGpuDevice("GemmRunner epilogues"))
      return status;
    cublasStatus_t cs = cublasLtCreate(&lt);
    if (cs != CUBLAS_STATUS_SUCCESS) {
      std::printf("FATAL: cublasLtCreate failed: %s\n",
                  dmrt::cublasStatusName(cs));
      return 1;
    }
    alloc(workspace, dmrt::GemmRunner::kWorkspaceBytes);
    CUDA_OK(cudaStreamCreate(&stream));
  }

  Tester tester(opt, lt, workspace.p, stream);
  std::map<Epilogue, Stats> stats;
  uint64_t index = 0;
  const int64_t ms[] = {64, 128}, ks[] = {32, 80};
  const int32_t batches[] = {1, 2};
  const DType dtypes[] = {DType::BF16, DType::F32};
  for (Epilogue e : kEpilogues) {
    if (!opt.only.empty() && opt.only != dmrt::epilogueName(e))
      continue;
    Stats &st = stats[e];
    for (int im = 0; im < 2; ++im)
      for (int ik = 0; ik < 2; ++ik)
        for (int ib = 0; ib < 2; ++ib)
          for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb)
              for (int id = 0; id < 2; ++id) {
                Case c;
                c.epi = e;
                c.dtype = dtypes[id];
                c.m = ms[im];
                c.n = 96;
                c.k = ks[ik];
                c.batch = batches[ib];
                c.ta = ta;
                c.tb = tb;
                // Spread beta, padding and the bias batch stride evenly
                // over the 64 layouts of each epilogue.
                bool odd = (im + ik + ib + ta + tb + id) % 2;
                c.beta = odd ? 0.5 : 0.0;
                c.alpha = odd ? 0.75 : 1.0;
                c.pad = (ik + ta + id) % 2;
                c.perBatchBias = (im + tb) % 2;
                tester.runCase(c, 0x5eed0000ull + index++, st);
              }
  }

  if (stream)
    CUDA_OK(cudaStreamDestroy(stream));
  if (lt)
    cublasLtDestroy(lt);
  if (opt.corrupt) {
    // Every case was corrupted: each must have been caught.
    int caught = 0, missed = 0;
    for (auto &kv : stats) {
      caught += kv.second.failed;
      missed += kv.second.ran;
    }
    std::printf("%s: the check caught %d of %d corruptions\n",
                missed || !caught ? "FAIL" : "PASS", caught, caught + missed);
    return missed || !caught ? 1 : 0;
  }

  dmc::test::EpilogueVerdict v = dmc::test::summarizeEpilogues(
      stats, std::vector<Epilogue>(std::begin(kEpilogues), std::end(kEpilogues)),
      opt.strict);
  std::printf("\n");
  for (const std::string &l : v.lines)
    std::printf("%s\n", l.c_str());
  return v.pass ? 0 : 1;
}
