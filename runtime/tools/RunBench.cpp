//===- RunBench.cpp - dmc-run --bench: time a whole step ------------------===//
#include "RunBench.h"

#include "runtime/LayerBuffers.h"
#include "runtime/format/Prediction.h"
#include "runtime/dmrtInternal.h"
#include "runtime/tools/GpuClocks.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace dmrt {
namespace {

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct StepTimes {
  double forwardMs = 0, backwardMs = 0, stepMs = 0, fastestStepMs = 0;
  double hostUs = 0; ///< synchronized runs only (timeSteps)
};

/// Medians of `reps` steps (after `warmup`) in graph mode `mode`
/// (DMRT_GRAPHS_*). Pipelined: the host enqueues every step without waiting,
/// as a training loop does, so each phase's time is the device's alone (the
/// host's enqueue hides behind the steps before it). Synchronized: each step
/// waits for the one before, so the host's enqueue (a graph's seed update
/// and launch, or every launch) is in the forward's time; only these runs
/// time the host's enqueue (enqueued ahead, it can include waiting for room
/// in the launch queue).
bool timeSteps(Layer &layer, cudaStream_t stream, int mode, int reps, int warmup,
               bool pipelined, StepTimes &out, std::string &error) {
  if (!statusOk(layer.setGraphMode(mode), "graphs", error))
    return false;
  const int n = warmup + reps;
  std::vector<cudaEvent_t> ev(size_t(pipelined ? 3 * n : 3), nullptr);
  bool ok = true;
  for (cudaEvent_t &e : ev)
    ok = ok && cudaOk(cudaEventCreate(&e), "cudaEventCreate", error);
  std::vector<double> fwd, bwd, whole, host;
  auto elapsed = [&](cudaEvent_t *e) {
    float f = 0, b = 0;
    ok = ok && cudaOk(cudaEventElapsedTime(&f, e[0], e[1]), "cudaEventElapsedTime", error) &&
         cudaOk(cudaEventElapsedTime(&b, e[1], e[2]), "cudaEventElapsedTime", error);
    fwd.push_back(f);
    bwd.push_back(b);
    whole.push_back(f + b);
  };
  for (int r = 0; ok && r < n; ++r) {
    cudaEvent_t *e = ev.data() + (pipelined ? 3 * r : 0);
    auto t0 = std::chrono::steady_clock::now();
    ok = statusOk(layer.setSeed(1000 + uint64_t(r)), "seed", error) &&
         cudaOk(cudaEventRecord(e[0], stream), "cudaEventRecord", error) &&
         statusOk(layer.forward(stream), "forward", error) &&
         cudaOk(cudaEventRecord(e[1], stream), "cudaEventRecord", error) &&
         statusOk(layer.backward(stream), "backward", error) &&
         cudaOk(cudaEventRecord(e[2], stream), "cudaEventRecord", error);
    auto t1 = std::chrono::steady_clock::now();
    if (!pipelined) {
      if (ok && r >= warmup)
        host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      ok = ok && cudaOk(cudaEventSynchronize(e[2]), "the step", error);
      if (ok && r >= warmup)
        elapsed(e);
    }
  }
  if (pipelined) {
    ok = ok && cudaOk(cudaEventSynchronize(ev.back()), "the steps", error);
    for (int r = warmup; ok && r < n; ++r)
      elapsed(ev.data() + 3 * r);
  }
  for (cudaEvent_t e : ev)
    if (e)
      cudaEventDestroy(e);
  out = {median(fwd), median(bwd), median(whole),
         whole.empty() ? 0 : *std::min_element(whole.begin(), whole.end()), median(host)};
  return ok;
}

} // namespace

