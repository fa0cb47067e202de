//===- Prediction.cpp - config.json's prediction against a measured step ---===//
#include "runtime/format/Prediction.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace dmrt {
namespace {

std::string percent(double measuredMs, double predictedUs) {
  if (predictedUs <= 0)
    return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * (measuredMs * 1000.0 / predictedUs - 1.0));
  return buf;
}

} // namespace

std::string comparePrediction(const ConfigPrediction &p, const std::string &device,
                              double forwardMs, double backwardMs) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "against the prediction of dmc compile --db (%s, %s): forward %.3f, backward %.3f, step "
                "%.3f ms; measured %.3f, %.3f, %.3f ms: %s, %s, %s (the prediction sums the "
                "steps' measured medians: the time between dependent steps is not in it)",
                p.database.c_str(), p.device.c_str(), p.forwardUs / 1000.0,
                p.backwardUs / 1000.0, p.stepUs() / 1000.0, forwardMs, backwardMs,
                forwardMs + backwardMs, percent(forwardMs, p.forwardUs).c_str(),
                percent(backwardMs, p.backwardUs).c_str(),
                percent(forwardMs + backwardMs, p.stepUs()).c_str());
  std::string line = buf;
  if (p.calibrated()) {
    double f = p.calibration();
    std::snprintf(buf, sizeof buf,
                  "; calibrated by the default configuration's step measured on %s (%.1f us "
                  "against its sum %.1f, x%.3f): forward %.3f, backward %.3f, step %.3f ms: "
                  "%s, %s, %s",
                  p.device.c_str(), p.defaultMeasuredUs, p.defaultPredictedUs, f,
                  f * p.forwardUs / 1000.0, f * p.backwardUs / 1000.0, f * p.stepUs() / 1000.0,
                  percent(forwardMs, f * p.forwardUs).c_str(),
                  percent(backwardMs, f * p.backwardUs).c_str(),
                  percent(forwardMs + backwardMs, f * p.stepUs()).c_str());
    line += buf;
  }
  // The runtime names a GPU "NVIDIA H200 (sm_90)": the records' name and its arch.
  bool same = device == p.device || device.rfind(p.device + " (", 0) == 0;
  if (!same)
    line += "; the prediction priced " + p.device + ", not this GPU (" + device +
            "): compare with care";
  return line;
}

std::string predictionLine(const std::string &bundleDir, const std::string &device,
                           double forwardMs, double backwardMs) {
  std::string path = bundleDir + "/config.json";
  std::ifstream in(path);
  if (!in)
    return "no prediction: " + path + " cannot be read";
  std::stringstream text;
  text << in.rdbuf();
  Configuration c;
  std::string error;
  if (!parseConfig(text.str(), path, c, error))
    return "no prediction: " + error;
  if (!c.hasPrediction)
    return "no prediction in " + path +
           " (compiled without --db, or a step of the chosen path had no record)";
  return comparePrediction(c.prediction, device, forwardMs, backwardMs);
}

} // namespace dmrt
