//===- Prediction.h - config.json's prediction against a measured step -*- C++ -*-===//
//
// `dmc compile --db` writes what the tuning database predicts for the chosen
// configuration into config.json (ConfigPrediction); `dmc-run --bench` reads it
// back and prints it beside the step it measured, so that "measured step within
// 5% of the predicted step" (the autotuner's target) is one line to read.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_PREDICTION_H
#define DMRT_FORMAT_PREDICTION_H

#include "runtime/format/Config.h"

#include <string>

namespace dmrt {

/// One line, "against the prediction of ...": the prediction (database,
/// device), the measurement on `device` (forward and backward ms), each one's
/// difference in percent; a warning when the prediction priced another GPU
/// than `device` (the records' name, optionally followed by " (sm_NN)").
std::string comparePrediction(const ConfigPrediction &p, const std::string &device,
                              double forwardMs, double backwardMs);

/// What to print for the bundle directory `bundleDir`: comparePrediction of
/// its config.json's prediction, or why there is none (no config.json, a
/// config.json that does not parse, compiled without a usable database).
std::string predictionLine(const std::string &bundleDir, const std::string &device,
                           double forwardMs, double backwardMs);

} // namespace dmrt

#endif // DMRT_FORMAT_PREDICTION_H
