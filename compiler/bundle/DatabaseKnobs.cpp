//===- DatabaseKnobs.cpp - dmc compile --db: knobs from measurements ------===//
#include "compiler/bundle/DatabaseKnobs.h"

#include "compiler/bundle/DatabaseSelection.h"

#include "tuning-db/Database.h"
#include "tuning-db/KnobSelection.h"
#include "tuning-db/Problem.h"

#include <algorithm>
#include <cstdio>

namespace dmc::bundle {
namespace {

llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The median of the medians of `manifest`'s whole-step records among the
/// usable ones (tuningdb::MatchResult::matched: this device, NVRTC and
/// codegen, status ok; 0: none), and their count.
double measuredStepUs(const dmrt::Manifest &manifest,
                      const std::vector<const tuningdb::Record *> &matched, int &count) {
  tuningdb::Problem step = tuningdb::stepProblem(manifest);
  std::vector<double> us;
  for (const tuningdb::Record *r : matched)
    if (tuningdb::sameProblem(step, *r))
      us.push_back(r->medianUs);
  count = int(us.size());
  if (us.empty())
    return 0;
  std::sort(us.begin(), us.end());
  size_t n = us.size();
  return n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
}

} // namespace

llvm::Error knobsFromDatabase(const WrittenBundle &defaultBundle, const std::string &dbPath,
                              const std::string &device, dmrt::Configuration &config,
                              bool &changed, llvm::raw_ostream &log, DatabaseView *view) {
  const dmrt::Manifest &manifest = defaultBundle.manifest;
  config = defaultBundle.configuration;
  std::string error;
  tuningdb::Database db;
  std::vector<std::string> warnings;
  bool loaded = db.load(dbPath, /*missingIsEmpty=*/false, error, warnings);
  for (const std::string &w : warnings)
    log << "dmc compile: warning: " << w << "\n";
  if (!loaded)
    return fail(error);
  tuningdb::Device chosen;
  if (!tuningdb::chooseDevice(db.records(), device, chosen, error))
    return fail(dbPath + ": " + error);
  tuningdb::Software software;
  software.nvrtc = manifest.nvrtc;
  // Per kernel in its default layouts (the table), then the global choice.
  tuningdb::KnobSelection sel =
      tuningdb::selectKnobs(manifest, config, db.records(), chosen, software);
  // The report's table of each contraction's algorithms in its default
  // layouts, on a copy: the choice is the global selection's.
  dmrt::Configuration table = config;
  tuningdb::selectAlgorithms(manifest, table, sel);
  GlobalSelection global = selectGlobally(manifest, config, sel.match.matched);
  log << "dmc compile: " << dbPath << " for " << chosen.name << " (" << chosen.cc
      << "), NVRTC " << software.nvrtc << ", codegen "
      << tuningdb::describeCodegenVersions() << "\n"
      << sel.describe() << global.describe();
  if (global.ok && sel.contractionsComparable) {
    char line[256];
    double defaultUs = global.defaultUs >= 0
                           ? global.defaultUs
                           : sel.defaultSumUs + sel.contractionDefaultSumUs;
    std::snprintf(line, sizeof line,
                  "predicted step: %.1f us (kernels %.1f + contractions %.1f) against the "
                  "default's %.1f us",
                  global.predictedUs, global.predictedUs - global.contractionUs,
                  global.contractionUs, defaultUs);
    log << line;
    // A default without a record (its kernel's other candidates measured)
    // leaves its step out of that sum: say which, not a smaller figure alone.
    std::string unmeasured;
    if (global.defaultUs < 0)
      for (const tuningdb::KernelChoice &k : sel.kernels)
        if (k.chosenUs >= 0 && k.defaultUs < 0)
          unmeasured += (unmeasured.empty() ? "" : ", ") + k.kernel;
    if (!unmeasured.empty())
      log << " without " << unmeasured << " (its default knobs have no record)";
    log << "\n";
  }
  int stepRecords = 0;
  double stepUs = measuredStepUs(manifest, sel.match.matched, stepRecords);
  bool calibrated = stepUs > 0 && global.ok && global.defaultUs > 0;
  if (calibrated) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "whole step: the default configuration measured %.1f us on %s (%d step "
                  "record(s)) against its steps' sum %.1f us: predictions calibrated x%.3f\n",
                  stepUs, chosen.name.c_str(), stepRecords, global.defaultUs,
                  stepUs / global.defaultUs);
    log << line;
  } else {
    log << "whole step: "
        << (stepUs > 0 ? "the default configuration's steps do not all have records"
                       : "no step record of the default configuration on this device "
                         "(dmc-run --bench --record)")
        << ": predictions are sums of the steps' records\n";
  }
  changed = global.ok &&
            (global.kernelsChanged || global.layoutsChanged || global.contractionsChanged ||
             global.transposesInserted);
  if (view) {
    view->device = chosen.name;
    view->complete = global.ok;
    for (const tuningdb::KernelChoice &k : sel.kernels)
      view->complete &= k.chosenUs >= 0;
    for (const tuningdb::ContractionChoice &c : sel.contractions)
      view->complete &= c.chosenUs >= 0;
    view->predictedStepUs = view->complete ? global.predictedUs : -1;
    view->predictedForwardUs = view->complete ? global.forwardUs : -1;
    view->predictedBackwardUs = view->complete ? global.backwardUs : -1;
    if (view->complete)
      view->predictedSteps = global.stepUs;
    view->defaultMeasuredUs = calibrated ? stepUs : 0;
    view->defaultPredictedUs = calibrated ? global.defaultUs : 0;
    view->kernels = manifest.kernels.size();
    view->contractions = manifest.contractions.size();
    view->bytes = 0;
    for (const dmrt::BundleKernel &k : manifest.kernels)
      view->bytes += k.bytes;
    for (const dmrt::BundleContraction &c : manifest.contractions)
      view->bytes += c.bytes;
    view->selection = std::move(sel);
  }
  return llvm::Error::success();
}

} // namespace dmc::bundle
