//===- dmrtRun.cpp - The C API: binding memory and running the phases -----===//
//
// The phase order lives here: a training forward leaves its saved
// activations in the arena for exactly one backward, which runs with the
// forward's dropout key (the masks are regenerated, not stored).
//
//===----------------------------------------------------------------------===//
#include "runtime/dmrtLayer.h"

#include <cuda_runtime_api.h>

#include <algorithm>

using namespace dmrt;

extern "C" {

dmrt_status dmrt_bind(dmrt_layer *layer, const char *name, void *device_ptr, int64_t bytes,
                      dmrt_dtype dtype, int32_t rank, const int64_t *shape) {
  DMRT_GUARD_BEGIN
  if (!layer || !name)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_bind: null layer or name");
  DType dt;
  if (!fromCDType(dtype, dt))
    return fail(DMRT_ERROR_BINDING, std::string("tensor '") + name + "': unknown dtype " +
                                        std::to_string(int(dtype)));
  if (rank < 0 || rank > DMRT_MAX_RANK || (rank > 0 && !shape))
    return fail(DMRT_ERROR_BINDING, std::string("tensor '") + name + "': rank " +
                                        std::to_string(rank) +
                                        (rank > 0 && !shape ? " with a null shape" : " out of range"));
  std::vector<int64_t> dims(shape, shape + rank);
  std::string error;
  // The checks that need no device first, then: is it device memory? Only
  // then is the bind recorded (in place): a failing bind changes nothing.
  int64_t index = layer->bindings->check(name, device_ptr, bytes, dt, dims, error);
  if (index < 0)
    return fail(DMRT_ERROR_BINDING, error);
  if (layer->exec &&
      !layer->exec->checkDevicePointer(std::string("tensor '") + name + "'", device_ptr, error))
    return fail(DMRT_ERROR_BINDING, error);
  layer->bindings->commit(size_t(index), device_ptr);
  return DMRT_OK;
  DMRT_GUARD_END
}

dmrt_status dmrt_unbind(dmrt_layer *layer, const char *name) {
  DMRT_GUARD_BEGIN
  if (!layer || !name)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_unbind: null layer or name");
  std::string error;
  if (!layer->bindings->unbind(name, error))
    return fail(DMRT_ERROR_BINDING, error);
  return DMRT_OK;
  DMRT_GUARD_END
}

dmrt_status dmrt_set_arena(dmrt_layer *layer, void *device_ptr, int64_t bytes) {
  DMRT_GUARD_BEGIN
  if (!layer)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_set_arena: null layer");
  if (!layer->exec)
    return fail(DMRT_ERROR_STATE, "dmrt_set_arena: the layer was opened with "
                                  "DMRT_OPEN_VALIDATE_ONLY (no device)");
  if (!layer->externalArena)
    return fail(DMRT_ERROR_STATE, "dmrt_set_arena: the layer owns its arena (open it with "
                                  "DMRT_OPEN_EXTERNAL_ARENA to provide one)");
  std::string error;
  if (!layer->exec->setArena(device_ptr, bytes, error))
    return fail(DMRT_ERROR_BINDING, error);
  return DMRT_OK;
  DMRT_GUARD_END
}

uint64_t dmrt_dropout_key(uint64_t seed, uint64_t offset) {
  // Offset 0 is the seed itself (dmc eval --seed N); other offsets move it
  // by an odd constant (2^64 / golden ratio), distinct for every offset.
  return seed + offset * 0x9E3779B97F4A7C15ull;
}

dmrt_status dmrt_set_seed(dmrt_layer *layer, uint64_t seed, uint64_t offset) {
  if (!layer)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_set_seed: null layer");
  layer->key = dmrt_dropout_key(seed, offset);
  return DMRT_OK;
}

void dmrt_internal_graph_counts(dmrt_layer *layer, int32_t *instantiated, int32_t *updated) {
  const bool any = layer && layer->exec;
  if (instantiated)
    *instantiated = any ? layer->exec->captures() : 0;
  if (updated)
    *updated = any ? layer->exec->graphUpdates() : 0;
}

void dmrt_internal_graph_shape(dmrt_layer *layer, int32_t backward, int32_t *steps,
                               int32_t *edges, int32_t *critical_path) {
  int n = 0, e = 0, c = 0;
  if (layer && layer->exec)
    layer->exec->graphShape(backward ? dmrt::Phase::Backward : dmrt::Phase::Forward, n, e, c);
  if (steps)
    *steps = n;
  if (edges)
    *edges = e;
  if (critical_path)
    *critical_path = c;
}

void dmrt_internal_graph_memsets(dmrt_layer *layer, int32_t backward, int32_t *filled,
                                 int32_t *kept) {
  int f = 0, k = 0;
  if (layer && layer->exec)
    layer->exec->graphMemsets(backward ? dmrt::Phase::Backward : dmrt::Phase::Forward, f, k);
  if (filled)
    *filled = f;
  if (kept)
    *kept = k;
}

dmrt_status dmrt_set_graphs(dmrt_layer *layer, int mode) {
  if (!layer)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_set_graphs: null layer");
  if (mode != DMRT_GRAPHS_OFF && mode != DMRT_GRAPHS_ON && mode != DMRT_GRAPHS_SERIAL)
    return fail(DMRT_ERROR_INVALID_ARGUMENT,
                "dmrt_set_graphs: mode " + std::to_string(mode) +
                    " (allowed: DMRT_GRAPHS_OFF 0, DMRT_GRAPHS_ON 1, DMRT_GRAPHS_SERIAL 2)");
  if (layer->exec) {
    layer->exec->setGraphs(mode != DMRT_GRAPHS_OFF);
    layer->exec->setConcurrentGraphs(mode != DMRT_GRAPHS_SERIAL);
  }
  return DMRT_OK;
}

} // extern "C"

