//===- Harness.cpp - Run, check and time the steps of a bundle ------------===//
//
// The Harness object: device and stream; the loaded bundle's steps
// (BundleKernels: modules, cuBLASLt handle, workspace and descriptors, each
// made once) and its kernels' workspaces; copy bandwidth and the cache of
// same-size copy times; the launch closures of kernels and contractions
// (runStep in HarnessStep.cpp runs, checks and times them).
//
//===----------------------------------------------------------------------===//
#include "runtime/HarnessInternal.h"
#include "runtime/KernelLaunch.h"
#include "runtime/format/ArenaPlan.h"

#include <algorithm>
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

struct Harness::Impl {
  cudaStream_t stream = nullptr;
  void *flush = nullptr;
  size_t flushBytes = 0;
  std::map<CopyTimingKey, double> copyCache; // same-size copy times
  /// The loaded bundle (load), its cubins and its steps on the device
  /// (destroyed before driver_: ~Harness resets impl_ first).
  const Bundle *bundle = nullptr;
  CubinImages images;
  std::unique_ptr<BundleKernels> kernels;
  /// Every kernel's workspace in one allocation, zeroed once at load.
  void *workspaces = nullptr;
  std::vector<int64_t> workspaceOffset; ///< by kernel index
  GraphFills fills; ///< for contractions timed as graphs (TimingContext)
  void unload() {
    kernels.reset();
    if (workspaces)
      cudaFree(workspaces);
    workspaces = nullptr;
    workspaceOffset.clear();
    images.clear();
    bundle = nullptr;
  }
  ~Impl() {
    unload();
    if (flush) cudaFree(flush);
    if (stream) cudaStreamDestroy(stream);
  }
};

Harness::Harness() = default;
Harness::~Harness() {
  if (impl_)
    impl_->fills.unload(driver_);
  impl_.reset();
}

bool queryDevice(int ordinal, DeviceInfo &info, std::string &error) {
  cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, ordinal);
  if (e != cudaSuccess) {
    error = cudaMsg(e, "cudaGetDeviceProperties");
    return false;
  }
  info.name = p.name;
  info.ordinal = ordinal;
  info.smCount = p.multiProcessorCount;
  info.ccMajor = p.major;
  info.ccMinor = p.minor;
  info.l2Bytes = p.l2CacheSize;
  info.memoryBytes = static_cast<int64_t>(p.totalGlobalMem);
  cudaDriverGetVersion(&info.driverVersion);
  cudaRuntimeGetVersion(&info.runtimeVersion);
  int memClock = 0; // cudaDeviceProp::memoryClockRate is gone in CUDA 13
  if (cudaDeviceGetAttribute(&memClock, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess)
    info.memClockKhz = memClock;
  info.cublasLtVersion = static_cast<int64_t>(cublasLtGetVersion());
  return true;
}

bool Harness::open(int ordinal, std::string &error) {
  if (!driver_.open(ordinal, error) || !queryDevice(ordinal, info_, error))
    return false;
  cudaError_t e;
  impl_ = std::make_unique<Impl>();
  if ((e = cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking)) !=
      cudaSuccess) {
    error = cudaMsg(e, "cudaStreamCreate");
    return false;
  }
  return impl_->fills.load(driver_, error);
}

