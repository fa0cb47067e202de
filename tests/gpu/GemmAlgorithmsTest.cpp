//===- GemmAlgorithmsTest.cpp - Enumerated cuBLASLt algorithms vs emulator -===//
//
// GPU test (label gpu). One bf16 GEMM (m=256 n=192 k=128, opA N, opB T,
// alpha 0.75, beta 0.5, DEFAULT epilogue): GemmRunner::enumerateAlgorithms
// (heuristic top 8 + cublasLtMatmulAlgoGetIds configurations, at most
// --max N, default 64) must find at least one algorithm beyond the
// heuristic's; every entry must have a description and a workspace within
// the runner's, and no enumerated entry may repeat a heuristic one's key.
// At least one enumerated entry must have the algorithm id of the heuristic's
// best. The heuristic's best and 3 enumerated algorithms (one with split-k >
// 1, one with CTA swizzling and one with a cluster shape when there are
// such, the rest spread over the list) then run, and D is compared with dmctest::emulateMatmul:
// |gpu - ref| <= 2e-2 * (|ref| + 0.5 * max|ref|). Each of them is then
// serialized (runtime/format/GemmAlgoConfig.h), parsed and made the runner's
// algorithm (GemmRunner::useAlgorithm), and must give D bit for bit as when
// passed directly; an algorithm id cuBLASLt lacks must be refused.
//
// Exit status: 0 pass, 1 fail (it never passes without running an
// enumerated algorithm), 77 no GPU (ctest SKIP_RETURN_CODE).
// Options: --max N, --run N (enumerated algorithms to run, default 3),
// --verbose (list every algorithm).
//
//===----------------------------------------------------------------------===//
#include "GpuTestDevice.h"
#include "tests/support/GemmEmulator.h"
#include "codegen/gemm/GemmMapping.h"
#include "runtime/format/device/Float16.h"
#include "runtime/GemmRunner.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("FATAL: %s failed: %s (%s) at %s:%d\n", #call,               \
                  cudaGetErrorName(e_), cudaGetErrorString(e_), __FILE__,       \
                  __LINE__);                                                   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

struct DevBuf {
  void *p = nullptr;
  explicit DevBuf(size_t bytes) { CUDA_OK(cudaMalloc(&p, std::max<size_t>(bytes, 16))); }
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  ~DevBuf() { cudaFree(p); }
};

std::vector<uint16_t> toBf16(const std::vector<float> &v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = dmrt::floatToBf16(v[i]);
  return out;
}

dmrt::MatrixLayout packed(int64_t rows, int64_t cols) {
  dmrt::MatrixLayout l;
  l.rows = rows;
  l.cols = cols;
  l.ld = rows;
  l.batchCount = 1;
  l.batchStride = rows * cols;
  return l;
}

} // namespace

