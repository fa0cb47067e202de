//===- Harness.cpp - Run, check and time the steps of a bundle ------------===//
//
// The Harness object: device, stream and cuBLASLt handle; copy bandwidth and
// the cache of same-size copy times; the launch closures of kernels and
// contractions (runStep in HarnessStep.cpp runs, checks and times them).
//
//===----------------------------------------------------------------------===//
#include "runtime/HarnessInternal.h"
#include "runtime/ModuleCache.h"
#include "runtime/format/KernelAbi.h"

#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

namespace dmrt {


using namespace detail;

const char *algorithmModeName(AlgorithmMode m) {
  return m == AlgorithmMode::All ? "all" : "heuristic";
}

bool parseAlgorithmMode(const std::string &s, AlgorithmMode &out) {
  if (s == "heuristic")
    out = AlgorithmMode::Heuristic;
  else if (s == "all")
    out = AlgorithmMode::All;
  else
    return false;
  return true;
}

void summarizeAlgorithmSweep(const std::vector<GemmAlgorithm> &algos,
                             const std::vector<double> &us,
                             AlgorithmSweep &sweep) {
  sweep.tried = static_cast<int>(algos.size());
  sweep.heuristic = sweep.enumerated = sweep.errors = 0;
  sweep.heuristicUs = sweep.bestUs = 0;
  sweep.heuristicAlgorithm.clear();
  sweep.bestAlgorithm.clear();
  sweep.bestIndex = -1;
  sweep.bestIsHeuristic = false;
  bool heuristicSeen = false;
  for (size_t i = 0; i < algos.size(); ++i) {
    bool heur = algos[i].source == GemmAlgoSource::Heuristic;
    ++(heur ? sweep.heuristic : sweep.enumerated);
    double t = i < us.size() ? us[i] : 0;
    bool ok = t > 0 && std::isfinite(t);
    if (!ok)
      ++sweep.errors;
    // The heuristic's best: its rank 0 (the step's own algorithm).
    if (heur && !heuristicSeen && algos[i].heuristicRank == 0) {
      heuristicSeen = true;
      sweep.heuristicAlgorithm = algos[i].description;
      sweep.heuristicUs = ok ? t : 0;
    }
    if (ok && (sweep.bestIndex < 0 || t < sweep.bestUs)) {
      sweep.bestIndex = static_cast<int>(i);
      sweep.bestUs = t;
      sweep.bestAlgorithm = algos[i].description;
      sweep.bestIsHeuristic = heur;
    }
  }
}

struct Harness::Impl {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
  void *flush = nullptr;
  size_t flushBytes = 0;
  std::map<CopyTimingKey, double> copyCache; // same-size copy times
  /// Every cubin loaded once per Harness (destroyed before driver_:
  /// ~Harness resets impl_ first).
  std::unique_ptr<ModuleCache> modules;
  ~Impl() {
    modules.reset();
    if (flush) cudaFree(flush);
    if (workspace) cudaFree(workspace);
    if (lt) cublasLtDestroy(lt);
    if (stream) cudaStreamDestroy(stream);
  }
};

Harness::Harness() = default;
Harness::~Harness() { impl_.reset(); }

bool Harness::open(int ordinal, std::string &error) {
  if (!driver_.open(ordinal, error))
    return false;
  cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, ordinal);
  if (e != cudaSuccess) {
    error = cudaMsg(e, "cudaGetDeviceProperties");
    return false;
  }
  info_.name = p.name;
  info_.ordinal = ordinal;
  info_.smCount = p.multiProcessorCount;
  info_.ccMajor = p.major;
  info_.ccMinor = p.minor;
  info_.l2Bytes = p.l2CacheSize;
  info_.memoryBytes = static_cast<int64_t>(p.totalGlobalMem);
  cudaDriverGetVersion(&info_.driverVersion);
  cudaRuntimeGetVersion(&info_.runtimeVersion);
  impl_ = std::make_unique<Impl>();
  if ((e = cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking)) !=
      cudaSuccess) {
    error = cudaMsg(e, "cudaStreamCreate");
    return false;
  }
  cublasStatus_t s = cublasLtCreate(&impl_->lt);
  if (s != CUBLAS_STATUS_SUCCESS) {
    error = std::string("cublasLtCreate failed: ") + cublasStatusName(s);
    return false;
  }
  if ((e = cudaMalloc(&impl_->workspace, GemmRunner::kWorkspaceBytes)) !=
      cudaSuccess) {
    error = cudaMsg(e, "cudaMalloc(cuBLASLt workspace)");
    return false;
  }
  return true;
}