namespace {

/// What a run of `phase` in `plan` (Inference: an inference forward) needs,
/// checked in this order (all but the last three need no device): a layer
/// not opened DMRT_OPEN_INFERENCE_ONLY for a training run; every tensor it
/// uses bound; for backward, a pending training forward; a device (not
/// DMRT_OPEN_VALIDATE_ONLY); an arena; one large enough for the plan.
dmrt_status checkRunnable(dmrt_layer *layer, Phase phase, ArenaPlanKind plan) {
  const char *what = phase == Phase::Backward            ? "backward"
                     : plan == ArenaPlanKind::Inference ? "forward (DMRT_MODE_INFERENCE)"
                                                        : "forward (DMRT_MODE_TRAIN)";
  if (layer->inferenceOnly && plan == ArenaPlanKind::Training)
    return fail(DMRT_ERROR_STATE,
                std::string(what) +
                    ": the layer was opened with DMRT_OPEN_INFERENCE_ONLY (its arena holds "
                    "the forward-only plan); open it without the flag to train");
  std::vector<std::string> missing = layer->bindings->missingFor(phase);
  if (!missing.empty()) {
    std::string list;
    for (const std::string &n : missing)
      list += " " + n;
    return fail(DMRT_ERROR_UNBOUND, std::string(phaseName(phase)) + ": " +
                                        std::to_string(missing.size()) +
                                        " tensor(s) not bound (dmrt_bind):" + list);
  }
  if (phase == Phase::Backward && !layer->forwardPending)
    return fail(DMRT_ERROR_STATE,
                layer->lastForwardInference
                    ? "backward: the last forward ran in DMRT_MODE_INFERENCE, which keeps no "
                      "activations for a backward; run forward in DMRT_MODE_TRAIN"
                    : "backward before forward: each backward needs its own training forward "
                      "(dmrt_forward with DMRT_MODE_TRAIN) whose saved activations it "
                      "consumes");
  if (!layer->exec)
    return fail(DMRT_ERROR_STATE, std::string(phaseName(phase)) +
                                      ": the layer was opened with DMRT_OPEN_VALIDATE_ONLY "
                                      "(no device)");
  if (!layer->exec->arena())
    return fail(DMRT_ERROR_STATE, std::string(phaseName(phase)) +
                                      ": no arena: the layer was opened with "
                                      "DMRT_OPEN_EXTERNAL_ARENA; call dmrt_set_arena");
  std::string shortfall =
      arenaShortfall(layer->bundle, plan, layer->exec->arenaCapacity());
  if (!shortfall.empty())
    return fail(DMRT_ERROR_STATE, std::string(what) + ": " + shortfall +
                                      " (dmrt_set_arena with at least dmrt_arena_bytes "
                                      "of the mode)");
  return DMRT_OK;
}

} // namespace

