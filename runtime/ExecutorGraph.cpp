//===- ExecutorGraph.cpp - Capture a phase once, replay it ----------------===//
#include "runtime/ExecutorGraph.h"

namespace dmrt {

bool capturedNode(cudaStream_t stream, CUgraphNode &node, std::string &error) {
  cudaStreamCaptureStatus status;
  const cudaGraphNode_t *deps = nullptr;
  size_t count = 0;
  if (!cudaCheck(cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, nullptr,
                                          &count),
                 "cudaStreamGetCaptureInfo", error))
    return false;
  if (status != cudaStreamCaptureStatusActive || count != 1) {
    error = "graph capture: expected one node after a kernel launch, found " +
            std::to_string(count);
    return false;
  }
  node = reinterpret_cast<CUgraphNode>(deps[0]);
  return true;
}

void Executor::graphShape(Phase phase, int &steps, int &edges, int &criticalPath) const {
  const Graph *g = graphs_[int(phase)].get();
  steps = g ? g->steps : 0;
  edges = g ? g->edges : 0;
  criticalPath = g ? g->criticalPath : 0;
}

void Executor::graphMemsets(Phase phase, int &filled, int &kept) const {
  const Graph *g = graphs_[int(phase)].get();
  filled = g ? g->filled : 0;
  kept = g ? g->memsets : 0;
}

void Executor::dropGraphs() {
  for (int slot = 0; slot < 3; ++slot)
    dropGraph(slot);
}

void Executor::dropGraph(int slot) {
  std::unique_ptr<Graph> &g = graphs_[slot];
  if (!g)
    return;
  if (g->exec)
    cudaGraphExecDestroy(g->exec);
  if (g->graph)
    cudaGraphDestroy(g->graph);
  g.reset();
}

bool Executor::capture(Phase phase, uint64_t key, std::string &error) {
  // The phase's graph of earlier bindings, if any: updated in place below
  // when the new capture has its topology, else destroyed.
  std::unique_ptr<Graph> old = std::move(graphs_[graphSlot(phase)]);
  auto dropOld = [&] {
    graphs_[graphSlot(phase)] = std::move(old);
    dropGraph(graphSlot(phase));
  };
  auto g = std::make_unique<Graph>();
  g->bindingsVersion = bindings_.version();
  g->arena = arena_;
  g->key = key;
  // Thread-local mode: other threads' CUDA calls do not disturb the capture.
  if (!cudaCheck(cudaStreamBeginCapture(captureStream_, cudaStreamCaptureModeThreadLocal),
                 "cudaStreamBeginCapture", error)) {
    dropOld();
    return false;
  }
  bool ok = true;
  if (concurrentGraphs_)
    ok = captureConcurrent(phase, key, *g, error);
  else
    for (const BundleStep &s : p_.steps[int(phase)])
      if (!(ok = launchStep(s, captureStream_, key, &g->kernels, error)))
        break;
  cudaError_t e = cudaStreamEndCapture(captureStream_, &g->graph);
  // cuBLASLt's memset nodes as fill kernels (or only counted, fills off):
  // before the update below, so that both graphs have the same topology.
  if (ok && e == cudaSuccess)
    ok = fills_.replaceMemsets(driver_, g->graph, g->filled, g->memsets, error);
  // Rebound buffers or a moved arena (dmc.torch's gradients and arena move
  // between steps) change parameters, not the topology: cudaGraphExecUpdate gives the executable
  // graph the new capture's parameters without instantiating (~120 us of host
  // time and an upload at the next launch for bert-large). The executable
  // keeps the graph it was instantiated from, whose nodes the seed updates
  // name (cudaGraphExecKernelNodeSetParams).
  if (ok && e == cudaSuccess && old && old->exec) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(old->exec, g->graph, &info) == cudaSuccess) {
      cudaGraphDestroy(g->graph);
      old->bindingsVersion = g->bindingsVersion;
      old->arena = g->arena;
      old->key = key;
      old->filled = g->filled;
      old->memsets = g->memsets;
      ++updates_;
      graphs_[graphSlot(phase)] = std::move(old);
      return true;
    }
    (void)cudaGetLastError(); // a refused update: instantiate instead
  }
  dropOld();
  if (!ok) {
    if (g->graph)
      cudaGraphDestroy(g->graph);
    error = std::string("capturing ") + phaseName(phase) + ": " + error;
    return false;
  }
  if (!cudaCheck(e, std::string("capturing ") + phaseName(phase) + " (cudaStreamEndCapture)",
                 error) ||
      !cudaCheck(cudaGraphInstantiate(&g->exec, g->graph, 0),
                 std::string("instantiating the graph of ") + phaseName(phase), error)) {
    if (g->graph)
      cudaGraphDestroy(g->graph);
    return false;
  }
  ++captures_;
  graphs_[graphSlot(phase)] = std::move(g);
  return true;
}

