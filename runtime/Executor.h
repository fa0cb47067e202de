//===- Executor.h - Run a bundle's forward and backward on a stream -*- C++ -*-===//
//
// The GPU half of running a layer (the CPU half, LayerPlan and LayerBindings,
// is checked first). open() checks the bundle's arch against the device's
// compute capability, prepares every step once (BundleKernels, shared with
// the benchmark harness: each cubin from the process-wide module cache,
// loaded once per device from the bytes loadBundle read and shared with
// other executors of the same bundle; each contraction's cuBLASLt
// descriptors and the heuristic's best algorithm), and allocates the one
// arena of the memory plan (unless the caller provides it: setArena): the
// training plan's, or with inferenceOnly the smaller forward-only plan's
// (runtime/format/ArenaPlan.h). Tensor addresses: an intermediate at its
// planned offset in the arena, an alias inside its base, a caller tensor in
// the buffer bound to it (LayerBindings); kernel workspaces at their planned
// offsets, zeroed before the first launch of each (arena, plan) and again
// after each setArena (the caller's memory between runs). Offsets
// come from the plan of the run: a training forward and backward use the
// training plan, an inference forward the inference plan (the training plan
// for bundles before version 5); the forward of each plan is captured into a
// graph of its own. The cuBLASLt workspace (GemmRunner::kWorkspaceBytes) is
// the executor's own allocation (in its BundleKernels).
//
// Every kernel's launch parameters (KernelLaunch) are built once per set of
// tensor addresses (a bind that moved a pointer, a new arena, another plan)
// and reused: a launch, plain or captured, only writes its seed, and the run
// path allocates no host memory.
//
// run(phase) launches the phase's steps on the caller's stream. With graphs
// on (the default) the first run of a phase captures its launches into a
// CUDA graph (on the executor's own stream, so any caller stream works, the
// legacy default stream included) and later runs replay it; a new dropout
// key only rewrites the captured kernels' seed parameters
// (cuGraphExecKernelNodeSetParams), and new bound pointers or a new arena
// make the next run capture again, updating the executable graph in place
// (cudaGraphExecUpdate: no instantiation) when the capture has its topology,
// as it does unless the plan or graph mode changed. Each capture's memset
// nodes (cuBLASLt's) become fill kernels first (GraphFills.h), unless
// ExecutorOptions::graphFills is off. A caller stream that is itself being
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
#include "runtime/GraphFills.h"
#include "runtime/KernelLaunch.h"
#include "runtime/LayerBindings.h"
#include "runtime/LayerPlan.h"
#include "runtime/StepDependencies.h"
#include "runtime/format/ArenaPlan.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dmrt {

struct ExecutorOptions {
  int device = 0;
  bool graphs = true;        ///< capture and replay each phase
  /// Captured graphs order steps by the memory they share only
  /// (runtime/StepDependencies.h), so independent steps may overlap; false:
  /// one chain in the manifest's order.
  bool concurrentGraphs = true;
  bool externalArena = false; ///< the caller provides the arena (setArena)
  bool poisonArena = false;   ///< 0xFF-fill each arena before its first step (tests)
  /// Only inference runs: an owned arena has the inference plan's size.
  bool inferenceOnly = false;
  /// The memset nodes cuBLASLt adds to a captured graph become fill kernels
  /// (runtime/GraphFills.h); false keeps them.
  bool graphFills = true;
};

struct MemoryInfo {
  /// The arena everything the executor may run needs: the training plan's
  /// (manifest arena_bytes), or the inference plan's when inferenceOnly.
  int64_t arenaBytes = 0;
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
  /// Uses caller memory `p` (256-byte aligned, device memory, at least the
  /// inference plan's bytes: what the smallest run needs) as the arena of an
  /// executor opened with externalArena; workspaces are zeroed before the
  /// next run. Whether a run fits is checked by the caller (arenaFits).
  bool setArena(void *p, int64_t bytes, std::string &error);
  void *arena() const { return arena_; }
  /// Bytes of the current arena (allocated or given; 0 without one).
  int64_t arenaCapacity() const { return arena_ ? arenaCapacity_ : 0; }
  void setGraphs(bool on) { graphsOn_ = on; }
  /// Concurrent (memory-ordered) or serial captures; a change drops the
  /// captured graphs.
  void setConcurrentGraphs(bool on) {
    if (on != concurrentGraphs_)
      dropGraphs();
    concurrentGraphs_ = on;
  }
  /// The last capture of `phase` (training forward or backward): steps,
  /// dependency edges and the longest chain (0s for a serial capture or
  /// none yet).
  void graphShape(Phase phase, int &steps, int &edges, int &criticalPath) const;
  /// The last capture of `phase`: memset nodes that became fill kernels, and
  /// those kept (graph fills off, or a memset GraphFills cannot replace).
  void graphMemsets(Phase phase, int &filled, int &kept) const;
  bool graphs() const { return graphsOn_; }

