//===- Executor.cpp - Open a bundle on the device and launch its steps ----===//
#include "runtime/Executor.h"

#include "runtime/DeviceArch.h"
#include "runtime/DeviceGuard.h"
#include "runtime/ExecutorGraph.h"
#include "runtime/format/ArenaPlan.h"
#include "runtime/format/KernelAbi.h"

#include <algorithm>

namespace dmrt {

Executor::Executor(const Bundle &b, const LayerPlan &p, const LayerBindings &bindings)
    : b_(b), p_(p), bindings_(bindings) {}

Executor::~Executor() {
  // On the layer's device (the caller's current device comes back after).
  DeviceGuard guard;
  std::string ignored;
  bool onDevice = driver_.isOpen() && guard.use(device_, ignored);
  // Work of this layer may still run on the caller's streams: wait before
  // freeing its modules and memory (closing a layer is rare).
  if (onDevice)
    cudaDeviceSynchronize();
  dropGraphs();
  kernels_.reset(); // before driver_
  if (onDevice)
    fills_.unload(driver_);
  if (ownsArena_ && arena_)
    cudaFree(arena_);
  if (captureStream_)
    cudaStreamDestroy(captureStream_);
}

bool Executor::open(const ExecutorOptions &o, const CubinImages &images, std::string &error) {
  device_ = o.device;
  graphsOn_ = o.graphs;
  concurrentGraphs_ = o.concurrentGraphs;
  poisonArena_ = o.poisonArena;
  inferenceOnly_ = o.inferenceOnly;
  // CudaDriver::open makes the device current; the guard switches back.
  DeviceGuard guard;
  guard.assumeSwitched();
  if (!driver_.open(o.device, error))
    return false;
  cudaDeviceProp prop;
  if (!cudaCheck(cudaGetDeviceProperties(&prop, o.device), "cudaGetDeviceProperties", error))
    return false;
  deviceName_ = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
                std::to_string(prop.minor) + ")";
  if (!archRunsOn(b_.arch, prop.major, prop.minor, error)) {
    archMismatch_ = true;
    error = b_.dir + ": " + error;
    return false;
  }
  if (!cudaCheck(cudaStreamCreateWithFlags(&captureStream_, cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags", error))
    return false;
  if (o.graphFills && !fills_.load(driver_, error))
    return false;
  kernels_ = std::make_unique<BundleKernels>(b_, driver_);
  if (!kernels_->prepareAll(images, error))
    return false;
  if (!o.externalArena) {
    int64_t bytes = memory().arenaBytes;
    if (!cudaCheck(cudaMalloc(&arena_, size_t(std::max<int64_t>(bytes, 1))),
                   "cudaMalloc of the arena (" + std::to_string(bytes) + " bytes)", error))
      return false;
    ownsArena_ = true;
    arenaCapacity_ = bytes;
  }
  return true;
}

bool Executor::checkDevicePointer(const std::string &what, const void *p,
                                  std::string &error) const {
  DeviceGuard guard;
  if (!guard.use(device_, error))
    return false;
  cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    cudaGetLastError(); // not sticky: clear it
    return cudaCheck(e, what + ": cudaPointerGetAttributes", error);
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) {
    error = what + ": pointer is not device memory (" +
            (a.type == cudaMemoryTypeHost ? "pinned host memory" : "unregistered host memory") +
            "); bind buffers from cudaMalloc or a CUDA caching allocator";
    return false;
  }
  if (a.type == cudaMemoryTypeDevice && a.device != device_) {
    error = what + ": pointer is memory of device " + std::to_string(a.device) +
            ", the layer runs on device " + std::to_string(device_);
    return false;
  }
  return true;
}

bool Executor::setArena(void *p, int64_t bytes, std::string &error) {
  if (!p) {
    error = "null arena pointer";
    return false;
  }
  int64_t smallest = arenaBytesOf(b_, planUsed(b_, ArenaPlanKind::Inference));
  if (bytes < smallest) {
    error = "arena of " + std::to_string(bytes) + " bytes given, the plan needs " +
            std::to_string(smallest) + " for inference and " + std::to_string(b_.arenaBytes) +
            " for training";
    return false;
  }
  if (reinterpret_cast<uintptr_t>(p) % uintptr_t(kArenaAlignment) != 0) {
    error = "arena pointer is misaligned: it must be " + std::to_string(kArenaAlignment) +
            "-byte aligned";
    return false;
  }
  if (!checkDevicePointer("arena", p, error))
    return false;
  arena_ = p; // a graph of another arena is captured again at its replay (updated in place)
  arenaCapacity_ = bytes;
  // Between runs the arena is the caller's memory: PyTorch's allocator hands a
  // freed arena back at the same address after other tensors have used it, so
  // the workspaces are zeroed again before the next run whatever the pointer
  // (a column kernel's arrival counters would otherwise start from garbage).
  zeroedArena_ = nullptr;
  return true;
}

void *Executor::tensorPtr(int64_t id) const {
  int64_t offset = 0, base = b_.baseOf(id, offset);
  const BundleTensor *t = b_.tensor(base);
  char *start = nullptr;
  int64_t buffer = p_.bufferOfBase(base);
  if (buffer >= 0)
    start = bindings_.bufferStart(size_t(buffer));
  else if (arena_ && tensorArenaOffset(*t, plan_) >= 0)
    start = static_cast<char *>(arena_) + tensorArenaOffset(*t, plan_);
  return start ? start + offset * int64_t(dtypeSize(t->dtype)) : nullptr;
}

MemoryInfo Executor::memory() const {
  MemoryInfo m;
  ArenaPlanKind plan = inferenceOnly_ ? ArenaPlanKind::Inference : ArenaPlanKind::Training;
  m.arenaBytes = arenaBytesOf(b_, planUsed(b_, plan));
  m.kernelWorkspaceBytes = planWorkspaceBytes(b_, plan);
  m.gemmWorkspaceBytes =
      kernels_ && kernels_->hasGemmWorkspace() ? int64_t(GemmRunner::kWorkspaceBytes) : 0;
  for (const CallerBuffer &cb : p_.buffers)
    m.callerBytes += cb.bytes;
  return m;
}

bool Executor::usePlan(Phase phase, ArenaPlanKind plan, std::string &error) {
  if (phase == Phase::Backward && plan == ArenaPlanKind::Inference) {
    error = "backward has no inference plan"; // the C API never asks
    return false;
  }
  plan_ = planUsed(b_, plan);
  return true;
}

int Executor::graphSlot(Phase phase) const {
  return phase == Phase::Forward && plan_ == ArenaPlanKind::Inference ? 2 : int(phase);
}

/// The two plans place workspaces and tensors differently, so a run under
/// the other plan than the last one zeroes its workspaces again (the other
/// plan's tensors may have covered them). Nothing in the arena survives a
/// change of plan: the C API drops a pending training forward when an
/// inference forward runs.
bool Executor::zeroWorkspaces(cudaStream_t stream, std::string &error) {
  if (zeroedArena_ == arena_ && zeroedPlan_ == plan_)
    return true;
  // Poison first: the workspaces inside it must then start at zero.
  if (poisonArena_ &&
      !cudaCheck(cudaMemsetAsync(arena_, 0xFF, size_t(arenaBytesOf(b_, plan_)), stream),
                 "poisoning the arena", error))
    return false;
  for (const BundleKernel &k : b_.kernels)
    if (k.workspaceBytes > 0 && workspaceArenaOffset(k, plan_) >= 0 &&
        !cudaCheck(cudaMemsetAsync(static_cast<char *>(arena_) + workspaceArenaOffset(k, plan_),
                                   0, size_t(k.workspaceBytes), stream),
                   "zeroing the workspace of kernel " + k.name, error))
      return false;
  zeroedArena_ = arena_;
  zeroedPlan_ = plan_;
  return true;
}

void Executor::prepareLaunches() {
  if (launchesBuilt_ && launchesVersion_ == bindings_.version() && launchesArena_ == arena_ &&
      launchesPlan_ == plan_)
    return;
  launches_.resize(b_.kernels.size());
  for (size_t i = 0; i < b_.kernels.size(); ++i) {
    const BundleKernel &k = b_.kernels[i];
    // A backward kernel has no workspace in the inference plan (never launched there).
    int64_t offset = workspaceArenaOffset(k, plan_);
    launches_[i].build(k, offset >= 0 ? static_cast<char *>(arena_) + offset : nullptr,
                       [this](int64_t id) { return tensorPtr(id); });
  }
  launchesVersion_ = bindings_.version();
  launchesArena_ = arena_;
  launchesPlan_ = plan_;
  launchesBuilt_ = true;
}

bool Executor::launchKernel(const BundleKernel &k, cudaStream_t stream, uint64_t key,
                            std::vector<CapturedKernel> *captured, std::string &error,
                            int onlyPart) {
  size_t index = size_t(&k - b_.kernels.data());
  // cuLaunchKernel copies the parameter values before returning.
  for (int part = 0; part < kernels_->parts(index); ++part) {
    if (onlyPart >= 0 && part != onlyPart)
      continue;
    if (!kernels_->launchPart(index, part, launches_[index].withSeed(key), stream, error))
      return false;
    if (captured) {
      CapturedKernel ck;
      ck.kernel = index;
      ck.part = part;
      if (!capturedNode(stream, ck.node, error))
        return false;
      captured->push_back(ck);
    }
  }
  return true;
}

std::vector<MemoryAccess> Executor::stepAccesses(const BundleStep &s, int part) const {
  std::vector<MemoryAccess> out;
  auto add = [&](const void *p, int64_t bytes, bool write) {
    if (p && bytes > 0)
      out.push_back({reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + uintptr_t(bytes),
                     write});
  };
  auto addTensor = [&](int64_t id, bool write) {
    // Dense: its bytes; a strided view: its runs (viewAccess).
    const BundleTensor *t = b_.tensor(id);
    const void *p = t ? tensorPtr(id) : nullptr;
    if (p && t->numElements() > 0)
      out.push_back(viewAccess(reinterpret_cast<uintptr_t>(p), t->shape, t->aliasStrides,
                               int64_t(dtypeSize(t->dtype)), write));
  };
  if (s.kind == BundleStep::Kernel) {
    const BundleKernel &k = *b_.kernel(s.id);
    // Part 0 (the kernel's own launch) reads the inputs and writes the
    // workspace and the outputs the finishing launch (part 1) does not;
    // part 1 reads the workspace and writes its outputs (finishOutputs).
    auto finishes = [&](size_t n) {
      return std::find(k.finishOutputs.begin(), k.finishOutputs.end(), int64_t(n)) !=
             k.finishOutputs.end();
    };
    if (part != 1)
      for (int64_t id : k.inputs)
        addTensor(id, false);
    for (size_t n = 0; n < k.outputs.size(); ++n)
      if (part < 0 || (part == 1) == finishes(n))
        addTensor(k.outputs[n], true);
    int64_t offset = workspaceArenaOffset(k, plan_);
    if (k.workspaceBytes > 0 && offset >= 0 && arena_)
      add(static_cast<char *>(arena_) + offset, k.workspaceBytes, part != 1);
  } else {
    const BundleContraction &c = *b_.contraction(s.id);
    for (int64_t id : c.inputs())
      addTensor(id, false);
    for (int64_t id : c.outputs())
      addTensor(id, true);
    // Every contraction is ordered after the last one through the shared
    // cuBLASLt workspace, also those whose algorithm needs none: letting
    // those overlap was no faster on an H100 (bert-large B8 L512 0.847-0.852
    // against 0.847-0.850 ms) and slower for gpt2-medium (1.788-1.791
    // against 1.769-1.773 ms): two GEMMs share the SMs, and the kernels
    // waiting for one of them start later.
    add(kernels_->gemmWorkspace(), int64_t(GemmRunner::kWorkspaceBytes), true);
  }
  return out;
}

bool Executor::runContraction(const BundleContraction &c, cudaStream_t stream,
                              std::string &error) {
  size_t index = size_t(&c - b_.contractions.data());
  const GemmDescriptor &g = c.gemm;
  const void *bias = c.bias >= 0 ? tensorPtr(c.bias) : nullptr;
  if (!kernels_->gemm(index)->run(tensorPtr(g.swapOperands ? c.b : c.a),
                          tensorPtr(g.swapOperands ? c.a : c.b), tensorPtr(c.d), bias, stream,
                          nullptr, error)) {
    error = "contraction " + std::to_string(c.id) + " (" + c.equation + "): " + error;
    return false;
  }
  return true;
}

bool Executor::launchStep(const BundleStep &s, cudaStream_t stream, uint64_t key,
                          std::vector<CapturedKernel> *captured, std::string &error,
                          int part) {
  return s.kind == BundleStep::Kernel
             ? launchKernel(*b_.kernel(s.id), stream, key, captured, error, part)
             : runContraction(*b_.contraction(s.id), stream, error);
}

bool Executor::run(Phase phase, ArenaPlanKind plan, cudaStream_t stream, uint64_t key,
                   std::string &error) {
  DeviceGuard guard;
  if (!usePlan(phase, plan, error) || !guard.use(device_, error) ||
      !zeroWorkspaces(stream, error))
    return false;
  prepareLaunches();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (!cudaCheck(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing", error))
    return false;
  if (graphsOn_ && status == cudaStreamCaptureStatusNone)
    return replay(phase, stream, key, error);
  for (const BundleStep &s : p_.steps[int(phase)])
    if (!launchStep(s, stream, key, nullptr, error))
      return false;
  return true;
}

bool Executor::timeSteps(Phase phase, ArenaPlanKind plan, cudaStream_t stream, uint64_t key,
                         std::vector<float> &ms, std::string &error) {
  DeviceGuard guard;
  if (!usePlan(phase, plan, error) || !guard.use(device_, error) ||
      !zeroWorkspaces(stream, error))
    return false;
  prepareLaunches();
  ms.clear();
  cudaEvent_t start = nullptr, stop = nullptr;
  bool ok = cudaCheck(cudaEventCreate(&start), "cudaEventCreate", error) &&
            cudaCheck(cudaEventCreate(&stop), "cudaEventCreate", error);
  for (size_t i = 0; ok && i < p_.steps[int(phase)].size(); ++i) {
    const BundleStep &s = p_.steps[int(phase)][i];
    float t = 0;
    cudaError_t e = cudaSuccess;
    ok = cudaCheck(cudaEventRecord(start, stream), "cudaEventRecord", error) &&
         launchStep(s, stream, key, nullptr, error) &&
         cudaCheck(cudaEventRecord(stop, stream), "cudaEventRecord", error) &&
         ((e = cudaEventSynchronize(stop)) == cudaSuccess ||
          cudaCheck(e, stepName(b_, s), error)) &&
         cudaCheck(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime", error);
    ms.push_back(t);
  }
  if (start)
    cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  return ok;
}

} // namespace dmrt
