//===- DatabaseKnobs.h - dmc compile --db: knobs from measurements -*- C++ -*-===//
//
// Takes the bundle just compiled with the default configuration (its
// manifest and configuration as written) and the tuning database, lists each
// kernel's measured candidates and each contraction's algorithms in their
// default layouts (tuning-db/KnobSelection.h: the report's table), and
// selects one configuration for all kernels and contractions by shortest
// path (DatabaseSelection.h: knobs, algorithms, layouts) for the device the
// database names; the caller compiles again with it when anything changed,
// the contractions' forms following from the layouts.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_DATABASEKNOBS_H
#define DMC_COMPILER_BUNDLE_DATABASEKNOBS_H

#include "compiler/bundle/BundleWriter.h"
#include "runtime/format/Config.h"
#include "tuning-db/KnobSelection.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace dmc::bundle {

/// What the database said of the bundle's kernels, for a report.
struct DatabaseView {
  std::string device;                ///< the device whose records were used
  tuningdb::KnobSelection selection; ///< per kernel: its measured candidates
  /// Every kernel and every contraction has a record: the step's prediction
  /// is the selection's kernels plus its contractions.
  bool complete = false;
  double predictedStepUs = -1;
  /// predictedStepUs by phase (valid with it).
  double predictedForwardUs = -1, predictedBackwardUs = -1;
  /// Each step's part of it (GlobalSelection::stepUs; valid with it).
  std::vector<std::pair<std::string, double>> predictedSteps;
  /// The default configuration's whole step: its `step` record's median on
  /// this device (tuningdb::stepProblem of the default bundle; records of
  /// several CUDA or cuBLASLt versions: the median of their medians) and its
  /// steps' summed records; 0 when either is missing (ConfigPrediction's
  /// calibration).
  double defaultMeasuredUs = 0, defaultPredictedUs = 0;
  int64_t bytes = 0; ///< read and written by its kernels and contractions
  size_t kernels = 0, contractions = 0;
};

/// `config`: the default bundle's configuration with the chosen knobs and
/// layouts; `changed`: whether anything differs from the default. Writes
/// what matched, what was rejected and why, and the choice to `log` (and,
/// when `view` is given, the per-kernel measurements into it). Errors name
/// the database and what is wrong.
llvm::Error knobsFromDatabase(const WrittenBundle &defaultBundle, const std::string &dbPath,
                              const std::string &device, dmrt::Configuration &config,
                              bool &changed, llvm::raw_ostream &log,
                              DatabaseView *view = nullptr);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_DATABASEKNOBS_H