extern "C" {

dmrt_status dmrt_forward(dmrt_layer *layer, dmrt_stream stream, dmrt_mode mode) {
  DMRT_GUARD_BEGIN
  if (!layer)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_forward: null layer");
  ArenaPlanKind plan = ArenaPlanKind::Training;
  if (dmrt_status s = planOfMode("dmrt_forward", mode, plan); s != DMRT_OK)
    return s;
  if (dmrt_status s = checkRunnable(layer, Phase::Forward, plan); s != DMRT_OK)
    return s;
  layer->forwardPending = false;
  std::string error;
  if (!layer->exec->run(Phase::Forward, plan, reinterpret_cast<cudaStream_t>(stream),
                        layer->key, error))
    return fail(DMRT_ERROR_CUDA, "forward: " + error);
  layer->lastForwardInference = mode == DMRT_MODE_INFERENCE;
  layer->forwardPending = mode == DMRT_MODE_TRAIN;
  layer->forwardKey = layer->key;
  layer->forwardArena = layer->exec->arena();
  return DMRT_OK;
  DMRT_GUARD_END
}

dmrt_status dmrt_backward(dmrt_layer *layer, dmrt_stream stream) {
  DMRT_GUARD_BEGIN
  if (!layer)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_backward: null layer");
  if (dmrt_status s = checkRunnable(layer, Phase::Backward, ArenaPlanKind::Training);
      s != DMRT_OK)
    return s;
  if (layer->exec->arena() != layer->forwardArena)
    return fail(DMRT_ERROR_STATE, "backward: the arena changed since the forward "
                                  "(dmrt_set_arena): its saved activations are gone");
  layer->forwardPending = false;
  std::string error;
  if (!layer->exec->run(Phase::Backward, ArenaPlanKind::Training,
                        reinterpret_cast<cudaStream_t>(stream),
                        layer->forwardKey, error))
    return fail(DMRT_ERROR_CUDA, "backward: " + error);
  return DMRT_OK;
  DMRT_GUARD_END
}

} // extern "C"

extern "C" {

dmrt_status dmrt_step_count(const dmrt_layer *layer, int32_t backward, int32_t *count) {
  if (!layer || !count)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_step_count: null argument");
  *count = int32_t(layer->stepNames[backward ? 1 : 0].size());
  return DMRT_OK;
}

const char *dmrt_step_name(const dmrt_layer *layer, int32_t backward, int32_t index) {
  if (!layer || index < 0 || size_t(index) >= layer->stepNames[backward ? 1 : 0].size())
    return "";
  return layer->stepNames[backward ? 1 : 0][size_t(index)].c_str();
}

dmrt_status dmrt_profile(dmrt_layer *layer, dmrt_stream stream, int32_t backward, float *ms,
                         int32_t capacity) {
  DMRT_GUARD_BEGIN
  if (!layer || !ms)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_profile: null layer or ms");
  Phase phase = backward ? Phase::Backward : Phase::Forward;
  if (size_t(std::max(capacity, 0)) < layer->plan.steps[int(phase)].size())
    return fail(DMRT_ERROR_INVALID_ARGUMENT,
                "dmrt_profile: capacity " + std::to_string(capacity) + " < " +
                    std::to_string(layer->plan.steps[int(phase)].size()) + " steps");
  if (dmrt_status s = checkRunnable(layer, phase, ArenaPlanKind::Training); s != DMRT_OK)
    return s;
  uint64_t key = backward ? layer->forwardKey : layer->key;
  layer->forwardPending = false;
  std::vector<float> times;
  std::string error;
  if (!layer->exec->timeSteps(phase, ArenaPlanKind::Training,
                              reinterpret_cast<cudaStream_t>(stream), key, times, error))
    return fail(DMRT_ERROR_CUDA, std::string(phaseName(phase)) + ": " + error);
  for (size_t i = 0; i < times.size(); ++i)
    ms[i] = times[i];
  if (!backward) {
    layer->forwardPending = true;
    layer->lastForwardInference = false;
    layer->forwardKey = key;
    layer->forwardArena = layer->exec->arena();
  }
  return DMRT_OK;
  DMRT_GUARD_END
}

} // extern "C"