int main(int argc, char **argv) {
  int maxCount = 64, runCount = 3;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--max" || a == "--run") && i + 1 < argc) {
      int v = std::atoi(argv[++i]);
      if (v < 1) {
        std::fprintf(stderr, "%s needs a positive integer\n", a.c_str());
        return 2;
      }
      (a == "--max" ? maxCount : runCount) = v;
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      std::fprintf(stderr, "usage: %s [--max N] [--run N] [--verbose]\n", argv[0]);
      return 2;
    }
  }
  if (int status = dmc::test::checkGpuDevice("enumerated cuBLASLt algorithms"))
    return status;

  const int64_t m = 256, n = 192, k = 128;
  dmrt::GemmDescriptor g;
  g.transA = dmrt::Transpose::N;
  g.transB = dmrt::Transpose::T;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = packed(m, k);
  g.b = packed(n, k); // op T: stored n x k
  g.d = packed(m, n);
  g.c = g.d;
  g.alpha = 0.75;
  g.beta = 0.5;
  std::string why;
  if (!dmrt::validateDescriptor(g, why)) {
    std::printf("FAIL: invalid descriptor: %s\n", why.c_str());
    return 1;
  }

  // Inputs rounded to bf16, so that the emulator sees the device's values.
  std::mt19937_64 rng(0xa1605eedull);
  std::uniform_real_distribution<double> u(-1, 1);
  auto fill = [&](size_t count) {
    std::vector<float> v(count);
    for (float &x : v)
      x = dmrt::bf16ToFloat(dmrt::floatToBf16((float)u(rng)));
    return v;
  };
  std::vector<float> A = fill(m * k), B = fill(n * k), C = fill(m * n);
  std::vector<float> Dref(C);
  dmctest::emulateMatmul(g, A.data(), B.data(), C.data(), Dref.data(), nullptr,
                        nullptr);
  double maxRef = 1;
  for (float x : Dref)
    maxRef = std::max(maxRef, (double)std::fabs(x));
  std::vector<uint16_t> hA = toBf16(A), hB = toBf16(B), hC = toBf16(C);

  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::printf("FATAL: cublasLtCreate failed\n");
    return 1;
  }
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreate(&stream));
  int status = 0;
  {
    DevBuf workspace(dmrt::GemmRunner::kWorkspaceBytes);
    DevBuf dA(hA.size() * 2), dB(hB.size() * 2), dD(hC.size() * 2);
    CUDA_OK(cudaMemcpy(dA.p, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dB.p, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));

    dmrt::GemmRunner runner;
    std::string error;
    if (!runner.init(lt, g, dmrt::DType::BF16, dmrt::DType::BF16,
                     dmrt::DType::BF16, dmrt::DType::BF16, workspace.p, error)) {
      std::printf("FAIL: init: %s\n", error.c_str());
      return 1;
    }
    std::vector<dmrt::GemmAlgorithm> algos;
    dmrt::GemmEnumStats st;
    auto t0 = std::chrono::steady_clock::now();
    bool ok = runner.enumerateAlgorithms(maxCount, algos, error,
                                         dmrt::GemmRunner::kDefaultHeuristicCount,
                                         &st);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    if (!ok) {
      std::printf("FAIL: enumerateAlgorithms: %s\n", error.c_str());
      return 1;
    }
    std::printf("%s\nenumerateAlgorithms(max %d): %zu algorithms: %d heuristic + "
                "%d enumerated from %d ids (%d candidates, %d checked, %d "
                "rejected, %d duplicates of heuristic ones) in %.1f ms\n",
                g.describe().c_str(), maxCount, algos.size(), st.heuristic,
                st.enumerated, st.algoIds, st.candidates, st.checked,
                st.rejected, st.duplicates, ms);
    if (verbose)
      for (const dmrt::GemmIdStats &is : st.ids)
        std::printf("  id %3d: %3d tiles, %2d stages, %d cluster shapes, custom "
                    "0..%d, split-k %d, reduction mask %u, swizzle %d: %5d "
                    "candidates, %3d kept\n",
                    is.algoId, is.tiles, is.stages, is.clusterShapes,
                    is.customOptionMax, is.splitK, is.reductionMask, is.swizzle,
                    is.candidates, is.kept);
    std::vector<size_t> enumerated;
    std::vector<dmrt::GemmAlgoConfig> heurConfigs;
    for (size_t i = 0; i < algos.size(); ++i) {
      const dmrt::GemmAlgorithm &a = algos[i];
      bool heur = a.source == dmrt::GemmAlgoSource::Heuristic;
      if (verbose || i < 12)
        std::printf("  %3zu %-10s %s\n", i, heur ? "heuristic" : "enumerated",
                    a.description.c_str());
      if (a.description.empty() || a.workspaceBytes > dmrt::GemmRunner::kWorkspaceBytes) {
        std::printf("FAIL: algorithm %zu: empty description or workspace %zu > %zu\n",
                    i, a.workspaceBytes, dmrt::GemmRunner::kWorkspaceBytes);
        status = 1;
      }
      if (heur) {
        heurConfigs.push_back(a.config);
        continue;
      }
      enumerated.push_back(i);
      for (const dmrt::GemmAlgoConfig &h : heurConfigs)
        if (h.sameKey(a.config)) {
          std::printf("FAIL: enumerated algorithm %zu repeats a heuristic one "
                      "(%s)\n", i, a.description.c_str());
          status = 1;
        }
    }
    if (!verbose && algos.size() > 12)
      std::printf("  ... (%zu more; --verbose lists them)\n", algos.size() - 12);
    if ((int)algos.size() > maxCount) {
      std::printf("FAIL: %zu algorithms > max %d\n", algos.size(), maxCount);
      status = 1;
    }
    if (st.heuristic < 1) {
      std::printf("FAIL: the heuristic found no algorithm for a plain bf16 GEMM\n");
      status = 1;
    }
    if (enumerated.empty()) {
      std::printf("FAIL: no algorithm beyond the heuristic's %d\n", st.heuristic);
      return 1;
    }
    // The enumeration must reach the family the heuristic likes best (on
    // sm_90 the cluster kernels, whose configurations need a cluster shape).
    if (st.heuristic > 0) {
      int bestId = algos[0].config.algoId;
      bool covered = false;
      for (size_t i : enumerated)
        covered |= algos[i].config.algoId == bestId;
      if (!covered) {
        std::printf("FAIL: no enumerated configuration of algorithm id %d, the "
                    "heuristic's best\n", bestId);
        status = 1;
      }
    }

    // Which to run: the heuristic's best, then split-k > 1 and swizzle 1 when
    // enumerated, then spread over the rest.
    std::vector<size_t> pick;
    auto add = [&](size_t i) {
      if ((int)pick.size() < runCount + 1 &&
          std::find(pick.begin(), pick.end(), i) == pick.end())
        pick.push_back(i);
    };
    if (st.heuristic > 0)
      add(0);
    for (size_t i : enumerated)
      if (algos[i].config.splitK > 1) {
        add(i);
        break;
      }
    for (size_t i : enumerated)
      if (algos[i].config.swizzle) {
        add(i);
        break;
      }
    for (size_t i : enumerated)
      if (algos[i].config.clusterShape) {
        add(i);
        break;
      }
    int want = runCount + (st.heuristic > 0 ? 1 : 0);
    for (size_t j = 0; (int)pick.size() < want && j < enumerated.size(); ++j)
      add(enumerated[(j * 7919) % enumerated.size()]);
    for (size_t j = 0; (int)pick.size() < want && j < enumerated.size(); ++j)
      add(enumerated[j]);

    int ranEnumerated = 0;
    const double rtol = 2e-2, scale = 0.5 * maxRef;
    for (size_t i : pick) {
      const dmrt::GemmAlgorithm &a = algos[i];
      CUDA_OK(cudaMemcpy(dD.p, hC.data(), hC.size() * 2, cudaMemcpyHostToDevice));
      if (!runner.run(dA.p, dB.p, dD.p, nullptr, stream, &a.algo, error)) {
        std::printf("FAIL %s: %s\n", a.description.c_str(), error.c_str());
        status = 1;
        continue;
      }
      CUDA_OK(cudaStreamSynchronize(stream));
      std::vector<uint16_t> got(hC.size());
      CUDA_OK(cudaMemcpy(got.data(), dD.p, got.size() * 2, cudaMemcpyDeviceToHost));
      int bad = 0;
      double worst = 0;
      for (size_t e = 0; e < got.size(); ++e) {
        double v = dmrt::bf16ToFloat(got[e]), ref = Dref[e];
        double tol = rtol * (std::fabs(ref) + scale);
        double err = std::fabs(v - ref);
        if (!(err <= tol)) {
          if (++bad <= 5)
            std::printf("    D[%zu]: got %g, want %g (tol %g)\n", e, v, ref, tol);
        } else {
          worst = std::max(worst, err / tol);
        }
      }
      bool heur = a.source == dmrt::GemmAlgoSource::Heuristic;
      std::printf("%s %-10s %s (worst err/tol %.3f)\n", bad ? "FAIL" : "ok  ",
                  heur ? "heuristic" : "enumerated", a.description.c_str(), worst);
      if (bad)
        status = 1;
      else if (!heur)
        ++ranEnumerated;
    }
    if (ranEnumerated == 0) {
      std::printf("FAIL: no enumerated algorithm ran and matched\n");
      status = 1;
    }

    // The text form a bundle carries: each picked algorithm serialized,
    // parsed back and made the runner's own (useAlgorithm) must run exactly
    // that algorithm: D bit for bit as when it is passed directly.
    auto runD = [&](const cublasLtMatmulAlgo_t *algo, std::vector<uint16_t> &got) {
      CUDA_OK(cudaMemcpy(dD.p, hC.data(), hC.size() * 2, cudaMemcpyHostToDevice));
      if (!runner.run(dA.p, dB.p, dD.p, nullptr, stream, algo, error))
        return false;
      CUDA_OK(cudaStreamSynchronize(stream));
      got.resize(hC.size());
      CUDA_OK(cudaMemcpy(got.data(), dD.p, got.size() * 2, cudaMemcpyDeviceToHost));
      return true;
    };
    int chosenOk = 0;
    for (size_t i : pick) {
      const dmrt::GemmAlgorithm &a = algos[i];
      std::string text = dmrt::serializeAlgorithm(a.config);
      dmrt::GemmAlgoConfig parsed;
      std::vector<uint16_t> direct, chosen;
      if (!dmrt::parseAlgorithm(text, parsed, error) || parsed != a.config ||
          !runner.useAlgorithm(parsed, error) || !runner.chosenAlgorithm() ||
          runner.chosenAlgorithm()->config != a.config || !runD(&a.algo, direct) ||
          !runD(nullptr, chosen)) {
        std::printf("FAIL chosen %s: %s\n", text.c_str(), error.c_str());
        status = 1;
        continue;
      }
      if (direct != chosen) {
        std::printf("FAIL chosen %s: D differs from the same algorithm passed directly\n",
                    text.c_str());
        status = 1;
        continue;
      }
      ++chosenOk;
    }
    // One cuBLASLt does not have: refused, with the reason, and the last
    // chosen one stays.
    dmrt::GemmAlgoConfig alien = algos[0].config;
    alien.algoId = 987654;
    const dmrt::GemmAlgorithm *before = runner.chosenAlgorithm();
    dmrt::GemmAlgoConfig kept = before ? before->config : dmrt::GemmAlgoConfig();
    error.clear();
    if (runner.useAlgorithm(alien, error) || error.find("987654") == std::string::npos ||
        !runner.chosenAlgorithm() || runner.chosenAlgorithm()->config != kept) {
      std::printf("FAIL: algorithm id 987654 was not refused with its reason (\"%s\")\n",
                  error.c_str());
      status = 1;
    } else {
      std::printf("ok   refused: %s\n", error.c_str());
    }
    std::printf("%s %d of %zu algorithm(s) run from their text form, bit for bit as passed "
                "directly\n", chosenOk == (int)pick.size() ? "ok  " : "FAIL", chosenOk,
                pick.size());
    if (status == 0)
      std::printf("PASS: %d enumerated algorithm(s) beyond the heuristic's "
                  "matched the emulator\n", ranEnumerated);
  }
  cudaStreamDestroy(stream);
  cublasLtDestroy(lt);
  return status;
}
