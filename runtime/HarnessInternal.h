//===- HarnessInternal.h - Shared pieces of the harness's GPU side -*- C++ -*-===//
//
// Private to Harness.cpp, HarnessStep.cpp and StreamTiming.cpp: the buffers
// of one step (buffer set 0 is checked; stream timing adds more sets), the
// launch closures, and the step runner and its two timing modes (which also
// time each step's same-size copy and, for a contraction under
// AlgorithmMode::All, each of its algorithms).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_HARNESSINTERNAL_H
#define DMRT_HARNESSINTERNAL_H

#include "runtime/GraphFills.h"
#include "runtime/Harness.h"

#include <cuda_runtime_api.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dmrt {
namespace detail {

inline std::string cudaMsg(cudaError_t e, const char *call) {
  return std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
         cudaGetErrorString(e) + ")";
}

/// Returns StepStatus::CudaError from the enclosing function (which has a
/// `std::string &error`) when `call` fails.
#define DMRT_CUDA(call)                                                        \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      error = ::dmrt::detail::cudaMsg(e_, #call);                              \
      return StepStatus::CudaError;                                            \
    }                                                                          \
  } while (0)

/// One launch of the step on one buffer set.
using Launch = std::function<bool(std::string &)>;
/// Device address of a tensor of the step in one buffer set.
using PtrFn = std::function<void *(int64_t)>;
/// Builds the launch closure of one buffer set. Called once per set (stream
/// timing: R times), so it must not keep mutable state between calls: every
/// launch closure owns its own parameters.
using Setup = std::function<StepStatus(const PtrFn &ptr, uint64_t dropoutSeed,
                                       Launch &launch, std::string &error)>;

struct StepSpec {
  char prefix; // 'k' or 'c'
  int64_t id;
  std::vector<int64_t> inputs, outputs;
};

/// Device buffers of the base tensors a step touches, per buffer set. Every
/// set has the same base tensors and sizes; tensor views (aliases) are a base
/// and a byte offset, the same in every set.
struct StepBuffers {
  std::vector<std::map<int64_t, void *>> sets{1}; // set -> base id -> memory
  std::map<int64_t, size_t> baseBytes;            // base id -> bytes allocated
  std::map<int64_t, std::pair<int64_t, int64_t>> view; // id -> (base, byte offset)

  StepBuffers() = default;
  StepBuffers(const StepBuffers &) = delete;
  StepBuffers &operator=(const StepBuffers &) = delete;
  ~StepBuffers();
  /// Frees every set (ptr() is unusable afterwards).
  void freeAll();
  void *ptr(size_t set, int64_t id) const;
  PtrFn ptrFn(size_t set) const {
    return [this, set](int64_t id) { return ptr(set, id); };
  }
  /// Bytes of one set.
  int64_t setBytes() const;
};

/// What the timing of a step needs besides its buffers.
struct TimingContext {
  const HarnessOptions &opt;
  const DeviceInfo &info;
  cudaStream_t stream;
  void *&flush; // the L2 flush buffer (isolated timing), allocated on demand
  size_t &flushBytes;
  /// Same-size copy times of this Harness (sameSizeCopyUs); failures are not
  /// cached.
  std::map<CopyTimingKey, double> &copyCache;
  /// With both: a contraction's sample graph gets fill kernels for
  /// cuBLASLt's memset nodes, as the executor's graphs do (GraphFills.h).
  CudaDriver *driver = nullptr;
  const GraphFills *fills = nullptr;
};

/// Other ways of running a step, timed after it on the same buffers (a
/// contraction under AlgorithmMode::All: one per algorithm of `algos`,
/// whose entry 0 is normally the step's own, the heuristic's best).
struct StepVariants {
  const std::vector<GemmAlgorithm> *algos = nullptr;
  /// The Setup of entry i (as the step's).
  std::function<Setup(size_t)> setup;
  /// Filled by runStep: summarizeAlgorithmSweep and every entry's check.
  AlgorithmSweep *sweep = nullptr;
  /// Called by runStep with the step's own median time (us) before the
  /// entries are timed: prices them, and may drop entries of *algos (pruning).
  std::function<void(double)> beforeTiming;
};

