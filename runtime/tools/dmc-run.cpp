//===- dmc-run.cpp - Run a layer bundle on the GPU ------------------------===//
//
//   dmc-run BUNDLE --out OUT.safetensors [--inputs IN.safetensors] [--train]
//           [--seed N] [--device N] [--no-graphs] [--poison-arena] [--dry-run]
//           [--graph-memsets]
//   dmc-run BUNDLE --bench [--reps N] [--warmup N] [--seed N] [--device N]
//           [--record DB] [--graph-memsets]
//
// The GPU counterpart of `dmc eval` (runtime/LayerData.h): the same tensor
// names and files. Arguments missing from --inputs are drawn from --seed as
// dmc eval draws them, --seed is also the dropout seed, and --out gets every
// argument and result, so `dmc eval MODEL --stage fuse --precision storage
// --seed N [--train]` computes what this computes, tensor by tensor. Without
// --train it runs forward only (DMRT_MODE_INFERENCE). --dry-run stops before
// the device: the bundle is validated and --out gets the arguments alone.
// --bench times the step (runtime/tools/RunBench.h) on drawn arguments;
// --record DB appends that step (CUDA graphs, enqueued ahead) to the tuning
// database DB as a `step` record (runtime/tools/StepRecord.h).
// --graph-memsets keeps the memset nodes cuBLASLt adds to the captured graphs
// (DMRT_OPEN_GRAPH_MEMSETS) instead of fill kernels, to compare the two.
// Runs through the C API (runtime/dmrt.hpp).
//
// Exit: 0 ok; 1 a CUDA or runtime failure; 2 usage, bundle or input file
// errors; 77 no CUDA device or driver.
//
//===----------------------------------------------------------------------===//
#include "RunBench.h"

#include "runtime/LayerBuffers.h"
#include "runtime/tools/StepRecord.h"
#include "tuning-db/Database.h"

#include "runtime/CudaDriver.h"
#include "runtime/LayerData.h"
#include "runtime/dmrtInternal.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace dmrt;

