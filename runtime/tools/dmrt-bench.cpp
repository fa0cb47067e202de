//===- dmrt-bench.cpp - Check and time the kernels of a layer bundle ------===//
//
//   dmrt-bench --device-info [--device N] [--json OUT.json]
//   dmrt-bench BUNDLE [--list] [--kernel ID|NAME[,...]|all] [--contraction ID[,...]|all]
//              [--config-sweep] [--reference] [--reps N] [--warmup N]
//              [--timing stream|isolated] [--flush-l2] [--seed S]
//              [--json OUT.json] [--tolerance T] [--device N] [--int-max N]
//              [--algorithms heuristic|all] [--max-algorithms N]
//              [--plant-fault zero|scale|shift|permute]
//
// Options: runtime/BenchOptions.h (kBenchUsage is the --help text).
//
// Exit: 0 every checked output passes; 1 a mismatch or a CUDA failure (named),
// a GPU that is present but unusable (e.g. a driver older than the runtime)
// included; 2 usage or bundle errors (with --reference: a step without a
// reference file); 77 no CUDA device or no driver (skipped). A contraction the
// compiler recorded as skipped (reference metadata `skipped`) is listed, not
// an error.
//
//===----------------------------------------------------------------------===//
#include "runtime/BenchOptions.h"
#include "runtime/Bundle.h"
#include "runtime/Harness.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

using namespace dmrt;
using json = nlohmann::ordered_json;

