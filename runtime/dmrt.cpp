//===- dmrt.cpp - The C API over Bundle, LayerPlan, LayerBindings, Executor ===//
//
// Every entry point catches everything (no exception leaves the C API) and
// records its error in a thread-local string. Validation runs in this order:
// files and manifest (loadBundle), what the runtime can run (buildLayerPlan),
// then, unless DMRT_OPEN_VALIDATE_ONLY, the device (Executor::open).
//
//===----------------------------------------------------------------------===//
#include "runtime/dmrt.h"

#include "runtime/Executor.h"
#include "runtime/ModuleCache.h"
#include "runtime/dmrtInternal.h"
#include "runtime/dmrtLayer.h"

#include <new>

using namespace dmrt;

namespace dmrt {

thread_local std::string lastError;

dmrt_status fail(dmrt_status s, const std::string &message) {
  lastError = message;
  return s;
}

} // namespace dmrt

extern "C" {

const char *dmrt_last_error(void) { return dmrt::lastError.c_str(); }

const char *dmrt_status_name(dmrt_status s) {
  switch (s) {
  case DMRT_OK: return "DMRT_OK";
  case DMRT_ERROR_INVALID_ARGUMENT: return "DMRT_ERROR_INVALID_ARGUMENT";
  case DMRT_ERROR_BUNDLE: return "DMRT_ERROR_BUNDLE";
  case DMRT_ERROR_UNSUPPORTED: return "DMRT_ERROR_UNSUPPORTED";
  case DMRT_ERROR_NO_DEVICE: return "DMRT_ERROR_NO_DEVICE";
  case DMRT_ERROR_ARCH: return "DMRT_ERROR_ARCH";
  case DMRT_ERROR_CUDA: return "DMRT_ERROR_CUDA";
  case DMRT_ERROR_BINDING: return "DMRT_ERROR_BINDING";
  case DMRT_ERROR_UNBOUND: return "DMRT_ERROR_UNBOUND";
  case DMRT_ERROR_STATE: return "DMRT_ERROR_STATE";
  case DMRT_ERROR_INTERNAL: return "DMRT_ERROR_INTERNAL";
  }
  return "DMRT_ERROR_(unknown)";
}

int dmrt_api_version(void) { return DMRT_API_VERSION; }

void dmrt_open_options_init(dmrt_open_options *o) {
  if (!o)
    return;
  o->struct_size = sizeof(dmrt_open_options);
  o->device = 0;
  o->flags = 0;
}

} // extern "C"

