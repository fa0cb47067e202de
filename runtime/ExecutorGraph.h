//===- ExecutorGraph.h - Executor internals: captured phases ------*- C++ -*-===//
//
// Private to runtime/Executor*.cpp. A phase captured into a CUDA graph keeps,
// for each kernel launch, its graph node, so that a new dropout key rewrites
// the seed in place (cuGraphExecKernelNodeSetParams, with the executor's
// KernelLaunch of the kernel) instead of capturing again.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_EXECUTORGRAPH_H
#define DMRT_EXECUTORGRAPH_H

#include "runtime/Executor.h"

namespace dmrt {

/// A captured kernel launch: its graph node. Its parameters are the
/// executor's KernelLaunch of the kernel (the graph is captured again when
/// they change), through which a new seed is set.
struct Executor::CapturedKernel {
  size_t kernel = 0;          ///< index into the manifest's kernels
  int part = 0;               ///< its launch (BundleKernels::parts)
  CUgraphNode node = nullptr;
};

struct Executor::Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  uint64_t bindingsVersion = 0;
  void *arena = nullptr; ///< the arena the node parameters point into
  uint64_t key = 0;
  std::vector<CapturedKernel> kernels;
  /// Concurrent captures: steps, dependency edges, longest chain of steps.
  int steps = 0, edges = 0, criticalPath = 0;
  /// Memset nodes replaced by fill kernels, and kept.
  int filled = 0, memsets = 0;
};

/// The node the last operation captured on `stream` became.
bool capturedNode(cudaStream_t stream, CUgraphNode &node, std::string &error);

} // namespace dmrt

#endif // DMRT_EXECUTORGRAPH_H
