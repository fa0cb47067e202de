//===- HarnessSweep.cpp - A contraction's algorithms, timed ---------------===//
//
// Under AlgorithmMode::All a contraction step times every algorithm of its
// sweep on the step's buffers (timeVariants, called by runStep, which then
// checks each one), summarizes the times (summarizeAlgorithmSweep) and
// prices them with the analytic cost model (modelSweep).
//
//===----------------------------------------------------------------------===//
#include "runtime/HarnessInternal.h"

#include <algorithm>
#include <cmath>

namespace dmrt {

void summarizeAlgorithmSweep(const std::vector<GemmAlgorithm> &algos,
                             const std::vector<double> &us,
                             AlgorithmSweep &sweep, const std::vector<bool> &rejected) {
  sweep.tried = static_cast<int>(algos.size());
  sweep.heuristic = sweep.enumerated = sweep.errors = sweep.rejected = 0;
  sweep.heuristicUs = sweep.bestUs = 0;
  sweep.heuristicAlgorithm.clear();
  sweep.bestAlgorithm.clear();
  sweep.bestIndex = -1;
  sweep.bestIsHeuristic = false;
  bool heuristicSeen = false;
  for (size_t i = 0; i < algos.size(); ++i) {
    bool heur = algos[i].source == GemmAlgoSource::Heuristic;
    ++(heur ? sweep.heuristic : sweep.enumerated);
    double t = i < us.size() ? us[i] : 0;
    bool ok = t > 0 && std::isfinite(t);
    if (!ok)
      ++sweep.errors;
    // The heuristic's best: its rank 0 (the step's own algorithm).
    if (heur && !heuristicSeen && algos[i].heuristicRank == 0) {
      heuristicSeen = true;
      sweep.heuristicAlgorithm = algos[i].description;
      sweep.heuristicUs = ok ? t : 0;
    }
    bool wrong = ok && i < rejected.size() && rejected[i];
    sweep.rejected += wrong;
    if (ok && !wrong && (sweep.bestIndex < 0 || t < sweep.bestUs)) {
      sweep.bestIndex = static_cast<int>(i);
      sweep.bestUs = t;
      sweep.bestAlgorithm = algos[i].description;
      sweep.bestIsHeuristic = heur;
    }
  }
}

GemmModelRates modelRates(double flopPerSecond, int elementBytes, const DeviceInfo &info) {
  GemmModelRates rates;
  rates.sms = info.smCount;
  rates.flopsPerSm = info.smCount > 0 ? flopPerSecond / info.smCount : 0;
  rates.feedBytesPerSm = info.smCount > 0 ? info.l2CopyGBs * 1e9 / info.smCount : 0;
  rates.reduceBytes = info.copyGBs * 1e9;
  rates.elementBytes = elementBytes;
  return rates;
}

void modelSweep(const GemmDescriptor &g, int64_t flop, int elementBytes,
                const DeviceInfo &info, AlgorithmSweep &sweep) {
  // The GEMM rate: the fastest passing entry's; the bandwidths: the copies'.
  double rate = 0;
  for (const AlgorithmRun &r : sweep.runs)
    if (r.pass && r.medianUs > 0)
      rate = std::max(rate, double(flop) / (r.medianUs * 1e-6));
  GemmModelRates rates = modelRates(rate, elementBytes, info);
  std::vector<double> model, measured;
  for (AlgorithmRun &r : sweep.runs) {
    GemmAlgoConfig c;
    std::string why;
    r.modelUs = -1;
    if (!r.pass || !(r.medianUs > 0) || !parseAlgorithm(r.algorithm, c, why))
      continue;
    r.modelUs = modelAlgorithmUs(g, c, r.waves, rates);
    if (r.modelUs > 0) {
      model.push_back(r.modelUs);
      measured.push_back(r.medianUs);
    }
  }
  sweep.modelled = int(model.size());
  sweep.modelRho = spearman(model, measured);
  sweep.bestModelRank = 0;
  if (!model.empty()) {
    size_t best = size_t(std::min_element(measured.begin(), measured.end()) - measured.begin());
    sweep.bestModelRank = 1 + int(std::count_if(model.begin(), model.end(),
                                                [&](double m) { return m < model[best]; }));
  }
}

namespace detail {

StepStatus timeVariants(StepBuffers &buf, int64_t footprintBytes,
                        const StepVariants &v, uint64_t dropoutSeed,
                        TimingContext &tc, std::vector<double> &us,
                        AlgorithmSweep &sweep, std::string &error) {
  const std::vector<GemmAlgorithm> &algos = *v.algos;
  HarnessOptions opt = tc.opt;
  opt.reps = std::max(1, std::min(opt.reps, opt.sweepReps));
  TimingContext vtc{opt,          tc.info,      tc.stream, tc.flush,
                    tc.flushBytes, tc.copyCache, tc.driver, tc.fills};
  sweep.ran = true;
  sweep.reps = opt.reps;
  us.assign(algos.size(), 0.0);
  sweep.runs.assign(algos.size(), AlgorithmRun());
  for (size_t i = 0; i < algos.size(); ++i) {
    StepResult r;
    std::string err;
    Setup setup = v.setup(i);
    StepStatus s;
    if (opt.timing == TimingMode::Isolated) {
      Launch launch;
      s = setup(buf.ptrFn(0), dropoutSeed, launch, err);
      if (s == StepStatus::Ok)
        s = timeIsolated(launch, vtc, r, err);
    } else {
      s = timeStream(buf, footprintBytes, setup, dropoutSeed, vtc, r, err, /*asGraph=*/true);
    }
    if (s == StepStatus::Ok && r.time.medianUs > 0) {
      us[i] = sweep.runs[i].medianUs = r.time.medianUs;
      sweep.runs[i].minUs = r.time.minUs;
      continue;
    }
    // Failed: fatal only if the context is broken; a failed launch or a
    // non-sticky error is this algorithm's alone.
    cudaError_t e = cudaStreamSynchronize(tc.stream);
    if (e != cudaSuccess) {
      error = "algorithm " + std::to_string(i) + " (" + algos[i].description +
              "): " + err + "; then " + cudaMsg(e, "cudaStreamSynchronize");
      return StepStatus::CudaError;
    }
    cudaGetLastError();
    if (sweep.firstError.empty())
      sweep.firstError = algos[i].description + ": " +
                         (err.empty() ? std::string("no time") : err);
  }
  return StepStatus::Ok;
}

} // namespace detail
} // namespace dmrt