bool benchLayer(Layer &layer, int reps, int warmup, std::string &error,
                const std::string &bundleDir, BenchResult *result) {
  cudaStream_t stream = nullptr;
  if (!cudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate",
              error))
    return false;
  dmrt_memory_info mem;
  layer.memory(mem);
  int64_t inferenceArena = 0;
  layer.arenaBytes(DMRT_MODE_INFERENCE, inferenceArena);
  std::printf("dmc-run: %s on %s; arena %.2f MiB (kernel workspaces %.2f MiB; inference "
              "alone %.2f MiB), cuBLASLt workspace %.0f MiB, caller buffers %.2f MiB\n",
              layer.model().c_str(), layer.deviceName().c_str(), mem.arena_bytes / 1048576.0,
              mem.kernel_workspace_bytes / 1048576.0, inferenceArena / 1048576.0,
              mem.gemm_workspace_bytes / 1048576.0, mem.caller_bytes / 1048576.0);
  StepTimes graphs, serial, plain, graphsAlone, plainAlone;
  std::printf("dmc-run: timing %d steps (after %d warm-up) with CUDA graphs, enqueued ahead as "
              "in training ...\n", reps, warmup);
  // The GPU's clock while the steps run back to back (GpuClocks.h).
  GpuClockSampler clocks;
  std::string clockWhy;
  char bus[32] = "";
  int device = 0;
  bool sampling = cudaGetDevice(&device) == cudaSuccess &&
                  cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess;
  if (!sampling)
    clockWhy = "the device's PCI bus id is unknown";
  else if (!(sampling = clocks.start(bus)))
    clockWhy = clocks.why();
  bool ok = timeSteps(layer, stream, DMRT_GRAPHS_ON, reps, warmup, true, graphs, error);
  ClockSummary clockSummary = clocks.stop();
  int32_t shape[2][3] = {}, memsets[2][2] = {};
  for (int32_t bwd = 0; bwd < 2; ++bwd) {
    dmrt_internal_graph_shape(layer.get(), bwd, &shape[bwd][0], &shape[bwd][1], &shape[bwd][2]);
    dmrt_internal_graph_memsets(layer.get(), bwd, &memsets[bwd][0], &memsets[bwd][1]);
  }
  std::printf("dmc-run: timing %d steps with serial CUDA graphs (the bundle's order) ...\n",
              reps);
  ok = ok && timeSteps(layer, stream, DMRT_GRAPHS_SERIAL, reps, warmup, true, serial, error);
  std::printf("dmc-run: timing %d steps with plain launches ...\n", reps);
  ok = ok && timeSteps(layer, stream, DMRT_GRAPHS_OFF, reps, warmup, true, plain, error);
  std::printf("dmc-run: timing %d steps each waited for (CUDA graphs, plain launches) ...\n",
              reps);
  ok = ok && timeSteps(layer, stream, DMRT_GRAPHS_ON, reps, warmup, false, graphsAlone, error) &&
       timeSteps(layer, stream, DMRT_GRAPHS_OFF, reps, warmup, false, plainAlone, error);
  ok = ok && statusOk(layer.setGraphMode(DMRT_GRAPHS_ON), "graphs", error);
  // The sum of every step's own time (each alone between events).
  int32_t counts[2] = {0, 0};
  double sums[2] = {0, 0};
  for (int32_t bwd = 0; ok && bwd < 2; ++bwd) {
    dmrt_step_count(layer.get(), bwd, &counts[bwd]);
    std::vector<float> ms(size_t(std::max(counts[bwd], 1)));
    std::vector<std::vector<float>> samples(ms.size());
    for (int r = 0; ok && r < std::min(reps, 20); ++r) {
      if (bwd && !statusOk(layer.forward(stream), "forward", error))
        ok = false;
      ok = ok && statusOk(Status::of(dmrt_profile(layer.get(), stream, bwd, ms.data(),
                                                  int32_t(ms.size()))),
                          "profile", error);
      for (size_t i = 0; ok && i < size_t(counts[bwd]); ++i)
        samples[i].push_back(ms[i]);
    }
    for (size_t i = 0; ok && i < size_t(counts[bwd]); ++i) {
      std::vector<double> d(samples[i].begin(), samples[i].end());
      sums[bwd] += median(d);
    }
  }
  cudaStreamDestroy(stream);
  if (!ok)
    return false;
  // The enqueue column is the synchronized runs' (timeSteps).
  std::printf("dmc-run: summary (median ms)       forward  backward  step   host enqueue us\n");
  std::printf("dmc-run:   CUDA graphs            %8.3f  %8.3f  %6.3f  %8.1f\n", graphs.forwardMs,
              graphs.backwardMs, graphs.stepMs, graphsAlone.hostUs);
  std::printf("dmc-run:   serial CUDA graphs     %8.3f  %8.3f  %6.3f\n", serial.forwardMs,
              serial.backwardMs, serial.stepMs);
  std::printf("dmc-run:   plain launches         %8.3f  %8.3f  %6.3f  %8.1f\n", plain.forwardMs,
              plain.backwardMs, plain.stepMs, plainAlone.hostUs);
  std::printf("dmc-run:   each step waited for:\n");
  std::printf("dmc-run:     with CUDA graphs     %8.3f  %8.3f  %6.3f\n", graphsAlone.forwardMs,
              graphsAlone.backwardMs, graphsAlone.stepMs);
  std::printf("dmc-run:     with plain launches  %8.3f  %8.3f  %6.3f\n", plainAlone.forwardMs,
              plainAlone.backwardMs, plainAlone.stepMs);
  std::printf("dmc-run:   sum of steps' own times %7.3f  %8.3f  %6.3f  (%d + %d steps)\n",
              sums[0], sums[1], sums[0] + sums[1], counts[0], counts[1]);
  std::printf("dmc-run: graph order: forward %d steps, %d edges, longest chain %d; backward %d "
              "steps, %d edges, longest chain %d (serial: a chain of every step)\n",
              shape[0][0], shape[0][1], shape[0][2], shape[1][0], shape[1][1], shape[1][2]);
  std::printf("dmc-run: cuBLASLt's memset nodes in the graphs: forward %d as fill kernels, %d "
              "kept; backward %d as fill kernels, %d kept\n",
              memsets[0][0], memsets[0][1], memsets[1][0], memsets[1][1]);
  std::printf("dmc-run: launch overhead, steps waited for: plain - graphs = %.3f ms per step; "
              "the host's enqueue in a step waited for: %.3f ms with graphs (waited for - "
              "enqueued ahead)\n",
              plainAlone.stepMs - graphsAlone.stepMs, graphsAlone.stepMs - graphs.stepMs);
  std::printf("dmc-run: the GPU while timing with CUDA graphs: %s\n",
              sampling ? describeClocks(clockSummary).c_str()
                       : ("not sampled: " + clockWhy).c_str());
  if (!bundleDir.empty())
    std::printf("dmc-run: CUDA graphs %s\n", // "against the prediction ..." or "no prediction ..."
                predictionLine(bundleDir, layer.deviceName(), graphs.forwardMs,
                               graphs.backwardMs)
                    .c_str());
  if (result)
    *result = {graphs.stepMs, graphs.fastestStepMs};
  if (sampling && clocksLowered(clockSummary))
    std::printf("dmc-run: the GPU lowered its SM clock while the steps ran back to back "
                "(median %u MHz of %u): kernels measured alone in short runs, as the tuning "
                "database's, ran at higher clocks\n",
                clockSummary.medianMhz, clockSummary.maxMhz);
  return true;
}

} // namespace dmrt