namespace {

/// The arguments every open checks first: `out` (cleared) and the options
/// (null: the defaults) into `o`.
dmrt_status beginOpen(const dmrt_open_options *options, dmrt_layer **out,
                      dmrt_open_options &o) {
  if (!out)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_open: out is null");
  *out = nullptr;
  dmrt_open_options_init(&o);
  if (options) {
    if (options->struct_size != sizeof(dmrt_open_options))
      return fail(DMRT_ERROR_INVALID_ARGUMENT,
                  "dmrt_open: options->struct_size is " +
                      std::to_string(options->struct_size) + ", expected " +
                      std::to_string(sizeof(dmrt_open_options)) +
                      " (call dmrt_open_options_init)");
    o = *options;
  }
  const uint32_t known = DMRT_OPEN_VALIDATE_ONLY | DMRT_OPEN_NO_GRAPHS |
                         DMRT_OPEN_EXTERNAL_ARENA | DMRT_OPEN_POISON_ARENA |
                         DMRT_OPEN_INFERENCE_ONLY | DMRT_OPEN_SERIAL_GRAPHS |
                         DMRT_OPEN_GRAPH_MEMSETS;
  if (o.flags & ~known)
    return fail(DMRT_ERROR_INVALID_ARGUMENT,
                "dmrt_open: unknown flags " + std::to_string(o.flags & ~known));
  if (o.device < 0)
    return fail(DMRT_ERROR_INVALID_ARGUMENT,
                "dmrt_open: device " + std::to_string(o.device) + " is negative");
  return DMRT_OK;
}

/// dmrt_open once the bundle is loaded (options checked).
dmrt_status openLoaded(std::shared_ptr<const Bundle> bundle, const CubinImages &images,
                       const dmrt_open_options &o, dmrt_layer **out) {
  if (!bundle)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_open: no bundle");
  std::unique_ptr<dmrt_layer> layer(new dmrt_layer(std::move(bundle)));
  std::string error;
  if (!buildLayerPlan(layer->bundle, layer->plan, error))
    return fail(DMRT_ERROR_UNSUPPORTED, layer->bundle.dir + ": " + error);
  layer->bindings = std::make_unique<LayerBindings>(layer->bundle, layer->plan);
  for (int ph = 0; ph < 2; ++ph)
    for (const BundleStep &s : layer->plan.steps[ph])
      layer->stepNames[ph].push_back(stepName(layer->bundle, s));
  layer->externalArena = (o.flags & DMRT_OPEN_EXTERNAL_ARENA) != 0;
  layer->inferenceOnly = (o.flags & DMRT_OPEN_INFERENCE_ONLY) != 0;
  if (!(o.flags & DMRT_OPEN_VALIDATE_ONLY)) {
    auto exec = std::make_unique<Executor>(layer->bundle, layer->plan, *layer->bindings);
    ExecutorOptions eo;
    eo.device = o.device;
    eo.graphs = !(o.flags & DMRT_OPEN_NO_GRAPHS);
    eo.concurrentGraphs = !(o.flags & DMRT_OPEN_SERIAL_GRAPHS);
    eo.graphFills = !(o.flags & DMRT_OPEN_GRAPH_MEMSETS);
    eo.externalArena = layer->externalArena;
    eo.poisonArena = (o.flags & DMRT_OPEN_POISON_ARENA) != 0;
    eo.inferenceOnly = layer->inferenceOnly;
    if (!exec->open(eo, images, error))
      return fail(exec->noDevice()       ? DMRT_ERROR_NO_DEVICE
                  : exec->archMismatch() ? DMRT_ERROR_ARCH
                                         : DMRT_ERROR_CUDA,
                  error);
    layer->exec = std::move(exec);
  }
  *out = layer.release();
  return DMRT_OK;
}

} // namespace

dmrt_status dmrt_internal_open_loaded(std::shared_ptr<const Bundle> bundle,
                                      const CubinImages &images,
                                      const dmrt_open_options *options, dmrt_layer **out) {
  DMRT_GUARD_BEGIN
  dmrt_open_options o;
  if (dmrt_status s = beginOpen(options, out, o); s != DMRT_OK)
    return s;
  return openLoaded(std::move(bundle), images, o, out);
  DMRT_GUARD_END
}

