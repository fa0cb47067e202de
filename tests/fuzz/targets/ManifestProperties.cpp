//===- ManifestProperties.cpp - What an accepted manifest promises ---------===//
#include "tests/fuzz/targets/ManifestProperties.h"

#include "tests/fuzz/FuzzTarget.h"

#include "runtime/LayerBindings.h"
#include "runtime/LayerPlan.h"

#include <cstdint>

namespace dmc::fuzz {

namespace {

using namespace dmrt;

std::string tensorWhere(const BundleTensor &t) {
  return "tensor " + std::to_string(t.id) + " (" + t.name + ")";
}

/// [offset, offset + bytes) inside [0, size), without overflowing.
bool inside(int64_t offset, int64_t bytes, int64_t size) {
  return offset >= 0 && bytes >= 0 && offset <= size && bytes <= size - offset;
}

void checkArena(const Manifest &m, const char *target) {
  for (const BundleTensor &t : m.tensors) {
    if (!t.isAlias)
      require(t.bytes == t.numElements() * int64_t(dtypeSize(t.dtype)), target,
              tensorWhere(t) + " has " + std::to_string(t.bytes) + " bytes for " +
                  std::to_string(t.numElements()) + " elements");
    if (t.arenaOffset >= 0)
      require(inside(t.arenaOffset, t.bytes, m.arenaBytes), target,
              tensorWhere(t) + " lies outside the arena");
    if (t.inferenceArenaOffset >= 0)
      require(inside(t.inferenceArenaOffset, t.bytes, m.inferenceArenaBytes), target,
              tensorWhere(t) + " lies outside the inference arena");
  }
  for (const BundleKernel &k : m.kernels) {
    if (k.workspaceOffset >= 0)
      require(inside(k.workspaceOffset, k.workspaceBytes, m.arenaBytes), target,
              "kernel " + k.name + "'s workspace lies outside the arena");
    if (k.inferenceWorkspaceOffset >= 0)
      require(inside(k.inferenceWorkspaceOffset, k.workspaceBytes, m.inferenceArenaBytes),
              target, "kernel " + k.name + "'s workspace lies outside the inference arena");
  }
}

void checkRoundTrip(const Manifest &m, const char *target) {
  std::string text = writeManifest(m), error;
  Manifest again;
  require(parseManifest(text, "written.json", again, error), target,
          "writeManifest's output does not read back: " + error);
  require(writeManifest(again) == text, target,
          "writeManifest(parseManifest(writeManifest(m))) differs from writeManifest(m)");
}

/// Binds every caller tensor at its planned offset in a fake, aligned buffer.
void checkBindings(const Manifest &m, const char *target) {
  LayerPlan plan;
  std::string error;
  if (!buildLayerPlan(m, plan, error)) {
    require(!error.empty(), target, "buildLayerPlan failed without a message");
    return;
  }
  LayerBindings bindings(m, plan);
  // Addresses only: LayerBindings never dereferences them.
  uintptr_t next = uintptr_t(1) << 40;
  std::vector<uintptr_t> base(plan.buffers.size());
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    base[b] = next;
    next += (uintptr_t(plan.buffers[b].bytes) + 2 * kBindAlignment) & ~uintptr_t(kBindAlignment - 1);
  }
  for (const CallerTensor &c : plan.callerTensors) {
    const BundleTensor *t = m.tensor(c.id);
    require(t != nullptr, target, "a caller tensor id the manifest does not have");
    void *ptr = reinterpret_cast<void *>(base[c.buffer] + uintptr_t(c.byteOffset));
    require(bindings.bind(t->name, ptr, t->bytes, t->dtype, t->shape, error), target,
            "binding " + tensorWhere(*t) + " where the plan puts it fails: " + error);
  }
  for (Phase ph : {Phase::Forward, Phase::Backward}) {
    std::vector<std::string> missing = bindings.missingFor(ph);
    require(missing.empty(), target,
            std::string("every caller tensor bound, yet the ") + phaseName(ph) +
                " phase misses " + (missing.empty() ? "" : missing.front()));
  }
}

} // namespace

void checkAcceptedManifest(const Manifest &m, const char *target) {
  checkArena(m, target);
  checkRoundTrip(m, target);
  checkBindings(m, target);
}

} // namespace dmc::fuzz
