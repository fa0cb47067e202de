//===- Executor.h - Run a bundle's forward and backward on a stream -*- C++ -*-===//
//
// The GPU half of running a layer (the CPU half, LayerPlan and LayerBindings,
// is checked first). open() checks the bundle's arch against the device's
// compute capability, prepares every step once (BundleKernels, shared with
// the benchmark harness: each cubin from the process-wide module cache,
// loaded once per device from the bytes loadBundle read and shared with
// other executors of the same bundle; each contraction's cuBLASLt
// descriptors and the heuristic's best algorithm), and allocates the one
// arena of the memory plan (unless the caller provides it: setArena). Tensor addresses: an
// intermediate at its planned offset in the arena, an alias inside its base,
// a caller tensor in the buffer bound to it (LayerBindings); kernel
// workspaces at their planned offsets, zeroed once per arena before the
// first launch. The cuBLASLt workspace (GemmRunner::kWorkspaceBytes) is the
// executor's own allocation (in its BundleKernels).
//
// Every kernel's launch parameters (KernelLaunch) are built once per set of
// tensor addresses (a bind that moved a pointer, a new arena) and reused:
// a launch, plain or captured, only writes its seed, and the run path
// allocates no host memory.
//
// run(phase) launches the phase's steps on the caller's stream. With graphs
// on (the default) the first run of a phase captures its launches into a
// CUDA graph (on the executor's own stream, so any caller stream works, the
// legacy default stream included) and later runs replay it; a new dropout
// key only rewrites the captured kernels' seed parameters
// (cuGraphExecKernelNodeSetParams), and new bound pointers or a new arena
// make the next run capture again. A caller stream that is itself being
// captured gets plain launches (they join the caller's graph).
//
// Every method that touches the device (open, run, timeSteps, setArena,
// checkDevicePointer, the destructor) runs under a DeviceGuard: on the
// executor's device, the caller's current device restored on return.
//
// What a run needs (every tensor of the phase bound, an arena, backward only
// after a training forward) is checked by the C API before it calls run or
// timeSteps (runtime/dmrtRun.cpp, checkRunnable); the executor runs what it
// is asked to.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_EXECUTOR_H
#define DMRT_EXECUTOR_H

#include "runtime/Bundle.h"
#include "runtime/BundleKernels.h"
#include "runtime/CudaDriver.h"
#include "runtime/KernelLaunch.h"
#include "runtime/LayerBindings.h"
#include "runtime/LayerPlan.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dmrt {

struct ExecutorOptions {
  int device = 0;
  bool graphs = true;        ///< capture and replay each phase
  bool externalArena = false; ///< the caller provides the arena (setArena)
  bool poisonArena = false;   ///< 0xFF-fill each arena before its first step (tests)
};

struct MemoryInfo {
  int64_t arenaBytes = 0;          ///< the plan's arena (manifest arena_bytes)
  int64_t kernelWorkspaceBytes = 0; ///< of which kernel workspaces
  int64_t gemmWorkspaceBytes = 0;   ///< cuBLASLt workspace, owned by the executor
  int64_t callerBytes = 0;          ///< caller buffers (not allocated by the runtime)
};

class Executor {
public:
  Executor(const Bundle &b, const LayerPlan &p, const LayerBindings &bindings);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// Opens the device and prepares everything (see above) from the cubins
  /// loadBundle read (`images`, needed during open only). On failure
  /// noDevice() tells a missing GPU or driver from a real error.
  bool open(const ExecutorOptions &o, const CubinImages &images, std::string &error);
  bool noDevice() const { return driver_.noDevice(); }
  /// After a failed open: the bundle's arch does not run on the device.
  bool archMismatch() const { return archMismatch_; }
  /// "NVIDIA H100 80GB HBM3 (sm_90)".
  const std::string &deviceName() const { return deviceName_; }

  /// Whether `p` is device memory usable on this executor's device.
  bool checkDevicePointer(const std::string &what, const void *p, std::string &error) const;
  /// Uses caller memory `p` (>= memory().arenaBytes bytes, 256-byte
  /// aligned, device memory) as the arena of an executor opened with
  /// externalArena; workspaces are zeroed before the next run.
  bool setArena(void *p, int64_t bytes, std::string &error);
  void *arena() const { return arena_; }
  void setGraphs(bool on) { graphsOn_ = on; }
  bool graphs() const { return graphsOn_; }

  /// Launches the steps of `phase` on `stream` with dropout key `key`
  /// (asynchronous: errors of the kernels themselves show at the caller's
  /// next synchronisation). Fails, before launching anything, when a tensor
  /// the phase uses is unbound or there is no arena.
  bool run(Phase phase, cudaStream_t stream, uint64_t key, std::string &error);
  /// Runs the phase's steps one by one between CUDA events on `stream`,
  /// synchronously, and returns each step's time in ms (plain launches).
  bool timeSteps(Phase phase, cudaStream_t stream, uint64_t key, std::vector<float> &ms,
                 std::string &error);
  /// Graph captures so far (for tests and dmc-run --bench).
  int captures() const { return captures_; }

  /// Device address of tensor `id`; nullptr when its buffer is unbound or
  /// it lives in the arena and there is none.
  void *tensorPtr(int64_t id) const;
  MemoryInfo memory() const;

private:
  struct Graph;
  struct CapturedKernel;
  bool zeroWorkspaces(cudaStream_t stream, std::string &error);
  /// Rebuilds launches_ when the bindings or the arena changed since.
  void prepareLaunches();
  bool launchStep(const BundleStep &s, cudaStream_t stream, uint64_t key,
                  std::vector<CapturedKernel> *captured, std::string &error);
  bool launchKernel(const BundleKernel &k, cudaStream_t stream, uint64_t key,
                    std::vector<CapturedKernel> *captured, std::string &error);
  bool runContraction(const BundleContraction &c, cudaStream_t stream, std::string &error);
  bool capture(Phase phase, uint64_t key, std::string &error);
  bool replay(Phase phase, cudaStream_t stream, uint64_t key, std::string &error);
  void dropGraph(Phase phase);

  const Bundle &b_;
  const LayerPlan &p_;
  const LayerBindings &bindings_;
  CudaDriver driver_;
  std::string deviceName_;
  int device_ = 0;
  bool archMismatch_ = false;
  void *arena_ = nullptr;
  bool ownsArena_ = false;
  void *zeroedArena_ = nullptr; ///< the arena whose workspaces are zeroed (and poisoned)
  bool graphsOn_ = true;
  bool poisonArena_ = false;
  cudaStream_t captureStream_ = nullptr;
  int captures_ = 0;
  std::unique_ptr<BundleKernels> kernels_; ///< destroyed before driver_, on the device
  std::vector<KernelLaunch> launches_;     ///< by kernel index
  uint64_t launchesVersion_ = 0;           ///< bindings version launches_ was built for
  void *launchesArena_ = nullptr;          ///< ... and arena
  bool launchesBuilt_ = false;
  std::unique_ptr<Graph> graphs_[2];
};

} // namespace dmrt

#endif // DMRT_EXECUTOR_H