extern "C" {

dmrt_status dmrt_open(const char *bundle_dir, const dmrt_open_options *options,
                      dmrt_layer **out) {
  DMRT_GUARD_BEGIN
  dmrt_open_options o;
  if (dmrt_status s = beginOpen(options, out, o); s != DMRT_OK)
    return s;
  if (!bundle_dir)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_open: bundle_dir is null");
  auto bundle = std::make_shared<Bundle>();
  CubinImages images; // read once here, loaded into modules by the executor
  std::string error;
  if (!loadBundle(bundle_dir, *bundle, error,
                  o.flags & DMRT_OPEN_VALIDATE_ONLY ? nullptr : &images))
    return fail(DMRT_ERROR_BUNDLE, error);
  return openLoaded(std::move(bundle), images, o, out);
  DMRT_GUARD_END
}

void dmrt_internal_module_stats(uint64_t *loads, uint64_t *unloads, uint64_t *live) {
  ModuleRegistry::Stats s;
  try {
    s = ModuleRegistry::process().stats();
  } catch (...) { // a failed lock: report zeros rather than throw through C
  }
  if (loads)
    *loads = s.loads;
  if (unloads)
    *unloads = s.unloads;
  if (live)
    *live = s.live;
}

/// The executor's destructor restores the caller's current device itself.
void dmrt_close(dmrt_layer *layer) {
  try {
    delete layer;
  } catch (...) {
  }
}

const char *dmrt_model(const dmrt_layer *layer) {
  return layer ? layer->bundle.model.c_str() : "";
}

const char *dmrt_device_name(const dmrt_layer *layer) {
  return layer && layer->exec ? layer->exec->deviceName().c_str() : "";
}

dmrt_status dmrt_tensor_count(const dmrt_layer *layer, int32_t *count) {
  if (!layer || !count)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_tensor_count: null argument");
  *count = int32_t(layer->plan.callerTensors.size());
  return DMRT_OK;
}

dmrt_status dmrt_tensor_info(const dmrt_layer *layer, int32_t index, dmrt_tensor_desc *out) {
  DMRT_GUARD_BEGIN
  if (!layer || !out)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_tensor_info: null argument");
  const LayerPlan &p = layer->plan;
  if (index < 0 || size_t(index) >= p.callerTensors.size())
    return fail(DMRT_ERROR_INVALID_ARGUMENT,
                "dmrt_tensor_info: index " + std::to_string(index) + " out of range [0, " +
                    std::to_string(p.callerTensors.size()) + ")");
  const CallerTensor &ct = p.callerTensors[size_t(index)];
  const BundleTensor &t = *layer->bundle.tensor(ct.id);
  if (t.shape.size() > DMRT_MAX_RANK)
    return fail(DMRT_ERROR_UNSUPPORTED, "tensor '" + t.name + "' has rank " +
                                            std::to_string(t.shape.size()) + " > DMRT_MAX_RANK");
  *out = dmrt_tensor_desc{};
  out->name = t.name.c_str();
  out->role = toCRole(t.role);
  out->dims = t.dims.c_str();
  out->rank = int32_t(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d)
    out->shape[d] = t.shape[d];
  out->dtype = toCDType(t.dtype);
  out->bytes = t.bytes;
  out->buffer = int32_t(ct.buffer);
  out->buffer_offset = ct.byteOffset;
  out->buffer_bytes = p.buffers[ct.buffer].bytes;
  return DMRT_OK;
  DMRT_GUARD_END
}

dmrt_status dmrt_find_tensor(const dmrt_layer *layer, const char *name, int32_t *index) {
  DMRT_GUARD_BEGIN
  if (!layer || !name || !index)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_find_tensor: null argument");
  int64_t i = layer->plan.findCallerTensor(layer->bundle, name);
  if (i < 0)
    return fail(DMRT_ERROR_BINDING, std::string("no caller tensor '") + name + "'");
  *index = int32_t(i);
  return DMRT_OK;
  DMRT_GUARD_END
}

dmrt_status dmrt_memory(const dmrt_layer *layer, dmrt_memory_info *out) {
  if (!layer || !out)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_memory: null argument");
  *out = dmrt_memory_info{};
  MemoryInfo m;
  if (layer->exec) {
    m = layer->exec->memory();
  } else { // validate-only: the plan's figures, no cuBLASLt workspace
    ArenaPlanKind plan =
        layer->inferenceOnly ? ArenaPlanKind::Inference : ArenaPlanKind::Training;
    m.arenaBytes = arenaBytesOf(layer->bundle, planUsed(layer->bundle, plan));
    m.kernelWorkspaceBytes = planWorkspaceBytes(layer->bundle, plan);
    for (const CallerBuffer &b : layer->plan.buffers)
      m.callerBytes += b.bytes;
  }
  out->arena_bytes = m.arenaBytes;
  out->kernel_workspace_bytes = m.kernelWorkspaceBytes;
  out->gemm_workspace_bytes = m.gemmWorkspaceBytes;
  out->caller_bytes = m.callerBytes;
  out->external_arena = layer->externalArena ? 1 : 0;
  return DMRT_OK;
}

dmrt_status dmrt_arena_bytes(const dmrt_layer *layer, dmrt_mode mode, int64_t *bytes) {
  if (!layer || !bytes)
    return fail(DMRT_ERROR_INVALID_ARGUMENT, "dmrt_arena_bytes: null argument");
  ArenaPlanKind plan = ArenaPlanKind::Training;
  if (dmrt_status s = planOfMode("dmrt_arena_bytes", mode, plan); s != DMRT_OK)
    return s;
  *bytes = arenaBytesOf(layer->bundle, planUsed(layer->bundle, plan));
  return DMRT_OK;
}

} // extern "C"