namespace {


constexpr int kExitMismatch = 1, kExitUsage = 2;

int usage(const std::string &msg) {
  std::fprintf(stderr, "dmrt-bench: %s\n%s", msg.c_str(), kBenchUsage);
  return kExitUsage;
}

json comparisonJson(const OutputCheck &o) {
  auto num = [](double v) -> json {
    if (std::isfinite(v))
      return v;
    return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  };
  return json{{"output", o.name},
              {"tensor", o.tensor},
              {"pass", o.cmp.pass},
              {"compared", o.cmp.compared},
              {"stride", o.stride},
              {"failing", o.cmp.failing},
              {"max_abs_err", num(o.cmp.maxAbsErr)},
              {"max_abs_ref", num(o.cmp.maxAbsRef)},
              {"rms_ref", num(o.cmp.scale)},
              {"rtol", o.cmp.rtol},
              {"atol", num(o.cmp.atol)},
              {"max_ratio", num(o.cmp.maxRatio)},
              {"worst_index", o.cmp.worstIndex},
              {"worst_ref", num(o.cmp.worstRef)},
              {"worst_got", num(o.cmp.worstGot)},
              {"worst_bound", num(o.cmp.worstBound)},
              {"non_finite", o.cmp.nonFinite},
              {"zero_reference", o.cmp.zeroReference},
              {"size_mismatch", o.cmp.sizeMismatch}};
}

/// The device block of a run's JSON (without the copy bandwidth).
json deviceJson(const DeviceInfo &dev) {
  return {{"ordinal", dev.ordinal},
          {"name", dev.name},
          {"sm_count", dev.smCount},
          {"compute_capability",
           std::to_string(dev.ccMajor) + "." + std::to_string(dev.ccMinor)},
          {"l2_bytes", dev.l2Bytes},
          {"memory_bytes", dev.memoryBytes},
          {"driver_version", dev.driverVersion},
          {"runtime_version", dev.runtimeVersion},
          {"mem_clock_khz", dev.memClockKhz},
          {"cublaslt_version", dev.cublasLtVersion}};
}

/// --device-info: {"device": {...}} to `jsonOut` (or stdout).
int printDeviceInfo(int device, const std::string &jsonOut) {
  Harness h;
  std::string error;
  if (!h.open(device, error)) {
    std::printf("skipped: no CUDA device: %s\n", error.c_str());
    return h.noDevice() ? kExitNoDevice : kExitMismatch;
  }
  const std::string text = json{{"device", deviceJson(h.device())}}.dump(2) + "\n";
  if (jsonOut.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(jsonOut);
  out << text;
  if (!out) {
    std::fprintf(stderr, "dmrt-bench: cannot write %s\n", jsonOut.c_str());
    return kExitUsage;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  BenchOptions args;
  std::string argError;
  if (!parseBenchArgs(argc, argv, args, argError))
    return usage(argError);
  if (args.help) {
    std::fputs(kBenchUsage, stdout);
    return 0;
  }
  const std::string &bundleDir = args.bundleDir, &kernelSel = args.kernelSel,
                    &contractionSel = args.contractionSel, &jsonOut = args.jsonOut;
  const bool list = args.list, sweep = args.sweep;
  const HarnessOptions &opt = args.harness;
  const PlantedFault planted = opt.plantFault;
  const int device = args.device;
  if (args.deviceInfo)
    return printDeviceInfo(device, jsonOut);

  Bundle bundle;
  CubinImages images; // read once here; the harness loads modules from them
  std::string error;
  if (!loadBundle(bundleDir, bundle, error, list ? nullptr : &images)) {
    std::fprintf(stderr, "dmrt-bench: %s\n", error.c_str());
    return kExitUsage;
  }

  if (list) {
    std::printf("bundle %s: model %s, arch %s, nvrtc %s, %zu tensors\n",
                bundleDir.c_str(), bundle.model.c_str(), bundle.arch.c_str(),
                bundle.nvrtc.c_str(), bundle.tensors.size());
    for (const BundleStep &s : bundle.steps) {
      if (s.kind == BundleStep::Kernel) {
        const BundleKernel *k = bundle.kernel(s.id);
        std::printf("  kernel      %4lld  %-40s %-8s grid %lldx%lldx%lld block "
                    "%lldx%lldx%lld  %s\n",
                    (long long)k->id, k->name.c_str(), k->phase.c_str(),
                    (long long)k->grid[0], (long long)k->grid[1],
                    (long long)k->grid[2], (long long)k->block[0],
                    (long long)k->block[1], (long long)k->block[2],
                    k->config.c_str());
      } else {
        const BundleContraction *c = bundle.contraction(s.id);
        std::printf("  contraction %4lld  %-40s %-8s %s\n", (long long)c->id,
                    c->equation.c_str(), c->phase.c_str(),
                    c->gemm.describe().c_str());
      }
    }
    return 0;
  }

  // Selection, in step order (selected items outside `steps` follow).
  std::vector<BundleStep> run;
  bool any = !kernelSel.empty() || !contractionSel.empty();
  std::set<int64_t> kSel, cSel;
  bool allKernels = args.kernelList.size() == 1 && args.kernelList[0] == "all";
  bool allContractions = args.contractionList.size() == 1 && args.contractionList[0] == "all";
  for (const std::string &item : allKernels ? std::vector<std::string>{} : args.kernelList) {
    long long id;
    const BundleKernel *k = parseIntArg(item.c_str(), 0, INT64_MAX, id)
                                ? bundle.kernel(id)
                                : bundle.kernelByName(item);
    if (!k)
      return usage("--kernel " + kernelSel + ": " + item + ": no such kernel id or name in " +
                   bundleDir);
    kSel.insert(k->id);
  }
  if (allKernels || !any)
    for (const auto &k : bundle.kernels)
      kSel.insert(k.id);
  for (const std::string &item :
       allContractions ? std::vector<std::string>{} : args.contractionList) {
    long long id;
    if (!parseIntArg(item.c_str(), 0, INT64_MAX, id) || !bundle.contraction(id))
      return usage("--contraction " + contractionSel + ": " + item +
                   ": no such contraction id in " + bundleDir);
    cSel.insert(id);
  }
  if (allContractions || !any)
    for (const auto &c : bundle.contractions)
      if (c.mappable || !contractionSel.empty())
        cSel.insert(c.id);
  std::set<std::pair<int, int64_t>> seen;
  for (const BundleStep &s : bundle.steps)
    if ((s.kind == BundleStep::Kernel ? kSel : cSel).count(s.id) &&
        seen.insert({s.kind, s.id}).second)
      run.push_back(s);
  for (int64_t id : kSel)
    if (seen.insert({BundleStep::Kernel, id}).second)
      run.push_back({BundleStep::Kernel, id});
  for (int64_t id : cSel)
    if (seen.insert({BundleStep::Contraction, id}).second)
      run.push_back({BundleStep::Contraction, id});
  if (sweep)
    std::fprintf(stderr, "dmrt-bench: --config-sweep: this bundle has one "
                         "configuration per kernel; timing those\n");

  Harness h;
  if (!h.open(device, error)) {
    if (h.noDevice()) {
      std::printf("skipped: no CUDA device: %s\n", error.c_str());
      std::fflush(stdout);
      return kExitNoDevice;
    }
    std::fprintf(stderr, "dmrt-bench: CUDA initialisation failed: %s\n",
                 error.c_str());
    return kExitMismatch;
  }
  const DeviceInfo &dev = h.device();
  if (!h.load(bundle, std::move(images), error)) {
    std::fprintf(stderr, "dmrt-bench: %s\n", error.c_str());
    return kExitMismatch;
  }
  if (!h.measureCopyBandwidth(error)) {
    std::fprintf(stderr, "dmrt-bench: %s\n", error.c_str());
    return kExitMismatch;
  }
  std::printf("device %d: %s, %d SMs, cc %d.%d, L2 %lld MiB, driver %d, runtime "
              "%d\n",
              dev.ordinal, dev.name.c_str(), dev.smCount, dev.ccMajor,
              dev.ccMinor, (long long)(dev.l2Bytes >> 20), dev.driverVersion,
              dev.runtimeVersion);
  std::printf("copy bandwidth (d2d %lld MiB, read+write, median of 10): %.1f "
              "GB/s; copies that fit the L2: %.1f GB/s\n",
              (long long)(dev.copyBytes >> 20), dev.copyGBs, dev.l2CopyGBs);
  std::printf("bundle %s (%s, %s); reps %d, warm-up %d%s\n", bundleDir.c_str(),
              bundle.model.c_str(), bundle.arch.c_str(), opt.reps, opt.warmup,
              opt.reference ? ", checked against the reference" : "");
  if (opt.timing == TimingMode::Stream)
    std::printf("timing: stream (per launch: back-to-back launches over `sets` "
                "copies of each step's tensors)\n");
  else
    std::printf("timing: isolated (each launch alone%s)\n",
                opt.flushL2 ? ", L2 flushed before it" : "");
  std::printf("%%size-copy: GB/s as a %% of a device-to-device copy moving the "
              "step's bytes, timed the same way\n");
  if (opt.algorithms == AlgorithmMode::All)
    std::printf("algorithms: each contraction also times the heuristic's top %d "
                "and cublasLtMatmulAlgoGetIds configurations (at most %d in "
                "all, %d reps each)\n",
                opt.topAlgorithms, opt.maxAlgorithms,
                std::max(1, std::min(opt.reps, opt.sweepReps)));
  if (opt.pruneAlgorithms > 0)
    std::printf("algorithms: pruned to the heuristic's best and the %d others the cost "
                "model prices lowest\n",
                opt.pruneAlgorithms - 1);
  std::printf("%s\n", stepTableHeader().c_str());

  json j;
  j["bundle"] = bundleDir;
  j["model"] = bundle.model;
  j["arch"] = bundle.arch;
  j["device"] = deviceJson(dev);
  j["device"]["copy_bytes"] = dev.copyBytes;
  j["device"]["copy_gbs"] = dev.copyGBs;
  j["options"] = {{"reps", opt.reps},       {"warmup", opt.warmup},
                  {"timing", timingModeName(opt.timing)},
                  {"flush_l2", opt.flushL2}, {"seed", opt.seed},
                  {"reference", opt.reference},
                  {"tolerance", opt.tolerance},
                  {"algorithms", algorithmModeName(opt.algorithms)}};
  if (opt.algorithms == AlgorithmMode::All) {
    j["options"]["max_algorithms"] = opt.maxAlgorithms;
    j["options"]["prune_algorithms"] = opt.pruneAlgorithms;
  }
  json steps = json::array();
  int exitCode = 0;
  int checkedSteps = 0; // steps whose outputs were compared with a reference
  int skippedSteps = 0;    // --reference: contractions the compiler skipped
  int unmappableSteps = 0; // contractions without a cuBLASLt form: not run
  std::vector<std::string> missedFault; // --plant-fault: checked steps that passed
  std::vector<std::string> failures;
  std::vector<double> modelRhos; // each swept contraction's cost-model rank correlation
  std::vector<int> bestRanks;    // ... and where its measured fastest stands in the model
  bool stop = false;
  for (const BundleStep &s : run) {
    if (stop)
      break;
    if (s.kind == BundleStep::Contraction && !bundle.contraction(s.id)->mappable) {
      // Layout selection has not given it a cuBLASLt form: nothing to run.
      const BundleContraction &c = *bundle.contraction(s.id);
      std::printf("c    %-5lld %-36s skipped: no cuBLASLt form (%s)\n", (long long)s.id,
                  c.equation.c_str(), c.unmappable.c_str());
      steps.push_back({{"kind", "contraction"}, {"id", s.id}, {"name", c.equation},
                       {"skipped", c.unmappable}});
      ++unmappableSteps;
      continue;
    }
    StepResult r;
    StepStatus st;
    if (s.kind == BundleStep::Kernel)
      st = h.runKernel(bundle, *bundle.kernel(s.id), opt, r, error);
    else
      st = h.runContraction(bundle, *bundle.contraction(s.id), opt, r, error);
    const char *kind = s.kind == BundleStep::Kernel ? "k" : "c";
    json js = {{"kind", s.kind == BundleStep::Kernel ? "kernel" : "contraction"},
               {"id", s.id},
               {"name", s.kind == BundleStep::Kernel ? bundle.kernel(s.id)->name
                                                     : bundle.contraction(s.id)->equation}};
    if (st == StepStatus::Skipped) {
      // --reference, and the compiler recorded why this contraction has no
      // reference data (above its flop limit): listed, not checked.
      std::printf("%s    %-5lld %-36s skipped: %s\n", kind, (long long)s.id,
                  js["name"].get<std::string>().c_str(), error.c_str());
      js["skipped"] = error;
      steps.push_back(js);
      ++skippedSteps;
      continue;
    }
    if (st == StepStatus::BundleError || st == StepStatus::CudaError) {
      std::fprintf(stderr, "dmrt-bench: %s\n", error.c_str());
      js["error"] = error;
      steps.push_back(js);
      failures.push_back(std::string(kind) + std::to_string(s.id) + ": " + error);
      if (st == StepStatus::BundleError) {
        if (exitCode == 0) exitCode = kExitUsage;
      } else {
        exitCode = kExitMismatch;
        stop = true; // the context may be unusable after a CUDA fault
      }
      continue;
    }
    checkedSteps += r.checked;
    std::string check = !r.checked ? "-" : r.pass ? "pass" : "FAIL";
    std::printf("%s\n", stepTableRow(r, check).c_str());
    js["bytes"] = r.bytes;
    js["flop"] = r.flop;
    js["median_us"] = r.time.medianUs;
    js["min_us"] = r.time.minUs;
    js["max_us"] = r.time.maxUs;
    js["reps"] = r.time.reps; // timed samples
    js["timing"] = timingModeName(r.timing);
    js["buffer_sets"] = r.bufferSets;
    js["launches_per_sample"] = r.launchesPerSample;
    js["gbs"] = r.gbs;
    js["pct_copy"] = r.pctCopy;
    js["copy_us"] = r.copyUs; // same-size copy; 0: not measured
    js["pct_same_size_copy"] = r.pctSameCopy;
    js["tflops"] = r.tflops;
    js["dropout_seed"] = r.dropoutSeed;
    if (s.kind == BundleStep::Contraction) {
      js["algorithms"] = r.algorithms;
      js["algorithm"] = r.algorithm;
    }
    if (r.sweep.ran) {
      const AlgorithmSweep &sw = r.sweep;
      std::printf("%s\n", algorithmSweepLine(sw).c_str());
      js["algorithms_tried"] = sw.tried;
      js["algorithms_heuristic"] = sw.heuristic;
      js["algorithms_enumerated"] = sw.enumerated;
      js["algorithm_errors"] = sw.errors;
      js["algorithm_reps"] = sw.reps;
      js["heuristic_us"] = sw.heuristicUs;
      js["heuristic_algorithm"] = sw.heuristicAlgorithm;
      js["best_us"] = sw.bestUs;
      js["best_algorithm"] = sw.bestAlgorithm;
      js["best_index"] = sw.bestIndex;
      js["best_source"] = sw.bestIndex < 0      ? "none"
                          : sw.bestIsHeuristic ? "heuristic"
                                               : "enumerated";
      if (!sw.firstError.empty())
        js["first_algorithm_error"] = sw.firstError;
      if (!sw.enumerationError.empty())
        js["enumeration_error"] = sw.enumerationError;
      js["algorithms_rejected"] = sw.rejected;
      js["algorithms_considered"] = sw.considered;
      js["algorithms_pruned"] = sw.pruned;
      js["algorithms_checked_against"] = sw.checkedAgainst;
      json runs = json::array();
      for (const AlgorithmRun &a : sw.runs) {
        json ja = {{"algorithm", a.algorithm},
                   {"description", a.description},
                   {"source", a.heuristic ? "heuristic" : "enumerated"},
                   {"median_us", a.medianUs},
                   {"min_us", a.minUs},
                   {"checked", a.checked},
                   {"pass", a.pass},
                   {"worst_ratio", a.worstRatio},
                   {"model_us", a.modelUs},
                   {"prior_model_us", a.priorModelUs},
                   {"waves", a.waves}};
        if (a.heuristic)
          ja["heuristic_rank"] = a.heuristicRank;
        if (!a.error.empty())
          ja["error"] = a.error;
        runs.push_back(std::move(ja));
      }
      js["algorithm_runs"] = std::move(runs);
      js["cost_model_modelled"] = sw.modelled;
      js["cost_model_best_rank"] = sw.bestModelRank;
      if (sw.modelled > 1 && std::isfinite(sw.modelRho)) {
        js["cost_model_spearman"] = sw.modelRho;
        modelRhos.push_back(sw.modelRho);
        bestRanks.push_back(sw.bestModelRank);
      }
    }
    if (!r.referenceSkipped.empty()) {
      std::printf("       not checked against a reference (%s); its algorithms were "
                  "compared with its own outputs\n",
                  r.referenceSkipped.c_str());
      js["reference_skipped"] = r.referenceSkipped;
    }
    js["checked"] = r.checked;
    js["pass"] = r.pass;
    json outs = json::array();
    for (const OutputCheck &o : r.outputs) {
      outs.push_back(comparisonJson(o));
      if (r.checked)
        std::printf("       %-30s %lld el (stride %lld)  max_abs_err %.3g  "
                    "rms|ref| %.3g  worst err/bound %.3g  %s\n",
                    o.name.c_str(), (long long)o.cmp.compared, (long long)o.stride,
                    o.cmp.maxAbsErr, o.cmp.scale, o.cmp.maxRatio,
                    o.cmp.pass ? "ok" : "MISMATCH");
      if (!o.cmp.pass && planted == PlantedFault::None) {
        std::string msg = std::string(kind) + std::to_string(s.id) + " (" +
                          r.name + ") " + o.name + ": " + describeComparison(o.cmp);
        failures.push_back(msg);
        exitCode = kExitMismatch;
      }
    }
    if (planted != PlantedFault::None && r.checked && r.pass)
      missedFault.push_back(std::string(kind) + std::to_string(s.id) + " (" + r.name + ")");
    js["outputs"] = outs;
    steps.push_back(js);
  }
  // --reference must check something: a run that skipped every step proves nothing.
  if (opt.reference && checkedSteps == 0 && exitCode == 0) {
    failures.push_back("--reference: no step had a reference to check against");
    exitCode = kExitMismatch;
  }
  if (planted != PlantedFault::None && checkedSteps > 0) {
    std::printf("planted fault %s: caught in %d of %d checked step(s)\n",
                plantedFaultName(planted), checkedSteps - int(missedFault.size()),
                checkedSteps);
    for (const std::string &m : missedFault) {
      failures.push_back("planted fault " + std::string(plantedFaultName(planted)) +
                         " passed the comparison of " + m);
      exitCode = kExitMismatch;
    }
  }
  // The cost model's rank correlation with the measurement, per op kind
  // (contractions: their algorithm sweeps; kernels are not modelled).
  if (!modelRhos.empty()) {
    double sum = 0, lo = modelRhos[0], hi = modelRhos[0];
    for (double r : modelRhos) {
      sum += r;
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
    const int worst = *std::max_element(bestRanks.begin(), bestRanks.end());
    const long top8 = std::count_if(bestRanks.begin(), bestRanks.end(),
                                    [](int r) { return r >= 1 && r <= 8; });
    std::printf("cost model: rank correlation with the measured times over %zu contraction "
                "sweep(s): mean %.2f (from %.2f to %.2f); the measured fastest is in the "
                "model's top 8 in %ld of them (worst rank %d); kernels not modelled\n",
                modelRhos.size(), sum / double(modelRhos.size()), lo, hi, top8, worst);
    j["cost_model"] = {{"op_kind", "contraction"},
                       {"sweeps", modelRhos.size()},
                       {"mean_spearman", sum / double(modelRhos.size())},
                       {"min_spearman", lo},
                       {"max_spearman", hi},
                       {"fastest_in_model_top8", top8},
                       {"worst_fastest_rank", worst}};
  }
  j["planted_fault"] = plantedFaultName(planted);
  j["unmappable_steps"] = unmappableSteps;
  j["steps"] = steps;
  j["failures"] = failures;
  j["checked_steps"] = checkedSteps;
  j["skipped_steps"] = skippedSteps;
  j["exit_code"] = exitCode;
  if (!jsonOut.empty()) {
    std::ofstream os(jsonOut);
    os << j.dump(2) << "\n";
    if (!os) {
      std::fprintf(stderr, "dmrt-bench: cannot write %s\n", jsonOut.c_str());
      return kExitUsage;
    }
  }
  for (const std::string &f : failures)
    std::fprintf(stderr, "dmrt-bench: FAILED %s\n", f.c_str());
  if (exitCode == 0) {
    std::printf("%zu step(s) ran%s", run.size() - skippedSteps - unmappableSteps,
                planted != PlantedFault::None ? "; every checked step caught the planted fault"
                : opt.reference                ? "; every output matches the reference"
                                               : "");
    if (unmappableSteps || skippedSteps)
      std::printf("; %d skipped (%d contraction(s) without a cuBLASLt form, %d without a "
                  "reference: above the compiler's flop limit)",
                  unmappableSteps + skippedSteps, unmappableSteps, skippedSteps);
    std::printf("\n");
  }
  return exitCode;
}
