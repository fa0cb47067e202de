//===- ExecutorGraph.h - Executor internals: captured phases ------*- C++ -*-===//
//
// Private to runtime/Executor*.cpp. A phase captured into a CUDA graph keeps,
// for each kernel launch, its graph node and parameter values, so that a
// new dropout key rewrites the seed in place (cuGraphExecKernelNodeSetParams)
// instead of capturing again.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_EXECUTORGRAPH_H
#define DMRT_EXECUTORGRAPH_H

#include "runtime/Executor.h"

namespace dmrt {

/// "what: cudaErrorX (description)" into `error` unless e == cudaSuccess.
bool cudaCheck(cudaError_t e, const std::string &what, std::string &error);

/// A kernel launch: its parameter values in the format's order
/// (runtime/format/KernelAbi.h), the seed last.
struct Executor::CapturedKernel {
  size_t kernel = 0; ///< index into the manifest's kernels
  std::vector<void *> values; ///< pointer parameters
  unsigned long long seed = 0;
  CUgraphNode node = nullptr; ///< when captured
  /// Filled once the capture is complete (this object no longer moves): the
  /// parameter array a new seed is set with.
  std::vector<void *> paramArray;
  /// cuLaunchKernel's parameter array (pointers into this object).
  std::vector<void *> params() {
    std::vector<void *> p;
    for (void *&v : values)
      p.push_back(&v);
    p.push_back(&seed);
    return p;
  }
};

struct Executor::Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  uint64_t bindingsVersion = 0;
  uint64_t key = 0;
  std::vector<CapturedKernel> kernels;
};

/// The node the last operation captured on `stream` became.
bool capturedNode(cudaStream_t stream, CUgraphNode &node, std::string &error);

} // namespace dmrt

#endif // DMRT_EXECUTORGRAPH_H