bool Harness::load(const Bundle &b, CubinImages images, std::string &error) {
  impl_->unload();
  // Each workspace at its own 256-byte aligned offset: no kernel sees what
  // another left behind.
  int64_t bytes = 0;
  for (const BundleKernel &k : b.kernels) {
    impl_->workspaceOffset.push_back(bytes);
    bytes += (k.workspaceBytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  }
  if (bytes > 0) {
    cudaError_t e = cudaMalloc(&impl_->workspaces, size_t(bytes));
    if (e == cudaSuccess)
      e = cudaMemset(impl_->workspaces, 0, size_t(bytes));
    if (e != cudaSuccess) {
      error = "the kernels' workspaces (" + std::to_string(bytes) +
              " bytes): " + cudaMsg(e, "cudaMalloc/cudaMemset");
      impl_->unload();
      return false;
    }
  }
  impl_->bundle = &b;
  impl_->images = std::move(images);
  impl_->kernels = std::make_unique<BundleKernels>(b, driver_);
  return true;
}

/// The loaded bundle's index of `item` (a kernel or contraction of `b`), or
/// an error when `b` is not the loaded bundle.
template <class T>
static bool loadedIndex(const Bundle *loaded, const Bundle &b, const std::vector<T> &all,
                        const T &item, size_t &index, std::string &error) {
  if (loaded != &b) {
    error = b.dir + ": not the bundle the harness loaded (Harness::load)";
    return false;
  }
  index = size_t(&item - all.data());
  return true;
}

namespace {
/// Read + write GB/s of device-to-device copies whose source and destination
/// together fit a quarter of the L2 (50 back to back, after one warm-up), so
/// that they run out of the L2; 0 when they cannot run.
double l2CopyGBs(cudaStream_t st, int64_t l2Bytes) {
  const size_t bytes = size_t(std::max<int64_t>(l2Bytes / 8, 1 << 20)) & ~size_t(255);
  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(src);
    return 0;
  }
  cudaEvent_t ev[2];
  cudaEventCreate(&ev[0]);
  cudaEventCreate(&ev[1]);
  constexpr int kCopies = 50;
  cudaError_t e = cudaMemsetAsync(src, 1, bytes, st);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
  cudaEventRecord(ev[0], st);
  for (int i = 0; i < kCopies && e == cudaSuccess; ++i)
    e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
  cudaEventRecord(ev[1], st);
  float ms = 0;
  if (e == cudaSuccess)
    e = cudaEventSynchronize(ev[1]);
  if (e == cudaSuccess)
    e = cudaEventElapsedTime(&ms, ev[0], ev[1]);
  cudaEventDestroy(ev[0]);
  cudaEventDestroy(ev[1]);
  cudaFree(src);
  cudaFree(dst);
  if (e != cudaSuccess || !(ms > 0)) {
    cudaGetLastError();
    return 0;
  }
  return 2.0 * double(bytes) * kCopies / (double(ms) * 1e6);
}
} // namespace

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
    info_.l2CopyGBs = l2CopyGBs(st, info_.l2Bytes);
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
  size_t index = 0;
  if (!loadedIndex(impl_->bundle, b, b.kernels, k, index, error))
    return StepStatus::BundleError;
  // Loaded once: a later call of the same kernel finds its function.
  if (CUresult r = impl_->kernels->prepareKernel(index, impl_->images, error); r != CUDA_SUCCESS)
    return moduleErrorIsBundleFault(r) ? StepStatus::BundleError : StepStatus::CudaError;
  void *workspace = k.workspaceBytes > 0 ? static_cast<char *>(impl_->workspaces) +
                                               impl_->workspaceOffset[index]
                                         : nullptr;
  StepSpec spec{'k', k.id, k.inputs, k.outputs};
  BundleKernels *kernels = impl_->kernels.get();
  Setup setup = [&, kernels, index, ws = workspace](const PtrFn &ptr, uint64_t s,
                                                   Launch &launch, std::string &) {
    // One KernelLaunch per closure (buffer set), shared by its copies.
    auto kp = std::make_shared<KernelLaunch>();
    kp->build(k, ws, ptr);
    kp->seed = s;
    cudaStream_t st = impl_->stream;
    launch = [kernels, index, kp, st](std::string &err) {
      return kernels->launch(index, kp->params.data(), st, err);
    };
    return StepStatus::Ok;
  };
  TimingContext tc{opt,          info_,           impl_->stream, impl_->flush,
                   impl_->flushBytes, impl_->copyCache, &driver_,     &impl_->fills};
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
  size_t index = 0;
  if (!loadedIndex(impl_->bundle, b, b.contractions, c, index, error))
    return StepStatus::BundleError;
  const dmrt::GemmDescriptor &g = c.gemm;
  int64_t first = g.swapOperands ? c.b : c.a;
  int64_t second = g.swapOperands ? c.a : c.b;
  // The descriptors are built once; later calls reuse the runner and its
  // heuristic results.
  if (!impl_->kernels->prepareGemmContext(error))
    return StepStatus::CudaError;
  if (!impl_->kernels->prepareContraction(index, error))
    return StepStatus::BundleError;
  GemmRunner &runner = *impl_->kernels->gemm(index);
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  if (!runner.algorithms(opt.topAlgorithms, algos, error)) {
    error = "contraction " + std::to_string(c.id) + " (" + c.equation + "): " + error;
    return StepStatus::CudaError;
  }
  out.algorithms = static_cast<int>(algos.size());
  // The step runs what the bundle runs: its chosen algorithm where this
  // cuBLASLt accepted it, else the heuristic's best.
  const GemmAlgorithm *chosen = runner.chosenAlgorithm();
  out.algorithm = chosen ? serializeAlgorithm(chosen->config) : std::string(kHeuristicAlgorithm);
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
  std::vector<double> prior; // the model before timing, per entry of `all`
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
    out.sweep.considered = int(all.size());
    variants.beforeTiming = [&](double stepUs) {
      // The model before timing: its GEMM rate the step's own (the bundle's
      // algorithm); with --prune-algorithms only its cheapest are timed.
      GemmModelRates rates = modelRates(stepUs > 0 ? double(c.flop) / (stepUs * 1e-6) : 0,
                                        int(dtypeSize(b.tensor(first)->dtype)), info_);
      prior.clear();
      for (const GemmAlgorithm &a : all)
        prior.push_back(modelAlgorithmUs(g, a.config, a.waves, rates));
      if (opt.pruneAlgorithms <= 0)
        return;
      std::vector<GemmAlgorithm> kept;
      std::vector<double> keptPrior;
      for (size_t i : pruneByModel(prior, opt.pruneAlgorithms)) {
        kept.push_back(std::move(all[i]));
        keptPrior.push_back(prior[i]);
      }
      out.sweep.pruned = int(all.size() - kept.size());
      all = std::move(kept);
      prior = std::move(keptPrior);
    };
  }
  TimingContext tc{opt,          info_,           impl_->stream, impl_->flush,
                   impl_->flushBytes, impl_->copyCache, &driver_,     &impl_->fills};
  StepStatus s = runStep(b, spec, tc, setupFor(chosen ? &chosen->algo : &algos[0].algo), out,
                         error, variants.algos ? &variants : nullptr);
  if (s != StepStatus::Ok && s != StepStatus::Mismatch && s != StepStatus::Skipped &&
      !error.empty())
    error = "contraction " + std::to_string(c.id) + " (" + c.equation + "): " + error;
  if (out.sweep.ran)
    modelSweep(g, c.flop, int(dtypeSize(b.tensor(first)->dtype)), info_, out.sweep);
  for (size_t i = 0; i < out.sweep.runs.size() && i < prior.size(); ++i)
    out.sweep.runs[i].priorModelUs = prior[i];
  return s;
}

} // namespace dmrt
