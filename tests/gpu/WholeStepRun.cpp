//===- WholeStepRun.cpp - A whole training step through runtime/dmrt.h ----===//
#include "WholeStepRun.h"
#include "WholeStepUtil.h"

#include "runtime/Bundle.h"
#include "runtime/Harness.h"
#include "runtime/dmrt.hpp"
#include "runtime/dmrtInternal.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

namespace dmctest {
using namespace util;

bool runStep(const std::string &bundleDir, const std::string &storagePath,
             const std::string &exactPath, StepRun &run, std::string &error) {
  dmrt::Bundle b;
  dmrt::TensorFile storage, exact;
  std::vector<dmrt::StepBinding> bindings;
  if (!loadEvalStep(bundleDir, storagePath, b, storage, bindings, run.seed, error) ||
      (!exactPath.empty() && !dmrt::readSafetensors(exactPath, exact, error)))
    return false;
  dmrt::Layer layer;
  Buffers buf;
  // A poisoned arena (NaN bytes): a step reading arena memory that no earlier
  // step wrote makes results NaN, and the comparison fails.
  if (!statusOk(layer.open(bundleDir, DMRT_OPEN_NO_GRAPHS | DMRT_OPEN_POISON_ARENA), bundleDir,
             error) ||
      !buf.allocateAndBind(layer, error))
    return false;
  std::vector<std::string> results;
  if (!uploadInputs(layer, buf, b, bindings, results, run.uploaded, error))
    return false;
  // Graphs on: the steps ordered by the memory they share, so independent
  // ones may overlap (runtime/StepDependencies.h); serial: one chain.
  std::map<std::string, std::vector<uint8_t>> plain, graph, other, again, serial;
  if (!step(layer, buf, results, run.seed, 0, plain, error) ||
      !statusOk(layer.setGraphMode(DMRT_GRAPHS_ON), "graphs on", error) ||
      !step(layer, buf, results, run.seed, 0, graph, error) ||
      !step(layer, buf, results, run.seed, 1, other, error) ||
      !step(layer, buf, results, run.seed, 0, again, error) ||
      !statusOk(layer.setGraphMode(DMRT_GRAPHS_SERIAL), "serial graphs", error) ||
      !step(layer, buf, results, run.seed, 0, serial, error))
    return false;
  if (graph != plain || again != plain) {
    error = bundleDir + ": the step replayed from a CUDA graph differs from plain launches" +
            (graph == plain ? " after the seed was changed and changed back" : "");
    return false;
  }
  if (serial != plain) {
    error = bundleDir + ": the step replayed from a serial CUDA graph differs from plain launches";
    return false;
  }
  // Every caller buffer moved (a second set, as dmc.torch's gradients move
  // between steps): both phases are captured again and update their
  // executable graphs in place, and the step still equals plain launches.
  std::map<std::string, std::vector<uint8_t>> graphAgain, moved;
  int32_t madeBefore = 0, updatedBefore = 0, made = 0, updated = 0;
  Buffers second;
  std::vector<std::string> ignoredResults;
  int ignoredUploads = 0;
  if (!statusOk(layer.setGraphMode(DMRT_GRAPHS_ON), "graphs on", error) ||
      !step(layer, buf, results, run.seed, 0, graphAgain, error))
    return false;
  dmrt_internal_graph_counts(layer.get(), &madeBefore, &updatedBefore);
  // Unbound first: stacked parameters share one buffer, which moves whole.
  for (const dmrt_tensor_desc &t : layer.tensors())
    if (!statusOk(layer.unbind(t.name), std::string("unbinding ") + t.name, error))
      return false;
  if (!second.allocateAndBind(layer, error) ||
      !uploadInputs(layer, second, b, bindings, ignoredResults, ignoredUploads, error) ||
      !step(layer, second, results, run.seed, 0, moved, error))
    return false;
  dmrt_internal_graph_counts(layer.get(), &made, &updated);
  if (graphAgain != plain || moved != plain) {
    error = bundleDir + ": the step replayed from a CUDA graph differs from plain launches " +
            (graphAgain == plain ? "after every buffer was bound elsewhere" : "");
    return false;
  }
  if (made != madeBefore || updated != updatedBefore + 2) {
    error = bundleDir + ": binding every buffer elsewhere instantiated " +
            std::to_string(made - madeBefore) + " graph(s) and updated " +
            std::to_string(updated - updatedBefore) +
            " in place (expected 0 and 2: the forward's and the backward's, same topology)";
    return false;
  }
  bool dropout = false;
  for (const dmrt::BundleKernel &k : b.kernels)
    dropout |= k.name.find("dropout") != std::string::npos;
  if (dropout && other == plain) {
    error = bundleDir + ": a new seed offset changed no result of a layer with dropout "
                        "(the graph's seeds were not rewritten?)";
    return false;
  }
  for (const dmrt::StepBinding &sb : bindings) {
    if (sb.input)
      continue;
    const dmrt::BundleTensor *t = b.tensor(sb.tensor);
    dmrt::Tensor got;
    got.dtype = t->dtype;
    got.shape = t->shape;
    got.bytes = plain[t->name];
    run.names.push_back(t->name);
    run.got[t->name] = dmrt::toDoubles(got);
    run.ref[t->name] = dmrt::toDoubles(*sb.value);
    if (!exactPath.empty()) {
      const dmrt::Tensor *e = exact.find(t->name);
      if (!e) {
        error = exactPath + ": no tensor '" + t->name + "'";
        return false;
      }
      run.exact[t->name] = dmrt::toDoubles(*e);
    }
  }
  run.steps = int(b.steps.size());
  std::printf("%s: %d steps through dmrt.h on %s, %d tensors in, %zu compared, dropout seed "
              "%llu; graph replays (memory-ordered and serial, and updated in place for "
              "buffers bound elsewhere) equal plain launches%s\n",
              bundleDir.c_str(), run.steps, layer.deviceName().c_str(), run.uploaded,
              run.names.size(), static_cast<unsigned long long>(run.seed),
              dropout ? ", a new seed offset changes the results" : "");
  return true;
}

bool checkMisuse(const std::string &bundleDir, const std::string &otherArchBundle) {
  bool ok = true;
  auto expect = [&](const dmrt::Status &s, dmrt_status want, const char *what) {
    bool pass = s.code == want && (want == DMRT_OK || !s.message.empty());
    std::printf("  misuse %s: %s (%s: %s)\n", what, pass ? "ok" : "FAIL",
                dmrt_status_name(s.code), s.message.c_str());
    ok &= pass;
  };
  dmrt::Layer layer;
  Buffers buf;
  std::string error;
  if (!statusOk(layer.open(bundleDir), bundleDir, error) || !buf.allocateAndBind(layer, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return false;
  }
  std::vector<dmrt_tensor_desc> ts = layer.tensors();
  alignas(256) static char host[1 << 16];
  expect(layer.bind(ts[0].name, host), DMRT_ERROR_BINDING, "host pointer bound");
  expect(layer.backward(nullptr), DMRT_ERROR_STATE, "backward before forward");
  expect(layer.forward(nullptr, DMRT_MODE_INFERENCE), DMRT_OK, "inference forward");
  expect(layer.backward(nullptr), DMRT_ERROR_STATE, "backward after inference");
  expect(layer.forward(nullptr), DMRT_OK, "training forward");
  expect(layer.backward(nullptr), DMRT_OK, "backward");
  expect(layer.backward(nullptr), DMRT_ERROR_STATE, "second backward");
  ok &= cudaDeviceSynchronize() == cudaSuccess;
  if (!otherArchBundle.empty()) {
    dmrt::Layer other;
    expect(other.open(otherArchBundle), DMRT_ERROR_ARCH, "bundle for another arch");
  }
  return ok;
}

} // namespace dmctest