/// One capture stream throughout: before each launch group (a step, or one
/// launch of a kernel whose finishing launch has outputs of its own) its
/// dependency set is replaced by the last nodes of the groups it waits for,
/// so the graph gets exactly those edges (no forked streams to join).
bool Executor::captureConcurrent(Phase phase, uint64_t key, Graph &g, std::string &error) {
  const std::vector<BundleStep> &steps = p_.steps[int(phase)];
  struct Unit {
    size_t step;
    int part; ///< -1: the whole step
  };
  std::vector<Unit> units;
  std::vector<std::vector<MemoryAccess>> accesses;
  for (size_t j = 0; j < steps.size(); ++j) {
    const BundleStep &s = steps[j];
    // finish.outputs lives inside `finish`: listed outputs imply the launch.
    bool apart = s.kind == BundleStep::Kernel && !b_.kernel(s.id)->finishOutputs.empty();
    for (int part : apart ? std::vector<int>{0, 1} : std::vector<int>{-1}) {
      units.push_back({j, part});
      accesses.push_back(stepAccesses(s, part));
    }
  }
  std::vector<std::vector<int>> deps = stepDependencies(accesses);
  g.steps = int(steps.size());
  g.criticalPath = criticalPathLength(deps);
  std::vector<std::vector<cudaGraphNode_t>> last(units.size());
  for (size_t j = 0; j < units.size(); ++j) {
    std::vector<cudaGraphNode_t> waitFor;
    for (int i : deps[j])
      waitFor.insert(waitFor.end(), last[size_t(i)].begin(), last[size_t(i)].end());
    g.edges += int(deps[j].size());
    if (!cudaCheck(cudaStreamUpdateCaptureDependencies(captureStream_, waitFor.data(), nullptr,
                                                        waitFor.size(),
                                                        cudaStreamSetCaptureDependencies),
                   "cudaStreamUpdateCaptureDependencies", error) ||
        !launchStep(steps[units[j].step], captureStream_, key, &g.kernels, error, units[j].part))
      return false;
    cudaStreamCaptureStatus status;
    const cudaGraphNode_t *nodes = nullptr;
    size_t count = 0;
    if (!cudaCheck(cudaStreamGetCaptureInfo(captureStream_, &status, nullptr, nullptr, &nodes,
                                            nullptr, &count),
                   "cudaStreamGetCaptureInfo", error))
      return false;
    last[j].assign(nodes, nodes + count);
  }
  return true;
}

bool Executor::replay(Phase phase, cudaStream_t stream, uint64_t key, std::string &error) {
  Graph *g = graphs_[graphSlot(phase)].get();
  if (!g || g->bindingsVersion != bindings_.version() || g->arena != arena_) {
    if (!capture(phase, key, error))
      return false;
    g = graphs_[graphSlot(phase)].get();
  } else if (g->key != key) {
    bool updated = true;
    std::string ignored; // on failure: capture again with the new seed
    for (CapturedKernel &ck : g->kernels) {
      // The node's parameters but the seed are the launch's: run() rebuilt
      // launches_ for the bindings and arena this graph was captured with.
      const LaunchShape &shape = kernels_->shape(ck.kernel, ck.part);
      if (!(updated = driver_.setGraphKernelParams(
                reinterpret_cast<CUgraphExec>(g->exec), ck.node,
                kernels_->function(ck.kernel, ck.part),
                shape.grid, shape.block, shape.sharedBytes,
                launches_[ck.kernel].withSeed(key), ignored)))
        break;
    }
    g->key = key;
    if (!updated) {
      if (!capture(phase, key, error))
        return false;
      g = graphs_[graphSlot(phase)].get();
    }
  }
  cudaError_t e = cudaGraphLaunch(g->exec, stream);
  return e == cudaSuccess ||
         cudaCheck(e, std::string("cudaGraphLaunch (") + phaseName(phase) + ")", error);
}

} // namespace dmrt
