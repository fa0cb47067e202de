//===- StreamTiming.cpp - The two ways of timing a step -------------------===//
//
// Isolated: each timed launch alone between two events, optionally after an
// L2 flush; measures latency + bandwidth of a cold launch.
// Stream (default): R copies of the step's tensors ("buffer sets"), launches
// back to back cycling over them, K launches between two events; the time per
// launch is the elapsed time / K. Consecutive launches touch different
// memory (R sets span >= 4x the L2), and each launch's latency overlaps the
// previous launch's execution, as in a layer's stream of kernels. A
// contraction's K launches are replayed as one CUDA graph, as the runtime runs
// a step: the nodes cuBLASLt adds (a memset before some kernels, which the
// runtime turns into fill kernels: GraphFills.h) then cost what they cost
// there.
// Same-size copy: a device-to-device copy moving a step's bytes, timed the
// step's way (stream: over R source/destination pairs), as its reference.
//
//===----------------------------------------------------------------------===//
#include "runtime/HarnessInternal.h"

#include <algorithm>
#include <tuple>

namespace dmrt {

const char *timingModeName(TimingMode m) {
  return m == TimingMode::Stream ? "stream" : "isolated";
}

bool parseTimingMode(const std::string &s, TimingMode &out) {
  if (s == "stream")
    out = TimingMode::Stream;
  else if (s == "isolated")
    out = TimingMode::Isolated;
  else
    return false;
  return true;
}

int streamBufferSets(int64_t l2Bytes, int64_t footprintBytes, int64_t setBytes,
                     int64_t freeBytes) {
  constexpr int64_t kMaxSets = 64, kKeepFree = int64_t(1) << 30;
  if (l2Bytes <= 0)
    return 1;
  int64_t footprint = std::max<int64_t>(footprintBytes, 1);
  int64_t sets = std::clamp<int64_t>((4 * l2Bytes + footprint - 1) / footprint,
                                     1, kMaxSets);
  if (freeBytes >= 0 && setBytes > 0) {
    int64_t spare = freeBytes - kKeepFree;
    int64_t extra = spare > 0 ? spare / setBytes : 0;
    sets = std::min(sets, 1 + extra);
  }
  return static_cast<int>(std::max<int64_t>(sets, 1));
}

int streamLaunchesPerSample(int sets) {
  constexpr int kMinLaunches = 20;
  sets = std::max(sets, 1);
  return (kMinLaunches + sets - 1) / sets * sets;
}

int streamSamples(int reps, int launchesPerSample) {
  if (reps <= 0)
    return 0;
  int k = std::max(launchesPerSample, 1);
  return std::max((reps + k - 1) / k, std::min(reps, 7));
}

int64_t sameSizeCopyBytes(int64_t stepBytes) {
  return stepBytes >= 2 ? stepBytes / 2 : 0;
}

double pctSameSizeCopy(double copyUs, double stepUs) {
  return copyUs > 0 && stepUs > 0 ? 100.0 * copyUs / stepUs : 0;
}

bool CopyTimingKey::operator<(const CopyTimingKey &o) const {
  return std::tie(copyBytes, timing, flushL2, reps, warmup) <
         std::tie(o.copyBytes, o.timing, o.flushL2, o.reps, o.warmup);
}

bool CopyTimingKey::operator==(const CopyTimingKey &o) const {
  return !(*this < o) && !(o < *this);
}

CopyTimingKey copyTimingKey(int64_t stepBytes, const HarnessOptions &opt) {
  CopyTimingKey k;
  k.copyBytes = sameSizeCopyBytes(stepBytes);
  k.timing = opt.timing;
  k.flushL2 = opt.timing == TimingMode::Isolated && opt.flushL2;
  k.reps = opt.reps;
  k.warmup = opt.warmup;
  return k;
}

namespace detail {
namespace {

/// One sample's launches captured from a stream as a CUDA graph, destroyed
/// with it.
struct SampleGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  SampleGraph() = default;
  SampleGraph(const SampleGraph &) = delete;
  SampleGraph &operator=(const SampleGraph &) = delete;
  ~SampleGraph() {
    if (exec)
      cudaGraphExecDestroy(exec);
    if (graph)
      cudaGraphDestroy(graph);
  }
  /// Captures what `enqueue` puts on `st` and instantiates it, cuBLASLt's
  /// memset nodes replaced by fill kernels when tc has them; CudaError when
  /// enqueueing, capturing, replacing or instantiating failed (`error` says
  /// why).
  template <typename F>
  StepStatus capture(cudaStream_t st, const TimingContext &tc, F &&enqueue,
                     std::string &error) {
    DMRT_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    bool ok = enqueue();
    cudaError_t e = cudaStreamEndCapture(st, &graph);
    if (!ok)
      return StepStatus::CudaError;
    if (e != cudaSuccess) {
      error = cudaMsg(e, "cudaStreamEndCapture (a sample's launches as a CUDA graph)");
      return StepStatus::CudaError;
    }
    int filled = 0, kept = 0;
    if (tc.driver && tc.fills && !tc.fills->replaceMemsets(*tc.driver, graph, filled, kept, error))
      return StepStatus::CudaError;
    DMRT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    return StepStatus::Ok;
  }
};

} // namespace

StepStatus elapsedPerLaunch(const std::vector<cudaEvent_t> &ev,
                            int launchesPerSample, std::vector<double> &us,
                            std::string &error) {
  us.clear();
  for (size_t i = 0; i + 1 < ev.size(); i += 2) {
    float ms = 0;
    DMRT_CUDA(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
    us.push_back(ms * 1e3 / launchesPerSample);
  }
  return StepStatus::Ok;
}

StepStatus timeIsolated(const Launch &launch, TimingContext &tc,
                        StepResult &out, std::string &error) {
  const HarnessOptions &opt = tc.opt;
  cudaStream_t st = tc.stream;
  int reps = std::max(opt.reps, 0);
  Events ev;
  DMRT_CUDA(ev.create(2 * static_cast<size_t>(reps)));
  bool flush = opt.flushL2 && tc.info.l2Bytes > 0;
  if (flush && !tc.flush) {
    tc.flushBytes = 2 * static_cast<size_t>(tc.info.l2Bytes);
    DMRT_CUDA(cudaMalloc(&tc.flush, tc.flushBytes));
  }
  for (int i = 0; i < opt.warmup; ++i)
    if (!launch(error))
      return StepStatus::CudaError;
  for (int i = 0; i < reps; ++i) {
    if (flush)
      DMRT_CUDA(cudaMemsetAsync(tc.flush, i & 0xFF, tc.flushBytes, st));
    DMRT_CUDA(cudaEventRecord(ev.ev[2 * i], st));
    if (!launch(error))
      return StepStatus::CudaError;
    DMRT_CUDA(cudaEventRecord(ev.ev[2 * i + 1], st));
  }
  DMRT_CUDA(cudaStreamSynchronize(st));
  DMRT_CUDA(cudaGetLastError());
  std::vector<double> us;
  if (StepStatus s = elapsedPerLaunch(ev.ev, 1, us, error); s != StepStatus::Ok)
    return s;
  out.time = summarizeTimes(us);
  out.bufferSets = 1;
  out.launchesPerSample = 1;
  return StepStatus::Ok;
}

StepStatus timeStream(StepBuffers &buf, int64_t footprintBytes,
                      const Setup &setup, uint64_t dropoutSeed,
                      TimingContext &tc, StepResult &out, std::string &error,
                      bool asGraph) {
  const HarnessOptions &opt = tc.opt;
  cudaStream_t st = tc.stream;
  size_t freeB = 0, totalB = 0;
  int64_t freeBytes = -1;
  if (cudaMemGetInfo(&freeB, &totalB) == cudaSuccess)
    freeBytes = static_cast<int64_t>(freeB);
  else
    cudaGetLastError();
  int want = streamBufferSets(tc.info.l2Bytes, footprintBytes, buf.setBytes(),
                              freeBytes);
  // Sets 1..R-1: copies of set 0 (inputs as filled, outputs as computed).
  // An allocation failure ends the list early: fewer sets, not an error.
  while (static_cast<int>(buf.sets.size()) < want) {
    std::map<int64_t, void *> set;
    bool ok = true;
    for (const auto &kv : buf.baseBytes) {
      void *p = nullptr;
      if (cudaMalloc(&p, kv.second) != cudaSuccess) {
        cudaGetLastError(); // not sticky: clear it
        ok = false;
        break;
      }
      set[kv.first] = p;
    }
    if (!ok) {
      for (auto &kv : set)
        cudaFree(kv.second);
      break;
    }
    buf.sets.push_back(std::move(set)); // owned by buf from here
    for (const auto &kv : buf.baseBytes)
      DMRT_CUDA(cudaMemcpyAsync(buf.sets.back().at(kv.first),
                                buf.sets[0].at(kv.first), kv.second,
                                cudaMemcpyDeviceToDevice, st));
  }
  int sets = static_cast<int>(buf.sets.size());
  std::vector<Launch> launches(sets);
  for (int s = 0; s < sets; ++s)
    if (StepStatus r = setup(buf.ptrFn(s), dropoutSeed, launches[s], error);
        r != StepStatus::Ok)
      return r;
  int perSample = streamLaunchesPerSample(sets);
  int samples = streamSamples(opt.reps, perSample);
  Events ev;
  DMRT_CUDA(ev.create(2 * static_cast<size_t>(samples)));
  int next = 0;
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (!launches[next](error))
        return false;
      next = (next + 1) % sets;
    }
    return true;
  };
  // Warm-up: one round over the sets (at least opt.warmup launches).
  if (opt.warmup > 0 && !run(std::max(sets, opt.warmup)))
    return StepStatus::CudaError;
  SampleGraph graph;
  if (asGraph) {
    if (StepStatus s = graph.capture(st, tc, [&] { return run(perSample); }, error);
        s != StepStatus::Ok)
      return s;
    DMRT_CUDA(cudaGraphLaunch(graph.exec, st)); // uploads it: a warm-up replay
  }
  for (int i = 0; i < samples; ++i) {
    DMRT_CUDA(cudaEventRecord(ev.ev[2 * i], st));
    if (asGraph)
      DMRT_CUDA(cudaGraphLaunch(graph.exec, st));
    else if (!run(perSample))
      return StepStatus::CudaError;
    DMRT_CUDA(cudaEventRecord(ev.ev[2 * i + 1], st));
  }
  DMRT_CUDA(cudaStreamSynchronize(st));
  DMRT_CUDA(cudaGetLastError());
  std::vector<double> us;
  if (StepStatus s = elapsedPerLaunch(ev.ev, perSample, us, error);
      s != StepStatus::Ok)
    return s;
  out.time = summarizeTimes(us);
  out.bufferSets = sets;
  out.launchesPerSample = perSample;
  return StepStatus::Ok;
}

