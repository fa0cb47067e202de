//===- EpilogueTester.cpp - One epilogue case on the GPU or the emulator ---===//
#include "EpilogueTester.h"
#include "EpilogueHost.h"

#include "runtime/GemmRunner.h"
#include "runtime/format/device/Float16.h"
#include "tests/support/GemmEmulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace dmctest {

void alloc(DevBuf &b, size_t bytes) {
  b.bytes = std::max<size_t>(bytes, 16);
  CUDA_OK(cudaMalloc(&b.p, b.bytes));
}

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
  // Absolute parts scale with each output's own values (never a fixed 1).
  const double dScale = 0.5 * maxAbs(Dref);
  const double auxScale = 0.5 * maxAbs(auxRef);
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
    // An all-zero reference cannot tell a right output from a zeroed one.
    if (dScale == 0)
      chk.fail("the reference D is all zero: nothing to compare against");
    if (writesAux && !relu && auxScale == 0)
      chk.fail("the reference GELU aux is all zero: nothing to compare against");
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

} // namespace dmctest
