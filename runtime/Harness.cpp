//===- Harness.cpp - Run, check and time the steps of a bundle ------------===//
#include "runtime/Harness.h"

#include "runtime/ReferenceData.h"

#include "runtime/Philox.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <sys/stat.h>

namespace dmrt {


namespace {
std::string cudaMsg(cudaError_t e, const char *call) {
  return std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
         cudaGetErrorString(e) + ")";
}
#define DMRT_CUDA(call)                                                        \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      error = cudaMsg(e_, #call);                                              \
      return StepStatus::CudaError;                                            \
    }                                                                          \
  } while (0)

bool fileExists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Device buffers of the base tensors a step touches.
struct StepBuffers {
  std::map<int64_t, void *> base;
  ~StepBuffers() {
    for (auto &kv : base)
      cudaFree(kv.second);
  }
};
} // namespace

struct Harness::Impl {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
  void *flush = nullptr;
  size_t flushBytes = 0;
  ~Impl() {
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

namespace {

using Launch = std::function<bool(std::string &)>;
/// Builds the launch closure once the buffers exist: ptr(id) gives the device
/// address of any tensor of the step.
using Setup = std::function<StepStatus(
    const std::function<void *(int64_t)> &ptr, uint64_t dropoutSeed,
    Launch &launch, std::string &error)>;

struct StepSpec {
  char prefix;  // 'k' or 'c'
  int64_t id;
  std::vector<int64_t> inputs, outputs;
};

} // namespace

static StepStatus runStep(const Bundle &b, const StepSpec &spec,
                          const HarnessOptions &opt, const DeviceInfo &info,
                          cudaStream_t st, void *&flush, size_t &flushBytes,
                          const Setup &setup,
                          StepResult &out, std::string &error) {
  std::string stepName = std::string(1, spec.prefix) + std::to_string(spec.id);
  // Reference file.
  TensorFile ref;
  bool haveRef = false;
  std::string refPath = b.path("reference/" + stepName + ".safetensors");
  if (opt.reference || fileExists(refPath)) {
    if (!fileExists(refPath)) {
      error = "--reference: " + refPath + " does not exist";
      return StepStatus::BundleError;
    }
    if (!readSafetensors(refPath, ref, error))
      return StepStatus::BundleError;
    haveRef = true;
  }
  out.dropoutSeed = opt.seed;
  if (opt.reference) {
    auto it = ref.metadata.find("seed");
    if (it != ref.metadata.end() && !parseU64(it->second, out.dropoutSeed)) {
      error = refPath + ": metadata seed \"" + it->second +
              "\" is not an unsigned 64-bit integer";
      return StepStatus::BundleError;
    }
  }
  // Allocation of every base tensor touched.
  StepBuffers buf;
  std::map<int64_t, int64_t> offsets; // tensor -> (base, element offset)
  std::map<int64_t, int64_t> baseOfId;
  auto touch = [&](int64_t id) -> StepStatus {
    int64_t off;
    int64_t base = b.baseOf(id, off);
    offsets[id] = off;
    baseOfId[id] = base;
    if (!buf.base.count(base)) {
      const BundleTensor *bt = b.tensor(base);
      void *p = nullptr;
      size_t bytes = std::max<int64_t>(bt->bytes, 1);
      cudaError_t e = cudaMalloc(&p, bytes);
      if (e != cudaSuccess) {
        error = cudaMsg(e, "cudaMalloc") + " for tensor " + bt->name + " (" +
                std::to_string(bytes) + " bytes)";
        return StepStatus::CudaError;
      }
      buf.base[base] = p;
    }
    return StepStatus::Ok;
  };
  for (int64_t id : spec.inputs)
    if (StepStatus s = touch(id); s != StepStatus::Ok)
      return s;
  for (int64_t id : spec.outputs)
    if (StepStatus s = touch(id); s != StepStatus::Ok)
      return s;
  auto ptr = [&](int64_t id) -> void * {
    const BundleTensor *t = b.tensor(id);
    return static_cast<char *>(buf.base.at(baseOfId.at(id))) +
           offsets.at(id) * static_cast<int64_t>(dtypeSize(t->dtype));
  };
  // Outputs first get NaN bytes (unwritten elements fail the check), then the
  // inputs are written (they win where an input and an output overlap).
  for (int64_t id : spec.outputs) {
    const BundleTensor *t = b.tensor(id);
    DMRT_CUDA(cudaMemsetAsync(ptr(id), 0xFF, t->bytes, st));
  }
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    const BundleTensor *t = b.tensor(spec.inputs[k]);
    std::vector<uint8_t> host;
    std::string refName = "in" + std::to_string(k);
    const Tensor *rt = haveRef ? ref.find(refName) : nullptr;
    if (opt.reference && !rt && ref.metadata.count("unit")) {
      // Inputs drawn from the seed, as the compiler drew them
      // (runtime/ReferenceData.h).
      uint64_t unit = 0, maxInt = 1, seed = out.dropoutSeed;
      parseU64(ref.metadata["unit"], unit);
      if (ref.metadata.count("max_int"))
        parseU64(ref.metadata["max_int"], maxInt);
      std::vector<double> v =
          referenceValues(t->numElements(), seed,
                          referenceStream(uint32_t(unit), uint32_t(k)), !isFloat(t->dtype),
                          int64_t(maxInt));
      host = fromDoubles("", t->dtype, {t->numElements()}, v).bytes;
    } else if (opt.reference) {
      if (!rt) {
        error = refPath + ": no tensor " + refName + " (input " +
                std::to_string(k) + ", " + t->name + ")";
        return StepStatus::BundleError;
      }
      if (rt->numElements() != t->numElements()) {
        error = refPath + ": " + refName + " has " +
                std::to_string(rt->numElements()) + " elements but tensor " +
                t->name + " has " + std::to_string(t->numElements());
        return StepStatus::BundleError;
      }
      host = rt->dtype == t->dtype
                 ? rt->bytes
                 : fromDoubles("", t->dtype, {t->numElements()}, toDoubles(*rt))
                       .bytes;
    } else {
      int64_t intMax = opt.intMax;
      if (!isFloat(t->dtype) && rt) {
        std::vector<double> v = toDoubles(*rt);
        if (!v.empty())
          intMax = static_cast<int64_t>(*std::max_element(v.begin(), v.end()));
      }
      host = makeInput(opt.seed, static_cast<uint32_t>(spec.inputs[k]), t->dtype,
                       t->numElements(), intMax);
    }
    DMRT_CUDA(cudaMemcpyAsync(ptr(spec.inputs[k]), host.data(), host.size(),
                              cudaMemcpyHostToDevice, st));
    DMRT_CUDA(cudaStreamSynchronize(st)); // `host` dies here
  }
  Launch launch;
  if (StepStatus s = setup(ptr, out.dropoutSeed, launch, error);
      s != StepStatus::Ok)
    return s;
  // The checked run.
  if (!launch(error))
    return StepStatus::CudaError;
  DMRT_CUDA(cudaStreamSynchronize(st));
  DMRT_CUDA(cudaGetLastError());
  if (opt.reference) {
    out.checked = true;
    for (size_t k = 0; k < spec.outputs.size(); ++k) {
      const BundleTensor *t = b.tensor(spec.outputs[k]);
      std::string refName = "out" + std::to_string(k);
      const Tensor *rt = ref.find(refName);
      if (!rt) {
        error = refPath + ": no tensor " + refName + " (output " +
                std::to_string(k) + ", " + t->name + ")";
        return StepStatus::BundleError;
      }
      Tensor got;
      got.dtype = t->dtype;
      got.shape = {t->numElements()};
      got.bytes.resize(t->bytes);
      DMRT_CUDA(cudaMemcpy(got.bytes.data(), ptr(spec.outputs[k]), t->bytes,
                           cudaMemcpyDeviceToHost));
      // Large outputs are referenced every `stride`-th element.
      std::vector<double> gotValues = toDoubles(got);
      uint64_t stride = 1;
      if (auto it = ref.metadata.find("stride." + refName); it != ref.metadata.end())
        parseU64(it->second, stride);
      if (stride > 1) {
        std::vector<double> sampled;
        for (size_t e = 0; e < gotValues.size(); e += stride)
          sampled.push_back(gotValues[e]);
        gotValues.swap(sampled);
      }
      OutputCheck oc;
      oc.tensor = t->id;
      oc.name = refName + " (" + t->name + ")";
      oc.cmp = compareOutput(toDoubles(*rt), gotValues,
                             opt.tolerance >= 0 ? opt.tolerance
                                                : defaultTolerance(t->dtype));
      out.pass &= oc.cmp.pass;
      out.outputs.push_back(oc);
    }
  }
  // Timing.
  std::vector<cudaEvent_t> ev(2 * std::max(opt.reps, 0));
  for (auto &e : ev)
    DMRT_CUDA(cudaEventCreate(&e));
  struct EvFree {
    std::vector<cudaEvent_t> &ev;
    ~EvFree() {
      for (auto e : ev)
        if (e) cudaEventDestroy(e);
    }
  } evFree{ev};
  if (opt.flushL2 && !flush && info.l2Bytes > 0) {
    flushBytes = 2 * static_cast<size_t>(info.l2Bytes);
    DMRT_CUDA(cudaMalloc(&flush, flushBytes));
  }
  for (int i = 0; i < opt.warmup; ++i)
    if (!launch(error))
      return StepStatus::CudaError;
  for (int i = 0; i < opt.reps; ++i) {
    if (opt.flushL2 && flush)
      DMRT_CUDA(cudaMemsetAsync(flush, i & 0xFF, flushBytes, st));
    DMRT_CUDA(cudaEventRecord(ev[2 * i], st));
    if (!launch(error))
      return StepStatus::CudaError;
    DMRT_CUDA(cudaEventRecord(ev[2 * i + 1], st));
  }
  DMRT_CUDA(cudaStreamSynchronize(st));
  DMRT_CUDA(cudaGetLastError());
  std::vector<double> us;
  for (int i = 0; i < opt.reps; ++i) {
    float ms = 0;
    DMRT_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    us.push_back(ms * 1e3);
  }
  out.time = summarizeTimes(us);
  if (out.time.medianUs > 0) {
    out.gbs = out.bytes / (out.time.medianUs * 1e3);
    out.tflops = out.flop / (out.time.medianUs * 1e6);
    out.pctCopy = info.copyGBs > 0 ? 100.0 * out.gbs / info.copyGBs : 0;
  }
  return out.pass ? StepStatus::Ok : StepStatus::Mismatch;
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
  std::string cubinPath = b.path(k.cubin);
  std::ifstream is(cubinPath, std::ios::binary);
  if (!is) {
    error = cubinPath + ": cannot open";
    return StepStatus::BundleError;
  }
  std::vector<char> image((std::istreambuf_iterator<char>(is)),
                          std::istreambuf_iterator<char>());
  CUmodule mod = nullptr;
  if (!driver_.loadModule(image, cubinPath, mod, error))
    return StepStatus::BundleError;
  struct ModFree {
    CudaDriver &d;
    CUmodule m;
    ~ModFree() { d.unloadModule(m); }
  } modFree{driver_, mod};
  CUfunction fn;
  if (!driver_.getFunction(mod, k.entry, fn, error)) {
    error = cubinPath + ": " + error;
    return StepStatus::BundleError;
  }
  if (k.sharedBytes > 48 * 1024 &&
      !driver_.setMaxDynamicShared(fn, static_cast<int>(k.sharedBytes), error))
    return StepStatus::CudaError;
  StepSpec spec{'k', k.id, k.inputs, k.outputs};
  std::vector<void *> args;
  unsigned long long seed = 0;
  std::vector<void *> params;
  Setup setup = [&](const std::function<void *(int64_t)> &ptr, uint64_t s,
                    Launch &launch, std::string &) {
    for (int64_t id : k.inputs)
      args.push_back(ptr(id));
    for (int64_t id : k.outputs)
      args.push_back(ptr(id));
    seed = s;
    for (auto &a : args)
      params.push_back(&a);
    params.push_back(&seed);
    unsigned grid[3], block[3];
    for (int d = 0; d < 3; ++d) {
      grid[d] = static_cast<unsigned>(k.grid[d]);
      block[d] = static_cast<unsigned>(k.block[d]);
    }
    cudaStream_t st = impl_->stream;
    launch = [this, fn, grid0 = grid[0], grid1 = grid[1], grid2 = grid[2],
              block0 = block[0], block1 = block[1], block2 = block[2],
              shared = static_cast<unsigned>(k.sharedBytes), st,
              &params](std::string &err) {
      unsigned g[3] = {grid0, grid1, grid2}, bl[3] = {block0, block1, block2};
      return driver_.launch(fn, g, bl, shared, reinterpret_cast<CUstream>(st),
                            params.data(), err);
    };
    return StepStatus::Ok;
  };
  StepStatus s = runStep(b, spec, opt, info_, impl_->stream, impl_->flush,
                         impl_->flushBytes, setup, out, error);
  if (s != StepStatus::Ok && s != StepStatus::Mismatch && !error.empty())
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
  const dmcgen::GemmDescriptor &g = c.gemm;
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
  Setup setup = [&](const std::function<void *(int64_t)> &ptr, uint64_t,
                    Launch &launch, std::string &) {
    const void *pa = ptr(first), *pb = ptr(second);
    void *pd = ptr(c.d);
    const void *pbias = c.bias >= 0 ? ptr(c.bias) : nullptr;
    cudaStream_t st = impl_->stream;
    const cublasLtMatmulAlgo_t *algo = &algos[0].algo;
    launch = [&runner, pa, pb, pd, pbias, st, algo](std::string &err) {
      return runner.run(pa, pb, pd, pbias, st, algo, err);
    };
    return StepStatus::Ok;
  };
  StepStatus s = runStep(b, spec, opt, info_, impl_->stream, impl_->flush,
                         impl_->flushBytes, setup, out, error);
  if (s != StepStatus::Ok && s != StepStatus::Mismatch && !error.empty())
    error = "contraction " + std::to_string(c.id) + " (" + c.equation + "): " + error;
  return s;
}

} // namespace dmrt