double sameSizeCopyUs(int64_t stepBytes, TimingContext &tc) {
  CopyTimingKey key = copyTimingKey(stepBytes, tc.opt);
  if (key.copyBytes <= 0)
    return 0;
  if (auto it = tc.copyCache.find(key); it != tc.copyCache.end())
    return it->second;
  size_t bytes = static_cast<size_t>(key.copyBytes);
  cudaStream_t st = tc.stream;
  // Set 0: base 0 the source, base 1 the destination; timeStream adds pairs.
  StepBuffers buf;
  for (int64_t id : {int64_t(0), int64_t(1)}) {
    void *p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError(); // not sticky: clear it
      return 0;
    }
    buf.sets[0][id] = p;
    buf.baseBytes[id] = bytes;
    buf.view[id] = {id, 0};
  }
  Setup setup = [bytes, st](const PtrFn &ptr, uint64_t, Launch &launch,
                            std::string &) {
    const void *src = ptr(0);
    void *dst = ptr(1);
    launch = [src, dst, bytes, st](std::string &err) {
      cudaError_t e =
          cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
      if (e != cudaSuccess) {
        err = cudaMsg(e, "cudaMemcpyAsync (same-size copy)");
        return false;
      }
      return true;
    };
    return StepStatus::Ok;
  };
  std::string error;
  StepResult r;
  StepStatus s = [&]() -> StepStatus {
    DMRT_CUDA(cudaMemsetAsync(buf.sets[0].at(0), 1, bytes, st));
    DMRT_CUDA(cudaMemsetAsync(buf.sets[0].at(1), 0, bytes, st));
    if (tc.opt.timing == TimingMode::Isolated) {
      Launch launch;
      if (StepStatus r0 = setup(buf.ptrFn(0), 0, launch, error);
          r0 != StepStatus::Ok)
        return r0;
      return timeIsolated(launch, tc, r, error);
    }
    return timeStream(buf, 2 * key.copyBytes, setup, 0, tc, r, error);
  }();
  if (s != StepStatus::Ok || !(r.time.medianUs > 0)) {
    cudaStreamSynchronize(st);
    cudaGetLastError();
    return 0;
  }
  tc.copyCache[key] = r.time.medianUs;
  return r.time.medianUs;
}

} // namespace detail
} // namespace dmrt
