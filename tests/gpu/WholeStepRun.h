//===- WholeStepRun.h - A whole training step through runtime/dmrt.h ------===//
//
// For tests/gpu/WholeStepTest.cpp: opens a bundle with the C API, allocates
// one device buffer per caller buffer (stacked parameters share one), fills
// every byte with 0xFF (NaN in bf16/f16/f32, so an element no step writes
// fails), binds every tensor, uploads the eval file's arguments and runs
// forward + backward on a stream with the file's dropout seed, then
// downloads every output and gradient. runStep also checks the runtime's
// replay paths on the same bundle: the step with plain launches, then with
// CUDA graphs (captured), then with another seed offset (the captured
// seeds rewritten: some result must change when the layer has dropout) and
// again with the first seed: the graph runs must equal the plain run bit
// for bit.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_WHOLESTEPRUN_H
#define DMC_TESTS_GPU_WHOLESTEPRUN_H

#include "runtime/Safetensors.h"
#include "runtime/StepCheck.h"

#include <map>
#include <string>
#include <vector>

namespace dmctest {

/// The GPU results of one step, by tensor name, and what they are compared with.
struct StepRun {
  std::vector<std::string> names;                   // results, manifest order
  std::map<std::string, std::vector<double>> got, ref, exact;
  int steps = 0, uploaded = 0;
  uint64_t seed = 0;
};

/// Runs the bundle on the GPU and fills `run`; false with `error`.
bool runStep(const std::string &bundleDir, const std::string &storagePath,
             const std::string &exactPath, StepRun &run, std::string &error);

/// Misuse on a GPU must give the documented errors, not crashes: a host
/// pointer bound, a second backward, a bundle compiled for another arch
/// (`otherArchBundle`, may be empty). Prints one line per check.
bool checkMisuse(const std::string &bundleDir, const std::string &otherArchBundle);

/// Two instances of the bundle open at once share its cubins (each loaded
/// once, unloaded with the last instance) and give bit-identical results;
/// no call changes the calling thread's current device
/// (tests/gpu/WholeStepShared.cpp). Prints one line per check.
bool checkSharedInstances(const std::string &bundleDir, const std::string &storagePath);

/// Inference in the inference plan's smaller arena: an inference-only layer
/// on exactly that arena (plain and graph runs) reproduces a training
/// forward's outputs; a training forward on it is refused; a trainable
/// layer switches between the plans (tests/gpu/WholeStepInference.cpp).
/// Prints one line per check.
bool checkInferenceArena(const std::string &bundleDir, const std::string &storagePath);

} // namespace dmctest

#endif // DMC_TESTS_GPU_WHOLESTEPRUN_H
