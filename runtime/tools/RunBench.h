//===- RunBench.h - dmc-run --bench: time a whole step ------------*- C++ -*-===//
//
// Medians over `reps` timed steps (after warm-up) of forward, backward and
// the whole step, each between CUDA events on one stream, with CUDA graphs
// and with plain launches; the host time the calls take to enqueue the step
// (launch overhead); and the sum of each step's own time (dmrt_profile:
// every kernel and contraction alone between events), with the device name.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_TOOLS_RUNBENCH_H
#define DMRT_TOOLS_RUNBENCH_H

#include "runtime/dmrt.hpp"

#include <string>

namespace dmrt {

/// The whole step with CUDA graphs, enqueued ahead: median and fastest.
struct BenchResult {
  double medianMs = 0, minMs = 0;
};

/// Prints progress and a summary; false with `error` on a failure. The
/// layer's tensors must be bound (with any values).
/// With `bundleDir`, the step with CUDA graphs is also compared with the
/// prediction in its config.json (runtime/format/Prediction.h). `result`,
/// when given, gets that step's times.
bool benchLayer(Layer &layer, int reps, int warmup, std::string &error,
                const std::string &bundleDir = "", BenchResult *result = nullptr);

} // namespace dmrt

#endif // DMRT_TOOLS_RUNBENCH_H