  /// Launches the steps of `phase` on `stream` with dropout key `key`, the
  /// tensors at their offsets in plan `plan` (Inference only with Forward;
  /// planUsed applied here)
  /// (asynchronous: errors of the kernels themselves show at the caller's
  /// next synchronisation). Fails, before launching anything, when a tensor
  /// the phase uses is unbound or there is no arena.
  bool run(Phase phase, ArenaPlanKind plan, cudaStream_t stream, uint64_t key,
           std::string &error);
  /// Runs the phase's steps one by one between CUDA events on `stream`,
  /// synchronously, and returns each step's time in ms (plain launches).
  bool timeSteps(Phase phase, ArenaPlanKind plan, cudaStream_t stream, uint64_t key,
                 std::vector<float> &ms, std::string &error);
  /// Graph captures instantiated so far, and captures that updated an
  /// executable graph in place instead (rebound buffers; for tests).
  int captures() const { return captures_; }
  int graphUpdates() const { return updates_; }

  /// Device address of tensor `id` under the plan of the last run; nullptr
  /// when its buffer is unbound or it lives in the arena and there is none
  /// (or the plan gives it no offset).
  void *tensorPtr(int64_t id) const;
  MemoryInfo memory() const;

private:
  struct Graph;
  struct CapturedKernel;
  /// Selects the plan of a run (planUsed); false for an inference backward.
  bool usePlan(Phase phase, ArenaPlanKind plan, std::string &error);
  bool zeroWorkspaces(cudaStream_t stream, std::string &error);
  /// graphs_ slot of `phase` under plan_: training forward, backward,
  /// inference forward (its own offsets, so its own graph).
  int graphSlot(Phase phase) const;
  /// Rebuilds launches_ when the bindings or the arena changed since.
  void prepareLaunches();
  /// Launches step `s`: all of it, or (`part` >= 0) only that launch of a
  /// kernel with a finishing launch (BundleKernels::parts).
  bool launchStep(const BundleStep &s, cudaStream_t stream, uint64_t key,
                  std::vector<CapturedKernel> *captured, std::string &error, int part = -1);
  /// The bytes step `s` reads and writes under the current plan and bindings:
  /// all of it, or (`part` 0 or 1) one launch of a kernel whose manifest
  /// says which outputs its finishing launch writes (finishOutputs).
  std::vector<MemoryAccess> stepAccesses(const BundleStep &s, int part = -1) const;
  /// Launches the phase's steps into the capture on captureStream_, each
  /// after the steps it depends on (StepDependencies.h); a kernel's
  /// finishing launch with outputs of its own is ordered apart.
  bool captureConcurrent(Phase phase, uint64_t key, Graph &g, std::string &error);
  bool launchKernel(const BundleKernel &k, cudaStream_t stream, uint64_t key,
                    std::vector<CapturedKernel> *captured, std::string &error,
                    int onlyPart = -1);
  bool runContraction(const BundleContraction &c, cudaStream_t stream, std::string &error);
  bool capture(Phase phase, uint64_t key, std::string &error);
  bool replay(Phase phase, cudaStream_t stream, uint64_t key, std::string &error);
  void dropGraph(int slot);
  void dropGraphs();

  const Bundle &b_;
  const LayerPlan &p_;
  const LayerBindings &bindings_;
  CudaDriver driver_;
  std::string deviceName_;
  int device_ = 0;
  bool archMismatch_ = false;
  void *arena_ = nullptr;
  bool ownsArena_ = false;
  int64_t arenaCapacity_ = 0;
  /// The plan of the run in progress (after planUsed).
  ArenaPlanKind plan_ = ArenaPlanKind::Training;
  /// The arena and plan whose workspaces are zeroed (and the arena poisoned).
  void *zeroedArena_ = nullptr;
  ArenaPlanKind zeroedPlan_ = ArenaPlanKind::Training;
  bool inferenceOnly_ = false;
  bool graphsOn_ = true;
  bool concurrentGraphs_ = true;
  bool poisonArena_ = false;
  GraphFills fills_; ///< loaded when graph fills are on
  cudaStream_t captureStream_ = nullptr;
  int captures_ = 0, updates_ = 0;
  std::unique_ptr<BundleKernels> kernels_; ///< destroyed before driver_, on the device
  std::vector<KernelLaunch> launches_;     ///< by kernel index
  uint64_t launchesVersion_ = 0;           ///< bindings version launches_ was built for
  void *launchesArena_ = nullptr;          ///< ... and arena
  ArenaPlanKind launchesPlan_ = ArenaPlanKind::Training; ///< ... and plan
  bool launchesBuilt_ = false;
  std::unique_ptr<Graph> graphs_[3]; ///< by graphSlot
};

} // namespace dmrt

#endif // DMRT_EXECUTOR_H