/// Allocates and fills buffer set 0, runs the step once, checks it against
/// the reference (--reference), then times it as opt.timing says. With
/// `variants`: then times each of them (timeVariants) and runs each one that
/// ran once more on the same inputs, comparing its outputs with the
/// reference, or, where the compiler skipped the reference (the step then
/// runs on inputs drawn from the seed and is not itself checked), with the
/// step's own outputs; an entry that fails is rejected (AlgorithmRun), never
/// the sweep's best, and does not fail the step.
StepStatus runStep(const Bundle &b, const StepSpec &spec, TimingContext &tc,
                   const Setup &setup, StepResult &out, std::string &error,
                   const StepVariants *variants = nullptr);

/// Times every entry of `v` as the step is timed (buffer sets of `buf`;
/// tc.opt.reps replaced by min(reps, sweepReps)) into `us` (0: it failed;
/// counted, not fatal) and sweep.runs (one per entry: its median and
/// fastest launch; runStep fills in the rest). Fatal (CudaError) only when the context is broken
/// afterwards (cudaStreamSynchronize fails).
StepStatus timeVariants(StepBuffers &buf, int64_t footprintBytes,
                        const StepVariants &v, uint64_t dropoutSeed,
                        TimingContext &tc, std::vector<double> &us,
                        AlgorithmSweep &sweep, std::string &error);

/// Times `launch` alone: [L2 flush,] event, launch, event; opt.reps times
/// after opt.warmup launches.
StepStatus timeIsolated(const Launch &launch, TimingContext &tc,
                        StepResult &out, std::string &error);

/// Times back-to-back launches cycling over R buffer sets (set 0 is copied
/// to sets 1..R-1; streamBufferSets picks R). `footprintBytes`: the bytes of
/// the tensors the step touches. With `asGraph` (contractions: a cuBLASLt call
/// may add memset nodes before its kernel, whose dependency latency a step's
/// CUDA graph pays and launches enqueued back to back hide) the K launches of
/// a sample are captured once into a CUDA graph, which each sample replays.
StepStatus timeStream(StepBuffers &buf, int64_t footprintBytes,
                      const Setup &setup, uint64_t dropoutSeed,
                      TimingContext &tc, StepResult &out, std::string &error,
                      bool asGraph = false);

/// The median per-launch time of the same-size copy of a step of
/// `stepBytes` (sameSizeCopyBytes), timed as tc.opt says: isolated as
/// timeIsolated, stream as timeStream over R source/destination pairs (R
/// from the pair's bytes, as for a step). Cached in tc.copyCache. 0 when it
/// cannot be measured (no bytes, allocation or CUDA failure): never an error
/// of the step.
double sameSizeCopyUs(int64_t stepBytes, TimingContext &tc);

/// Per-launch times in microseconds of events [2i, 2i+1], each divided by
/// `launchesPerSample`.
StepStatus elapsedPerLaunch(const std::vector<cudaEvent_t> &ev,
                            int launchesPerSample, std::vector<double> &us,
                            std::string &error);

/// Events that destroy themselves.
struct Events {
  std::vector<cudaEvent_t> ev;
  Events() = default;
  Events(const Events &) = delete;
  Events &operator=(const Events &) = delete;
  ~Events() {
    for (cudaEvent_t e : ev)
      if (e)
        cudaEventDestroy(e);
  }
  cudaError_t create(size_t n) {
    ev.assign(n, nullptr);
    for (cudaEvent_t &e : ev)
      if (cudaError_t r = cudaEventCreate(&e); r != cudaSuccess)
        return r;
    return cudaSuccess;
  }
};

} // namespace detail
} // namespace dmrt

#endif // DMRT_HARNESSINTERNAL_H
