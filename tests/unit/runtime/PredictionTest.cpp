//===- PredictionTest.cpp - config.json's prediction against a measured step -===//
#include "runtime/format/Prediction.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

using namespace dmrt;

namespace {

/// A configuration with a prediction, as dmc compile --db writes it.
Configuration withPrediction() {
  Configuration c;
  c.model = "tiny";
  c.hasPrediction = true;
  c.prediction = {"NVIDIA H200", "tuning-db/h200.jsonl", 262.0, 543.2};
  return c;
}

TEST(Prediction, ComparesEachPhaseWithTheMeasurement) {
  ConfigPrediction p{"NVIDIA H200", "db.jsonl", 250.0, 550.0};
  std::string line = comparePrediction(p, "NVIDIA H200", 0.2625, 0.5775);
  EXPECT_NE(line.find("forward 0.250, backward 0.550, step 0.800 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("measured 0.263, 0.578, 0.840 ms: +5.0%, +5.0%, +5.0%"), std::string::npos)
      << line;
  EXPECT_EQ(line.rfind("against the prediction of dmc compile --db (db.jsonl, NVIDIA H200)", 0), 0u)
      << line;
  EXPECT_EQ(line.find("compare with care"), std::string::npos) << line;
  // The runtime's name carries the arch: the same GPU.
  line = comparePrediction(p, "NVIDIA H200 (sm_90)", 0.2625, 0.5775);
  EXPECT_EQ(line.find("compare with care"), std::string::npos) << line;
  // A measurement below the prediction, on another GPU.
  line = comparePrediction(p, "NVIDIA H100 80GB HBM3 (sm_90)", 0.225, 0.55);
  EXPECT_NE(line.find("-10.0%, +0.0%, -3.1%"), std::string::npos) << line;
  EXPECT_NE(line.find("the prediction priced NVIDIA H200, not this GPU (NVIDIA H100 80GB HBM3 "
                      "(sm_90))"),
            std::string::npos)
      << line;
}

TEST(Prediction, CalibratedByTheDefaultsWholeStep) {
  // The default's step measured 10% over its sum: the prediction scaled x1.1.
  ConfigPrediction p{"NVIDIA H200", "db.jsonl", 250.0, 550.0, {}, 990.0, 900.0};
  std::string line = comparePrediction(p, "NVIDIA H200", 0.2625, 0.5775);
  EXPECT_NE(line.find("measured 0.263, 0.578, 0.840 ms: +5.0%, +5.0%, +5.0%"), std::string::npos)
      << line;
  EXPECT_NE(line.find("; calibrated by the default configuration's step measured on NVIDIA H200 "
                      "(990.0 us against its sum 900.0, x1.100): forward 0.275, backward 0.605, "
                      "step 0.880 ms: -4.5%, -4.5%, -4.5%"),
            std::string::npos)
      << line;
  // Without a calibration the line says nothing of one.
  p.defaultMeasuredUs = 0;
  EXPECT_EQ(comparePrediction(p, "NVIDIA H200", 0.2625, 0.5775).find("calibrated"),
            std::string::npos);
}

TEST(Prediction, LineForABundleSaysWhyThereIsNone) {
  std::string dir = ::testing::TempDir() + "/prediction-test.dmlib";
  std::remove((dir + "/config.json").c_str());
  std::string line = predictionLine(dir, "NVIDIA H200", 0.3, 0.5);
  EXPECT_NE(line.find("no prediction: " + dir + "/config.json cannot be read"), std::string::npos)
      << line;
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  Configuration c = withPrediction();
  std::ofstream(dir + "/config.json") << writeConfig(c);
  line = predictionLine(dir, "NVIDIA H200", 0.262, 0.5432);
  EXPECT_NE(line.find("+0.0%, +0.0%, +0.0%"), std::string::npos) << line;
  c.hasPrediction = false;
  std::ofstream(dir + "/config.json") << writeConfig(c);
  line = predictionLine(dir, "NVIDIA H200", 0.3, 0.5);
  EXPECT_NE(line.find("(compiled without --db, or a step of the chosen path had no record)"),
            std::string::npos)
      << line;
  std::ofstream(dir + "/config.json") << "{";
  line = predictionLine(dir, "NVIDIA H200", 0.3, 0.5);
  EXPECT_NE(line.find("no prediction: " + dir + "/config.json: not valid JSON"), std::string::npos)
      << line;
}

} // namespace
