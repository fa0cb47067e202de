//===- WholeStepInference.cpp - Forward-only runs in the smaller arena ----===//
//
// A layer run only in inference mode needs only the inference plan's arena
// (docs/runtime-api.md, "The arena"). On the eval file's inputs:
//  - reference: a training forward (owned training arena, plain launches);
//  - an inference-only layer (DMRT_OPEN_INFERENCE_ONLY | EXTERNAL_ARENA |
//    POISON_ARENA) on a caller arena of exactly dmrt_arena_bytes(INFERENCE)
//    bytes: plain launches, then a captured graph and its replay, must give
//    the reference outputs bit for bit (same kernels, same dropout key; only
//    the offsets differ), and a training forward on it is DMRT_ERROR_STATE;
//  - a trainable layer on that small arena: inference runs, a training
//    forward is DMRT_ERROR_STATE naming both sizes, a smaller arena than the
//    inference plan is DMRT_ERROR_BINDING; on a training-size arena the
//    whole step runs, and an inference forward after it (the other plan's
//    offsets and workspaces, its own graph) again matches the reference.
//
//===----------------------------------------------------------------------===//
#include "WholeStepRun.h"
#include "WholeStepUtil.h"

#include <algorithm>
#include <cstdio>

namespace dmctest {
using namespace util;
namespace {

using Results = std::map<std::string, std::vector<uint8_t>>;

/// Device memory freed on destruction.
struct DeviceBlock {
  void *ptr = nullptr;
  ~DeviceBlock() {
    if (ptr)
      cudaFree(ptr);
  }
};

/// One forward in `mode` with dropout key (seed, 0); the outputs' bytes.
bool forwardOutputs(dmrt::Layer &layer, Buffers &buf, dmrt_mode mode, uint64_t seed,
                    Results &out, std::string &error) {
  if (!statusOk(layer.setSeed(seed, 0), "set seed", error) ||
      !statusOk(layer.forward(nullptr, mode), "forward", error) ||
      !cudaOk(cudaDeviceSynchronize(), "the forward", error))
    return false;
  for (const dmrt_tensor_desc &d : layer.tensors()) {
    if (d.role != DMRT_ROLE_OUTPUT)
      continue;
    std::vector<uint8_t> &bytes = out[d.name];
    bytes.resize(size_t(d.bytes));
    if (!cudaOk(cudaMemcpy(bytes.data(), buf.ptr(layer, d.name), bytes.size(),
                         cudaMemcpyDeviceToHost),
              std::string("download ") + d.name, error))
      return false;
  }
  return true;
}

} // namespace

bool checkInferenceArena(const std::string &bundleDir, const std::string &storagePath) {
  bool ok = true;
  auto report = [&](bool pass, const std::string &what) {
    std::printf("  inference arena: %s: %s\n", what.c_str(), pass ? "ok" : "FAIL");
    ok &= pass;
    return pass;
  };
  std::string error;
  dmrt::Bundle b;
  dmrt::TensorFile storage;
  std::vector<dmrt::StepBinding> bindings;
  uint64_t seed = 0;
  if (!loadEvalStep(bundleDir, storagePath, b, storage, bindings, seed, error))
    return report(false, error);
  std::vector<std::string> results;
  int uploaded = 0;

  dmrt::Layer ref;
  Buffers refBuf;
  Results expected;
  if (!statusOk(ref.open(bundleDir, DMRT_OPEN_NO_GRAPHS), bundleDir, error) ||
      !refBuf.allocateAndBind(ref, error) ||
      !uploadInputs(ref, refBuf, b, bindings, results, uploaded, error) ||
      !forwardOutputs(ref, refBuf, DMRT_MODE_TRAIN, seed, expected, error))
    return report(false, "reference training forward: " + error);
  int64_t trainBytes = 0, inferBytes = 0;
  ref.arenaBytes(DMRT_MODE_TRAIN, trainBytes);
  ref.arenaBytes(DMRT_MODE_INFERENCE, inferBytes);
  report(b.version < 5 || inferBytes < trainBytes,
         "inference " + std::to_string(inferBytes) + " B < training " +
             std::to_string(trainBytes) + " B");

  DeviceBlock small, large;
  if (!cudaOk(cudaMalloc(&small.ptr, size_t(std::max<int64_t>(inferBytes, 1))), "cudaMalloc",
            error) ||
      !cudaOk(cudaMalloc(&large.ptr, size_t(std::max<int64_t>(trainBytes, 1))), "cudaMalloc",
            error))
    return report(false, error);

  // An inference-only layer on exactly the inference arena, poisoned.
  {
    dmrt::Layer layer;
    Buffers buf;
    Results plain, graph, replay;
    results.clear();
    bool ran =
        statusOk(layer.open(bundleDir, DMRT_OPEN_INFERENCE_ONLY | DMRT_OPEN_EXTERNAL_ARENA |
                                        DMRT_OPEN_POISON_ARENA | DMRT_OPEN_NO_GRAPHS),
              bundleDir, error) &&
        statusOk(layer.setArena(small.ptr, inferBytes), "set the inference arena", error) &&
        buf.allocateAndBind(layer, error) &&
        uploadInputs(layer, buf, b, bindings, results, uploaded, error) &&
        forwardOutputs(layer, buf, DMRT_MODE_INFERENCE, seed, plain, error) &&
        statusOk(layer.setGraphs(true), "graphs on", error) &&
        forwardOutputs(layer, buf, DMRT_MODE_INFERENCE, seed, graph, error) &&
        forwardOutputs(layer, buf, DMRT_MODE_INFERENCE, seed, replay, error);
    if (report(ran, "inference-only layer runs in " + std::to_string(inferBytes) + " B" +
                        (ran ? "" : ": " + error))) {
      report(plain == expected, "plain inference outputs equal the training forward's");
      report(graph == expected && replay == expected,
             "graph capture and replay of the inference forward equal it too");
    }
    dmrt::Status st = layer.forward(nullptr, DMRT_MODE_TRAIN);
    report(st.code == DMRT_ERROR_STATE, "training on an inference-only layer: " +
                                            std::string(dmrt_status_name(st.code)));
  }

  // A trainable layer: the small arena serves inference only.
  dmrt::Layer layer;
  Buffers buf;
  Results after;
  results.clear();
  if (!statusOk(layer.open(bundleDir, DMRT_OPEN_EXTERNAL_ARENA), bundleDir, error) ||
      !buf.allocateAndBind(layer, error) ||
      !uploadInputs(layer, buf, b, bindings, results, uploaded, error))
    return report(false, error);
  dmrt::Status st = layer.setArena(small.ptr, inferBytes - 256);
  report(inferBytes < 256 || st.code == DMRT_ERROR_BINDING,
         "an arena below the inference plan: " + std::string(dmrt_status_name(st.code)) +
             " (" + st.message + ")");
  report(bool(layer.setArena(small.ptr, inferBytes)), "the inference arena is accepted");
  Results trainless;
  report(forwardOutputs(layer, buf, DMRT_MODE_INFERENCE, seed, trainless, error) &&
             trainless == expected,
         "inference on it" + (error.empty() ? "" : ": " + error));
  st = layer.forward(nullptr, DMRT_MODE_TRAIN);
  report(inferBytes == trainBytes ||
             (st.code == DMRT_ERROR_STATE &&
              st.message.find("training plan needs " + std::to_string(trainBytes)) !=
                  std::string::npos),
         "training forward on it: " + std::string(dmrt_status_name(st.code)) + " (" +
             st.message + ")");
  error.clear();
  bool stepped = statusOk(layer.setArena(large.ptr, trainBytes), "training arena", error) &&
                 statusOk(layer.forward(nullptr, DMRT_MODE_TRAIN), "forward", error) &&
                 statusOk(layer.backward(nullptr), "backward", error) &&
                 forwardOutputs(layer, buf, DMRT_MODE_INFERENCE, seed, after, error);
  report(stepped && after == expected,
         "a whole step on the training arena, then inference on it (plan switch)" +
             (error.empty() ? "" : ": " + error));
  return ok;
}

} // namespace dmctest