bool Harness::measureCopyBandwidth(std::string &error) {
  cudaStream_t st = impl_->stream;
  for (size_t bytes = size_t(1) << 30; bytes >= (size_t(1) << 26); bytes /= 2) {
    void *src = nullptr, *dst = nullptr;
    if (cudaMalloc(&src, bytes) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    if (cudaMalloc(&dst, bytes) != cudaSuccess) {
      cudaGetLastError();
      cudaFree(src);
      continue;
    }
    cudaEvent_t ev[2];
    cudaEventCreate(&ev[0]);
    cudaEventCreate(&ev[1]);
    std::vector<double> us;
    cudaError_t e = cudaMemsetAsync(src, 1, bytes, st);
    if (e == cudaSuccess)
      e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st); // warm-up
    for (int i = 0; i < 10 && e == cudaSuccess; ++i) {
      cudaEventRecord(ev[0], st);
      e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
      cudaEventRecord(ev[1], st);
      if (e == cudaSuccess)
        e = cudaEventSynchronize(ev[1]);
      float ms = 0;
      if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, ev[0], ev[1]);
      us.push_back(ms * 1e3);
    }
    cudaEventDestroy(ev[0]);
    cudaEventDestroy(ev[1]);
    cudaFree(src);
    cudaFree(dst);
    if (e != cudaSuccess) {
      error = cudaMsg(e, "copy bandwidth (cudaMemcpyAsync)");
      return false;
    }
    TimingStats t = summarizeTimes(us);
    info_.copyBytes = static_cast<int64_t>(bytes);
    info_.copyGBs = t.medianUs > 0 ? 2.0 * bytes / (t.medianUs * 1e3) : 0;
    return true;
  }
  error = "copy bandwidth: cannot allocate 2 x 64 MiB";
  return false;
}

StepStatus Harness::runKernel(const Bundle &b, const BundleKernel &k,
                              const HarnessOptions &opt, StepResult &out,
                              std::string &error) {
  out = StepResult();
  out.kind = BundleStep::Kernel;
  out.id = k.id;
  out.name = k.name;
  out.bytes = k.bytes;
  out.flop = k.flop;
  if (!impl_->modules)
    impl_->modules = std::make_unique<ModuleCache>(driver_);
  CUfunction fn;
  bool deviceError = false;
  if (!impl_->modules->function(b.path(k.cubin), k.entry, k.sharedBytes, fn, deviceError,
                                error))
    return deviceError && k.sharedBytes > 48 * 1024 ? StepStatus::CudaError
                                                    : StepStatus::BundleError;
  // The workspace: zeroed once (stream order: before the first launch),
  // shared by every launch and buffer set, freed with the step.
  struct DeviceFree {
    void *p = nullptr;
    ~DeviceFree() {
      if (p)
        cudaFree(p);
    }
  } workspace;
  if (k.workspaceBytes > 0) {
    size_t bytes = static_cast<size_t>(k.workspaceBytes);
    cudaError_t e = cudaMalloc(&workspace.p, bytes);
    if (e == cudaSuccess)
      e = cudaMemsetAsync(workspace.p, 0, bytes, impl_->stream);
    if (e != cudaSuccess) {
      error = "kernel " + std::to_string(k.id) + " (" + k.name + "): workspace of " +
              std::to_string(bytes) + " bytes: " + cudaMsg(e, "cudaMalloc/cudaMemsetAsync");
      return StepStatus::CudaError;
    }
  }
  StepSpec spec{'k', k.id, k.inputs, k.outputs};
  /// The parameters of one launch closure: cuLaunchKernel reads `params`,
  /// which point into `values` and `seed` (heap-allocated, never resized
  /// after being filled).
  struct KernelParams {
    std::vector<void *> values; // inputs, outputs[, workspace]
    unsigned long long seed = 0;
    std::vector<void *> params;
  };
  unsigned grid[3], block[3];
  for (int d = 0; d < 3; ++d) {
    grid[d] = static_cast<unsigned>(k.grid[d]);
    block[d] = static_cast<unsigned>(k.block[d]);
  }
  Setup setup = [&, fn, ws = workspace.p](const PtrFn &ptr, uint64_t s,
                                         Launch &launch, std::string &) {
    auto kp = std::make_shared<KernelParams>();
    kp->seed = s;
    auto params = kernelParameters(k.inputs.size(), k.outputs.size(), k.workspaceBytes > 0);
    kp->values.reserve(params.size()); // params point into it: no reallocation
    for (KernelParam p : params) {
      switch (p.kind) {
      case KernelParamKind::Input: kp->values.push_back(ptr(k.inputs[p.index])); break;
      case KernelParamKind::Output: kp->values.push_back(ptr(k.outputs[p.index])); break;
      case KernelParamKind::Workspace: kp->values.push_back(ws); break;
      case KernelParamKind::Seed: kp->params.push_back(&kp->seed); continue;
      }
      kp->params.push_back(&kp->values.back());
    }
    cudaStream_t st = impl_->stream;
    launch = [this, fn, kp, g = std::array<unsigned, 3>{grid[0], grid[1], grid[2]},
              bl = std::array<unsigned, 3>{block[0], block[1], block[2]},
              shared = static_cast<unsigned>(k.sharedBytes),
              st](std::string &err) {
      return driver_.launch(fn, g.data(), bl.data(), shared,
                            reinterpret_cast<CUstream>(st), kp->params.data(), err);
    };
    return StepStatus::Ok;
  };
  TimingContext tc{opt, info_, impl_->stream, impl_->flush, impl_->flushBytes,
                   impl_->copyCache};
  StepStatus s = runStep(b, spec, tc, setup, out, error);
  if (s != StepStatus::Ok && s != StepStatus::Mismatch && s != StepStatus::Skipped &&
      !error.empty())
    error = "kernel " + std::to_string(k.id) + " (" + k.name + "): " + error;
  return s;
}

