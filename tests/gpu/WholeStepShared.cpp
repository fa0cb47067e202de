//===- WholeStepShared.cpp - Layer instances sharing cubins; the device kept -===//
//
// Two instances of one bundle open at once (as two transformer layers would
// be) must load each cubin once between them (libdmrt.so's module registry,
// runtime/dmrtInternal.h), give bit-identical results, and unload the
// cubins when the last one closes. No runtime call may change the calling
// thread's current device: checked after open, forward + backward and
// close; on a thread whose current device was never set (autograd runs
// backward on its own threads); and, with two GPUs, with device 1 current
// while the layer runs on device 0.
//
//===----------------------------------------------------------------------===//
#include "WholeStepRun.h"
#include "WholeStepUtil.h"

#include "runtime/dmrtInternal.h"

#include <cstdio>
#include <memory>
#include <set>
#include <thread>

namespace dmctest {
using namespace util;
namespace {

struct ModuleStats {
  uint64_t loads = 0, unloads = 0, live = 0;
};

ModuleStats moduleStats() {
  ModuleStats s;
  dmrt_internal_module_stats(&s.loads, &s.unloads, &s.live);
  return s;
}

/// The calling thread's current device; -1 when cudaGetDevice fails.
int currentDevice() {
  int d = -1;
  if (cudaGetDevice(&d) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return d;
}

/// One open layer with its buffers bound and the eval file's inputs uploaded.
struct Instance {
  dmrt::Layer layer; // declared first: closed after its buffers are freed
  Buffers buf;
  std::vector<std::string> results;
};

std::unique_ptr<Instance> prepare(const std::string &dir, const dmrt::Bundle &b,
                                  const std::vector<dmrt::StepBinding> &bindings,
                                  std::string &error) {
  auto in = std::make_unique<Instance>();
  int uploaded = 0;
  if (!statusOk(in->layer.open(dir), dir, error) || !in->buf.allocateAndBind(in->layer, error) ||
      !uploadInputs(in->layer, in->buf, b, bindings, in->results, uploaded, error))
    return nullptr;
  return in;
}

using Results = std::map<std::string, std::vector<uint8_t>>;

} // namespace

bool checkSharedInstances(const std::string &bundleDir, const std::string &storagePath) {
  bool ok = true;
  auto report = [&](bool pass, const std::string &what) {
    std::printf("  %s: %s\n", what.c_str(), pass ? "ok" : "FAIL");
    ok &= pass;
    return pass;
  };
  std::string error;
  dmrt::Bundle b;
  dmrt::TensorFile storage;
  std::vector<dmrt::StepBinding> bindings;
  uint64_t seed = 0;
  if (!loadEvalStep(bundleDir, storagePath, b, storage, bindings, seed, error))
    return report(false, "shared instances: " + error);
  std::set<std::string> files;
  for (const dmrt::BundleKernel &k : b.kernels)
    files.insert(k.cubin);
  const uint64_t cubins = files.size();
  const int device = currentDevice();
  const ModuleStats s0 = moduleStats();

  // With one GPU the layer's device is always the current one, so "unchanged"
  // cannot tell a kept device from one switched to the same value: say so.
  int count = 0;
  const bool twoGpus = cudaGetDeviceCount(&count) == cudaSuccess && count > 1;
  const std::string oneGpu = twoGpus ? "" : " [one GPU: weak, see the other-device check]";
  std::unique_ptr<Instance> a = prepare(bundleDir, b, bindings, error);
  if (!a)
    return report(false, "shared instances: first open: " + error);
  const ModuleStats s1 = moduleStats();
  report(s1.loads - s0.loads == cubins && s1.live - s0.live == cubins,
         "shared instances: the first instance loads its " + std::to_string(cubins) +
             " cubin(s) once (loads +" + std::to_string(s1.loads - s0.loads) + ", live +" +
             std::to_string(s1.live - s0.live) + ")");
  report(currentDevice() == device, "current device: unchanged by open (" +
                                        std::to_string(currentDevice()) + ")" + oneGpu);
  std::unique_ptr<Instance> c = prepare(bundleDir, b, bindings, error);
  if (!c)
    return report(false, "shared instances: second open: " + error);
  const ModuleStats s2 = moduleStats();
  report(s2.loads == s1.loads && s2.live == s1.live,
         "shared instances: the second instance of the same bundle loads no cubin (loads +" +
             std::to_string(s2.loads - s1.loads) + ")");

  Results ra, rc, rt;
  if (!step(a->layer, a->buf, a->results, seed, 0, ra, error) ||
      !step(c->layer, c->buf, c->results, seed, 0, rc, error))
    return report(false, "shared instances: step: " + error);
  report(currentDevice() == device, "current device: unchanged by forward and backward" + oneGpu);
  report(!ra.empty() && ra == rc,
         "shared instances: both instances give bit-identical results (" +
             std::to_string(ra.size()) + " tensors)");

  // A thread whose current device was never set: a step of the second
  // instance there, then the thread's own CUDA work still runs.
  bool threadStep = false, threadAlloc = false;
  int before = -2, after = -2;
  std::string threadError;
  std::thread t([&] {
    before = currentDevice();
    threadStep = step(c->layer, c->buf, c->results, seed, 0, rt, threadError);
    after = currentDevice();
    void *p = nullptr;
    threadAlloc = cudaMalloc(&p, 256) == cudaSuccess && cudaFree(p) == cudaSuccess;
  });
  t.join();
  report(threadStep && rt == ra, "current device: a fresh thread runs a step, identical results" +
                                     (threadError.empty() ? "" : " (" + threadError + ")"));
  report(before == after && threadAlloc,
         "current device: the fresh thread keeps device " + std::to_string(before) + " (now " +
             std::to_string(after) + ") and its own CUDA work runs");

  if (twoGpus && device == 0) {
    // Device 1 current, the layer on device 0 (PyTorch on another device).
    bool set = cudaSetDevice(1) == cudaSuccess;
    dmrt::Layer third;
    bool opened = set && bool(third.open(bundleDir));
    bool ran = set && a->layer.setSeed(seed, 0) && a->layer.forward(nullptr) &&
               a->layer.backward(nullptr);
    int during = currentDevice();
    third = dmrt::Layer(); // close on device 1 too
    int closed = currentDevice();
    cudaSetDevice(0);
    Results again;
    bool same = cudaDeviceSynchronize() == cudaSuccess &&
                step(a->layer, a->buf, a->results, seed, 0, again, error) && again == ra;
    report(opened && ran && during == 1 && closed == 1 && same,
           "current device: device 1 stays current through open, forward, backward and "
           "close of a layer on device 0");
  } else {
    std::printf("  current device: one GPU: the other-device check needs two (skipped)\n");
  }

  c.reset();
  const ModuleStats s3 = moduleStats();
  report(s3.unloads == s2.unloads && s3.live == s2.live,
         "shared instances: closing one instance unloads nothing (the other holds them)");
  a.reset();
  const ModuleStats s4 = moduleStats();
  report(s4.unloads - s3.unloads == cubins && s4.live == s0.live,
         "shared instances: closing the last instance unloads each cubin (unloads +" +
             std::to_string(s4.unloads - s3.unloads) + ")");
  report(currentDevice() == device, "current device: unchanged by close" + oneGpu);
  return ok;
}

} // namespace dmctest
