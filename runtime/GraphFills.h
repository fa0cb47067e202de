//===- GraphFills.h - A captured graph's memset nodes as kernels -*- C++ -*-===//
//
// cuBLASLt enqueues a memset before some of its kernels (memory the kernel
// then accumulates into or counts on). Captured into a CUDA graph, each is a
// memset node, and the edges kernel -> memset -> kernel leave the device idle
// for microseconds where kernel -> kernel edges cost well under one
// (bench/step_profile.py shows the idle time before each node kind).
// `GraphFills::replaceMemsets` swaps each memset node of a graph for a kernel
// node of the same fill, with the same dependencies and dependents.
//
// The fill kernels are PTX (GraphFills.cpp) that the driver compiles for the
// device when `load` runs; the runtime needs no toolkit. A fill stores its
// value with the widest of 4, 2 or 1 bytes that the rows' alignment and
// length allow (`planFill`, pure and tested on the CPU).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_GRAPHFILLS_H
#define DMRT_GRAPHFILLS_H

#include "runtime/CudaDriver.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace dmrt {

/// How one memset becomes a launch of a fill kernel.
struct FillPlan {
  bool ok = false;     ///< false: keep the memset node (`why` says why)
  int storeBytes = 0;  ///< 4, 2 or 1: the kernel (dmrt_fill_b32, _b16, _b8)
  uint64_t count = 0;  ///< stores per row
  uint32_t value = 0;  ///< the stored word (a byte or half replicated)
  uint64_t pitch = 0;  ///< bytes between rows
  unsigned grid[3] = {1, 1, 1}; ///< x: blocks over a row, y: rows
  unsigned block[3] = {1, 1, 1};
  const char *why = "";
};

/// The fill of `height` rows of `width` elements of `elementSize` bytes (1, 2
/// or 4), `pitch` bytes apart, from `dst`, each element `value`'s low bytes
/// (cudaMemsetParams' fields).
FillPlan planFill(uint64_t dst, uint64_t pitch, uint32_t value, unsigned elementSize,
                  uint64_t width, uint64_t height);

/// The PTX of the fill kernels (for tests: it must assemble).
const char *fillKernelsPtx();

class GraphFills {
public:
  /// Loads the fill kernels on `driver`'s device (the driver compiles the PTX).
  bool load(CudaDriver &driver, std::string &error);
  /// Unloads them (with the device current); a no-op when not loaded.
  void unload(CudaDriver &driver);
  bool loaded() const { return module_ != nullptr; }
  /// The kernel storing `storeBytes` (1, 2 or 4) at a time (for tests).
  CUfunction kernel(int storeBytes) const {
    return fill_[storeBytes == 4 ? 2 : storeBytes == 2 ? 1 : 0];
  }

  /// Replaces every memset node of `graph` that planFill accepts by a fill
  /// kernel node; `replaced` and `kept` count them (not loaded: every memset
  /// node is kept, and counted). False (with `error`) when
  /// a graph call fails: the graph may then be half rewritten and must not
  /// be used.
  bool replaceMemsets(CudaDriver &driver, cudaGraph_t graph, int &replaced, int &kept,
                      std::string &error) const;

private:
  CUmodule module_ = nullptr;
  CUfunction fill_[3] = {nullptr, nullptr, nullptr}; ///< b8, b16, b32
};

} // namespace dmrt

#endif // DMRT_GRAPHFILLS_H