StepStatus Harness::runContraction(const Bundle &b, const BundleContraction &c,
                                   const HarnessOptions &opt, StepResult &out,
                                   std::string &error) {
  out = StepResult();
  out.kind = BundleStep::Contraction;
  out.id = c.id;
  out.name = c.equation;
  out.bytes = c.bytes;
  out.flop = c.flop;
  if (!c.mappable) {
    error = "contraction " + std::to_string(c.id) + " is unmappable: " +
            c.unmappable;
    return StepStatus::BundleError;
  }
  const dmrt::GemmDescriptor &g = c.gemm;
  int64_t first = g.swapOperands ? c.b : c.a;
  int64_t second = g.swapOperands ? c.a : c.b;
  GemmRunner runner;
  DType biasType = c.bias >= 0 ? b.tensor(c.bias)->dtype : DType::F32;
  if (!runner.init(impl_->lt, g, b.tensor(first)->dtype, b.tensor(second)->dtype,
                   b.tensor(c.d)->dtype, biasType, impl_->workspace, error)) {
    error = "contraction " + std::to_string(c.id) + " (" + c.equation + "): " + error;
    return StepStatus::BundleError;
  }
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  if (!runner.algorithms(opt.topAlgorithms, algos, error)) {
    error = "contraction " + std::to_string(c.id) + " (" + c.equation + "): " + error;
    return StepStatus::CudaError;
  }
  out.algorithms = static_cast<int>(algos.size());
  StepSpec spec{'c', c.id, c.inputs(), c.outputs()};
  // The launch closures of one algorithm.
  auto setupFor = [&](const cublasLtMatmulAlgo_t *algo) -> Setup {
    return [&, algo](const PtrFn &ptr, uint64_t, Launch &launch, std::string &) {
      const void *pa = ptr(first), *pb = ptr(second);
      void *pd = ptr(c.d);
      const void *pbias = c.bias >= 0 ? ptr(c.bias) : nullptr;
      cudaStream_t st = impl_->stream;
      launch = [&runner, pa, pb, pd, pbias, st, algo](std::string &err) {
        return runner.run(pa, pb, pd, pbias, st, algo, err);
      };
      return StepStatus::Ok;
    };
  };
  // --algorithms all: every algorithm enumerateAlgorithms lists (the
  // heuristic's first); if the enumeration fails, the heuristic's alone.
  std::vector<GemmAlgorithm> all;
  StepVariants variants;
  if (opt.algorithms == AlgorithmMode::All) {
    std::string enumError;
    if (!runner.enumerateAlgorithms(opt.maxAlgorithms, all, enumError,
                                    opt.topAlgorithms)) {
      out.sweep.enumerationError = enumError;
      all.clear();
      for (size_t i = 0; i < algos.size() &&
                         static_cast<int>(i) < opt.maxAlgorithms; ++i) {
        GemmAlgorithm a;
        a.algo = algos[i].algo;
        a.workspaceBytes = algos[i].workspaceSize;
        a.source = GemmAlgoSource::Heuristic;
        a.heuristicRank = static_cast<int>(i);
        std::string why;
        readAlgoConfig(a.algo, a.config, why);
        a.description = describeAlgorithm(a.config, a.workspaceBytes);
        all.push_back(std::move(a));
      }
    }
    variants.algos = &all;
    variants.setup = [&](size_t i) { return setupFor(&all[i].algo); };
    variants.sweep = &out.sweep;
  }
  TimingContext tc{opt, info_, impl_->stream, impl_->flush, impl_->flushBytes,
                   impl_->copyCache};
  StepStatus s = runStep(b, spec, tc, setupFor(&algos[0].algo), out, error,
                         variants.algos ? &variants : nullptr);
  if (s != StepStatus::Ok && s != StepStatus::Mismatch && s != StepStatus::Skipped &&
      !error.empty())
    error = "contraction " + std::to_string(c.id) + " (" + c.equation + "): " + error;
  return s;
}

} // namespace dmrt