namespace {

const char *kUsage =
    "usage: dmc-run BUNDLE --out OUT.safetensors [--inputs IN.safetensors] [--train]\n"
    "               [--seed N] [--device N] [--no-graphs] [--poison-arena] [--dry-run]\n"
    "               [--graph-memsets]\n"
    "       dmc-run BUNDLE --bench [--reps N] [--warmup N] [--seed N] [--device N]\n"
    "               [--record DB] [--graph-memsets]\n"
    "Runs a layer bundle on the GPU as `dmc eval` runs it on the CPU (same tensor\n"
    "names and files; missing arguments drawn from --seed, also the dropout seed).\n"
    "Exit: 0 ok, 1 CUDA/runtime failure, 2 usage/bundle/input error, 77 no GPU.\n";

struct Options {
  std::string bundle, inputs, out, record;
  bool train = false, bench = false, dryRun = false, graphs = true, poison = false;
  bool graphMemsets = false;
  uint64_t seed = 0;
  long long device = 0, reps = 50, warmup = 5;
};

int usage(const std::string &msg) {
  std::fprintf(stderr, "dmc-run: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

bool parseNumber(const char *s, unsigned long long max, unsigned long long &out) {
  char *end = nullptr;
  errno = 0;
  if (!s || *s == '-')
    return false;
  out = std::strtoull(s, &end, 10);
  return !errno && end && !*end && end != s && out <= max;
}

/// 0 when parsed, else the exit code (usage printed).
int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : nullptr;
    unsigned long long n = 0;
    auto number = [&](unsigned long long max, const char *what) {
      if (!parseNumber(next, max, n))
        return usage(a + " needs " + what);
      ++i;
      return 0;
    };
    int rc = 0;
    if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (a == "--inputs" || a == "--out" || a == "--record") {
      if (!next)
        return usage(a + " needs a file");
      (a == "--inputs" ? o.inputs : a == "--out" ? o.out : o.record) = argv[++i];
    } else if (a == "--train") {
      o.train = true;
    } else if (a == "--bench") {
      o.bench = true;
    } else if (a == "--dry-run") {
      o.dryRun = true;
    } else if (a == "--no-graphs") {
      o.graphs = false;
    } else if (a == "--graph-memsets") {
      o.graphMemsets = true;
    } else if (a == "--poison-arena") {
      o.poison = true;
    } else if (a == "--seed") {
      if (!(rc = number(~0ull, "an unsigned 64-bit integer")))
        o.seed = n;
    } else if (a == "--device" || a == "--reps" || a == "--warmup") {
      if (!(rc = number(1000000, "an integer in [0, 1000000]")))
        (a == "--device" ? o.device : a == "--reps" ? o.reps : o.warmup) = (long long)n;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option " + a);
    } else if (o.bundle.empty()) {
      o.bundle = a;
    } else {
      return usage("more than one bundle: " + o.bundle + " and " + a);
    }
    if (rc)
      return rc;
  }
  if (o.bundle.empty())
    return usage("no bundle given");
  if (o.bench && (!o.out.empty() || !o.inputs.empty() || o.dryRun))
    return usage("--bench takes no --out, --inputs or --dry-run");
  if (!o.record.empty() && !o.bench)
    return usage("--record needs --bench (it records the step --bench measures)");
  if (!o.bench && o.out.empty())
    return usage("--out is required (or --bench)");
  if (o.bench && o.reps < 1)
    return usage("--reps must be at least 1");
  return 0;
}

int fail(int rc, const std::string &msg) {
  std::fprintf(stderr, "dmc-run: %s\n", msg.c_str());
  return rc;
}

/// Exit code for a failed open: 77 without a device, 2 for the bundle.
int openFailure(const Status &s) {
  if (s.code == DMRT_ERROR_NO_DEVICE)
    return fail(kExitNoDevice, "skipped: " + s.message);
  bool bundle = s.code == DMRT_ERROR_BUNDLE || s.code == DMRT_ERROR_UNSUPPORTED ||
                s.code == DMRT_ERROR_ARCH;
  return fail(bundle ? 2 : 1, std::string(dmrt_status_name(s.code)) + ": " + s.message);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parse(argc, argv, o))
    return rc;
  // The bundle is read once: the layer shares this manifest and loads its
  // modules from these cubin bytes.
  auto bundle = std::make_shared<Bundle>();
  const Bundle &b = *bundle;
  CubinImages images;
  std::string error;
  if (!loadBundle(o.bundle, *bundle, error, o.dryRun ? nullptr : &images))
    return fail(2, error);
  Layer layer;
  bool train = o.train || o.bench;
  dmrt_open_options oo;
  dmrt_open_options_init(&oo);
  // Forward only: the runtime allocates just the inference plan's arena.
  oo.flags = (o.dryRun ? DMRT_OPEN_VALIDATE_ONLY : 0) | (o.graphs ? 0 : DMRT_OPEN_NO_GRAPHS) |
             (o.poison ? DMRT_OPEN_POISON_ARENA : 0) | (train ? 0 : DMRT_OPEN_INFERENCE_ONLY) |
             (o.graphMemsets ? DMRT_OPEN_GRAPH_MEMSETS : 0);
  oo.device = int(o.device);
  dmrt_layer *opened = nullptr;
  Status s = Status::of(dmrt_internal_open_loaded(bundle, images, &oo, &opened));
  layer.reset(opened);
  images.clear(); // the modules are loaded
  if (!s) {
    if (!o.dryRun || s.code != DMRT_ERROR_UNSUPPORTED)
      return openFailure(s);
    // --dry-run still writes the arguments of a bundle the runtime cannot run.
    std::fprintf(stderr, "dmc-run: warning: the runtime cannot run this bundle: %s\n",
                 s.message.c_str());
  }
  // The runtime leaves the caller's current device as it found it
  // (DeviceGuard): this tool, the layer's caller, makes the layer's device
  // current, so that its buffers, copies and clock samples are on it.
  if (!o.dryRun && !cudaOk(cudaSetDevice(int(o.device)),
                           "cudaSetDevice(" + std::to_string(o.device) + ")", error))
    return fail(1, error);
  TensorFile inputs;
  if (!o.inputs.empty() && !readSafetensors(o.inputs, inputs, error))
    return fail(2, error);
  std::vector<Tensor> args;
  int drawn = 0;
  if (!gatherArguments(b, o.inputs.empty() ? nullptr : &inputs, o.inputs, o.seed, train, args,
                       drawn, error))
    return fail(2, error);
  std::map<std::string, std::string> metadata = {
      {"model", b.model}, {"bundle", o.bundle}, {"seed", std::to_string(o.seed)},
      {"precision", "gpu"}, {"graph", train ? "training" : "forward"}};
  if (o.dryRun) {
    if (!writeRunFile(b, o.out, args, {}, metadata, error))
      return fail(1, error);
    std::fprintf(stderr, "dmc-run: --dry-run: bundle valid; wrote %zu arguments (%d drawn from "
                         "seed %llu) to %s\n",
                 args.size(), drawn, (unsigned long long)o.seed, o.out.c_str());
    return 0;
  }
  DeviceBuffers buffers;
  if (!buffers.allocateAndBind(layer, error))
    return fail(1, error);
  for (const Tensor &t : args)
    if (!cudaOk(cudaMemcpy(buffers.ptr(layer, t.name), t.bytes.data(), t.bytes.size(),
                           cudaMemcpyHostToDevice),
                "upload " + t.name, error))
      return fail(1, error);
  if (o.bench) {
    BenchResult step;
    if (!benchLayer(layer, int(o.reps), int(o.warmup), error, o.bundle, &step))
      return fail(1, error);
    if (o.record.empty())
      return 0;
    dmc::tuningdb::Record r;
    std::vector<std::string> warnings;
    if (!stepRecord(b, int(o.device), 1000 * step.medianMs, 1000 * step.minMs, o.reps, r,
                    error) ||
        !dmc::tuningdb::append(o.record, r, /*sync=*/true, error, warnings))
      return fail(1, "--record " + o.record + ": " + error);
    for (const std::string &w : warnings)
      std::fprintf(stderr, "dmc-run: warning: %s\n", w.c_str());
    std::fprintf(stderr, "dmc-run: recorded the step (%.1f us, %s) in %s\n",
                 1000 * step.medianMs, r.signature.c_str(), o.record.c_str());
    return 0;
  }
  if (!statusOk(layer.setSeed(o.seed), "seed", error) ||
      !statusOk(layer.forward(nullptr, train ? DMRT_MODE_TRAIN : DMRT_MODE_INFERENCE),
                "forward", error) ||
      (train && !statusOk(layer.backward(nullptr), "backward", error)) ||
      !cudaOk(cudaDeviceSynchronize(), "the step", error))
    return fail(1, error);
  std::vector<Tensor> results;
  for (const BundleTensor &t : b.tensors) {
    if (!isRunResult(t, train))
      continue;
    Tensor r;
    r.name = t.name;
    r.dtype = t.dtype;
    r.shape = t.shape;
    r.bytes.resize(size_t(t.bytes));
    if (!cudaOk(cudaMemcpy(r.bytes.data(), buffers.ptr(layer, t.name), r.bytes.size(),
                           cudaMemcpyDeviceToHost),
                "download " + t.name, error))
      return fail(1, error);
    results.push_back(std::move(r));
  }
  metadata["device"] = layer.deviceName();
  if (!writeRunFile(b, o.out, args, results, metadata, error))
    return fail(1, error);
  std::fprintf(stderr, "dmc-run: %s on %s: %s; wrote %zu tensors (%d arguments drawn from seed "
                       "%llu) to %s\n",
               b.model.c_str(), layer.deviceName().c_str(),
               train ? "forward + backward" : "forward (inference)", args.size() + results.size(),
               drawn, (unsigned long long)o.seed, o.out.c_str());
  return 0;
}
