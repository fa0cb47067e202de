//===- ConfigTest.cpp - config.json: round trip and every rejection -------===//
#include "runtime/format/Config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <nlohmann/json.hpp>

using namespace dmrt;
using json = nlohmann::json;

namespace {

/// A small configuration with one of everything.
json validConfig() {
  return json::parse(R"({
  "format": "dmc-config", "version": 1, "model": "tiny",
  "tensors": [{"name": "x", "dims": "bji"}, {"name": "t5", "dims": "bhjp"}],
  "transposes": [{"contraction": "c1", "operand": "a", "tensor": "x", "dims": "jbi",
                  "bytes": 128}],
  "kernels": [{"name": "k0_bias", "lane_dim": "p", "tx": 32, "ty": 8, "per_thread": 1,
               "vec": 8, "split": 2, "describe": "lanes along p"},
              {"name": "k1_softmax", "lane_dim": "", "tx": 1, "ty": 128, "per_thread": 1,
               "vec": 1, "split": 1, "describe": "block 1x128"}],
  "contractions": [{"name": "c0", "equation": "bhjp,bhkp->bhjk", "swap": true,
                    "transa": "T", "transb": "N", "batch": 16,
                    "batch_strides": [2048, 2048, 1024], "algorithm": "heuristic",
                    "epilogue": "none"}]
})");
}

std::string parseError(const json &j) {
  Configuration c;
  std::string error;
  EXPECT_FALSE(parseConfig(j.dump(), "cfg.json", c, error)) << j.dump();
  return error;
}

TEST(Config, ParsesEveryField) {
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(validConfig().dump(), "cfg.json", c, error)) << error;
  EXPECT_EQ(c.model, "tiny");
  ASSERT_EQ(c.tensors.size(), 2u);
  EXPECT_EQ(c.tensors[1].name, "t5");
  EXPECT_EQ(c.tensors[1].dims, "bhjp");
  ASSERT_EQ(c.transposes.size(), 1u);
  EXPECT_EQ(c.transposes[0].contraction, "c1");
  EXPECT_EQ(c.transposes[0].operand, "a");
  EXPECT_EQ(c.transposes[0].dims, "jbi");
  EXPECT_EQ(c.transposes[0].bytes, 128);
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(c.kernels[0].laneDim, "p");
  EXPECT_EQ(c.kernels[0].tx, 32);
  EXPECT_EQ(c.kernels[0].ty, 8);
  EXPECT_EQ(c.kernels[0].vec, 8);
  EXPECT_EQ(c.kernels[0].split, 2);
  EXPECT_EQ(c.kernels[1].laneDim, "");
  ASSERT_EQ(c.contractions.size(), 1u);
  const ConfigContraction &k = c.contractions[0];
  EXPECT_TRUE(k.swap);
  EXPECT_EQ(k.transa, "T");
  EXPECT_EQ(k.batch, 16);
  EXPECT_EQ(k.strideA, 2048);
  EXPECT_EQ(k.strideD, 1024);
  EXPECT_EQ(k.algorithm, "heuristic");
}

TEST(Config, RoundTripIsExact) {
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(validConfig().dump(), "cfg.json", c, error)) << error;
  std::string text = writeConfig(c);
  Configuration again;
  ASSERT_TRUE(parseConfig(text, "cfg.json", again, error)) << error;
  EXPECT_EQ(writeConfig(again), text);
  // The written text is the input, field for field.
  EXPECT_EQ(json::parse(text), validConfig());
  // A planted change to a parsed field shows in the text.
  again.contractions[0].strideB = 7;
  EXPECT_NE(writeConfig(again), text);
  again = c;
  again.kernels[1].ty = 64;
  EXPECT_NE(writeConfig(again), text);
}

TEST(Config, UnrollIsOptionalAndRoundTrips) {
  // Written only when set, so every configuration without it is unchanged.
  json j = validConfig();
  j["kernels"][0]["unroll"] = 2;
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(j.dump(), "cfg.json", c, error)) << error;
  EXPECT_EQ(c.kernels[0].unroll, 2);
  EXPECT_EQ(c.kernels[1].unroll, 0);
  EXPECT_EQ(json::parse(writeConfig(c)), j);
  c.kernels[0].unroll = 0;
  EXPECT_EQ(json::parse(writeConfig(c)), validConfig());
  j["kernels"][0]["unroll"] = -1;
  EXPECT_NE(parseError(j).find("kernels[0].unroll: expected a non-negative integer, got number -1"),
            std::string::npos)
      << parseError(j);
}

/// `j` with 64 x 64 tiles of 4 warps on kernels[1] (an attention kernel's).
json withAttentionTiles(json j) {
  j["kernels"][1]["block_m"] = 64;
  j["kernels"][1]["block_n"] = 64;
  j["kernels"][1]["warps"] = 4;
  return j;
}

TEST(Config, WgmmaIsOptionalAndRoundTrips) {
  // An attention kernel's tiles may say wgmma (written only when true); a
  // kernel without tiles may not, and the value must be a boolean.
  json j = withAttentionTiles(validConfig());
  j["kernels"][1]["wgmma"] = true;
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(j.dump(), "cfg.json", c, error)) << error;
  EXPECT_TRUE(c.kernels[1].wgmma);
  EXPECT_FALSE(c.kernels[0].wgmma);
  EXPECT_EQ(json::parse(writeConfig(c)), j);
  c.kernels[1].wgmma = false;
  EXPECT_FALSE(json::parse(writeConfig(c))["kernels"][1].contains("wgmma"));
  j["kernels"][1]["wgmma"] = 1;
  EXPECT_NE(parseError(j).find("kernels[1].wgmma: expected true or false, got number 1"),
            std::string::npos)
      << parseError(j);
  j = validConfig();
  j["kernels"][0]["wgmma"] = true;
  EXPECT_NE(parseError(j).find("kernels[0].wgmma: only a fused attention kernel"),
            std::string::npos)
      << parseError(j);
}

TEST(Config, MinBlocksIsOptionalAndRoundTrips) {
  // An attention kernel's blocks an SM (written only when set); a kernel
  // without tiles may not have them, and they must be at least 1.
  json j = withAttentionTiles(validConfig());
  j["kernels"][1]["min_blocks"] = 4;
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(j.dump(), "cfg.json", c, error)) << error;
  EXPECT_EQ(c.kernels[1].minBlocks, 4);
  EXPECT_EQ(c.kernels[0].minBlocks, 0);
  EXPECT_EQ(json::parse(writeConfig(c)), j);
  c.kernels[1].minBlocks = 0;
  EXPECT_FALSE(json::parse(writeConfig(c))["kernels"][1].contains("min_blocks"));
  j["kernels"][1]["min_blocks"] = 0;
  EXPECT_NE(parseError(j).find("kernels[1].min_blocks: expected a positive integer, got number 0"),
            std::string::npos)
      << parseError(j);
  j = validConfig();
  j["kernels"][0]["min_blocks"] = 4;
  EXPECT_NE(parseError(j).find("kernels[0].min_blocks: only a fused attention kernel"),
            std::string::npos)
      << parseError(j);
}

TEST(Config, ChosenAlgorithmRoundTrips) {
  json j = validConfig();
  const char *algo =
      "cublaslt id=21 tile=18 stages=22 splitk=2 reduction=2 swizzle=1 custom=0 inner=0 cluster=2";
  j["contractions"][0]["algorithm"] = algo;
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(j.dump(), "cfg.json", c, error)) << error;
  EXPECT_EQ(c.contractions[0].algorithm, algo);
  EXPECT_EQ(json::parse(writeConfig(c)), j);
}

struct Rejection {
  const char *what;
  std::function<void(json &)> plant;
  const char *message; ///< must appear in the error, with the file name
};

TEST(Config, EveryRejectionNamesPathValueAndWhatIsAllowed) {
  const Rejection cases[] = {
      {"format", [](json &j) { j["format"] = "dmc-bundle"; },
       "format: expected \"dmc-config\", got \"dmc-bundle\""},
      {"version", [](json &j) { j["version"] = 4; },
       "version: unsupported version 4 (this reader reads versions 1 to 3)"},
      {"unknown top field", [](json &j) { j["layouts"] = json::array(); },
       "layouts: unknown field"},
      {"missing field", [](json &j) { j.erase("kernels"); }, "kernels: missing field"},
      {"unknown tensor field", [](json &j) { j["tensors"][0]["shape"] = json::array(); },
       "tensors[0].shape: unknown field"},
      {"dims not letters", [](json &j) { j["tensors"][1]["dims"] = "bh1p"; },
       "tensors[1].dims: expected dimension letters, each once (e.g. \"bjhp\"), got \"bh1p\""},
      {"dims repeated", [](json &j) { j["tensors"][1]["dims"] = "bhjj"; },
       "tensors[1].dims: expected dimension letters, each once"},
      {"dims type", [](json &j) { j["tensors"][1]["dims"] = 5; },
       "tensors[1].dims: expected a string, got number 5"},
      {"duplicate tensor", [](json &j) { j["tensors"][1]["name"] = "x"; },
       "tensors[1].name: \"x\" appears twice"},
      {"empty name", [](json &j) { j["tensors"][1]["name"] = ""; },
       "tensors[1].name: expected a non-empty name"},
      {"operand", [](json &j) { j["transposes"][0]["operand"] = "c"; },
       "transposes[0].operand: expected one of \"a\", \"b\", \"d\", got \"c\""},
      {"transpose bytes", [](json &j) { j["transposes"][0]["bytes"] = -1; },
       "transposes[0].bytes: expected a non-negative integer, got number -1"},
      {"second transpose", [](json &j) { j["transposes"].push_back(j["transposes"][0]); },
       "transposes[1]: a second transpose of operand a of \"c1\""},
      {"knob zero", [](json &j) { j["kernels"][0]["tx"] = 0; },
       "kernels[0].tx: expected a positive integer, got number 0"},
      {"lane dim", [](json &j) { j["kernels"][0]["lane_dim"] = "pq"; },
       "kernels[0].lane_dim: expected \"\" (no lane dim) or one dimension letter, got \"pq\""},
      {"duplicate kernel", [](json &j) { j["kernels"][1]["name"] = "k0_bias"; },
       "kernels[1].name: \"k0_bias\" appears twice"},
      {"equation", [](json &j) { j["contractions"][0]["equation"] = "bhjp->bhjk"; },
       "contractions[0].equation: expected \"A,B->D\""},
      {"trans", [](json &j) { j["contractions"][0]["transa"] = "C"; },
       "contractions[0].transa: expected one of \"N\", \"T\", got \"C\""},
      {"swap type", [](json &j) { j["contractions"][0]["swap"] = "yes"; },
       "contractions[0].swap: expected true or false, got string \"yes\""},
      {"strides count", [](json &j) { j["contractions"][0]["batch_strides"] = {1, 2}; },
       "contractions[0].batch_strides: expected 3 strides"},
      {"stride negative", [](json &j) { j["contractions"][0]["batch_strides"][2] = -4; },
       "contractions[0].batch_strides[2]: expected a non-negative integer, got number -4"},
      {"batch", [](json &j) { j["contractions"][0]["batch"] = 0; },
       "contractions[0].batch: expected a positive integer, got number 0"},
      {"algorithm", [](json &j) { j["contractions"][0]["algorithm"] = "algo7"; },
       "contractions[0].algorithm: algorithm \"algo7\": expected \"heuristic\" or "
       "\"cublaslt id=N tile=N"},
      {"algorithm field", [](json &j) {
         j["contractions"][0]["algorithm"] =
             "cublaslt id=21 tile=18 stages=x splitk=1 reduction=0 swizzle=0 custom=0 inner=0 "
             "cluster=0";
       },
       "contractions[0].algorithm: algorithm \"cublaslt id=21 tile=18 stages=x"},
      {"algorithm type", [](json &j) { j["contractions"][0]["algorithm"] = 7; },
       "contractions[0].algorithm: expected a string, got number 7"},
      {"epilogue", [](json &j) { j["contractions"][0]["epilogue"] = "fancy"; },
       "contractions[0].epilogue: expected a cuBLASLt epilogue in lower case"},
      {"not an object", [](json &j) { j["kernels"][0] = 3; },
       "kernels[0]: expected an object, got number 3"},
  };
  for (const Rejection &r : cases) {
    json j = validConfig();
    r.plant(j);
    std::string error = parseError(j);
    EXPECT_NE(error.find(std::string("cfg.json: ") + r.message), std::string::npos)
        << r.what << ": got \"" << error << "\"";
  }
  Configuration c;
  std::string error;
  EXPECT_FALSE(parseConfig("{ not json", "cfg.json", c, error));
  EXPECT_EQ(error, "cfg.json: not valid JSON");
}

/// A configuration with a prediction (version 2).
json withPrediction() {
  return json::parse(R"({
  "format": "dmc-config", "version": 2, "model": "tiny",
  "tensors": [], "transposes": [], "kernels": [], "contractions": [],
  "prediction": {"device": "NVIDIA H200", "database": "tuning-db/h200.jsonl",
                 "forward_us": 262.0, "backward_us": 543.2}
})");
}

TEST(Config, PredictionRoundTrips) {
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(withPrediction().dump(), "cfg.json", c, error)) << error;
  ASSERT_TRUE(c.hasPrediction);
  EXPECT_EQ(c.prediction.device, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(c.prediction.backwardUs, 543.2);
  EXPECT_EQ(json::parse(writeConfig(c)), withPrediction());
  // Absent: not written, not read.
  c.hasPrediction = false;
  EXPECT_FALSE(json::parse(writeConfig(c)).contains("prediction"));
  // Version 1 (no prediction) still reads.
  json v1 = withPrediction();
  v1["version"] = 1;
  v1.erase("prediction");
  ASSERT_TRUE(parseConfig(v1.dump(), "cfg.json", c, error)) << error;
  EXPECT_FALSE(c.hasPrediction);
}

TEST(Config, PredictionStepsRoundTrip) {
  json j = withPrediction();
  j["prediction"]["steps"] = {{"k0_attention", 65.2}, {"c0", 37.03}, {"k1_transpose", 0.0}};
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(j.dump(), "cfg.json", c, error)) << error;
  ASSERT_EQ(c.prediction.steps.size(), 3u);
  EXPECT_EQ(c.prediction.steps[0].first, "c0"); // read back in name order
  EXPECT_DOUBLE_EQ(c.prediction.steps[0].second, 37.03);
  EXPECT_EQ(json::parse(writeConfig(c)), j);
  // Without steps none are written.
  c.prediction.steps.clear();
  EXPECT_FALSE(json::parse(writeConfig(c))["prediction"].contains("steps"));
}

TEST(Config, PredictionStepRejectionsSayWhy) {
  json j = withPrediction();
  j["prediction"]["steps"] = {{"k0_attention", -2.0}};
  EXPECT_EQ(parseError(j), "cfg.json: prediction.steps.k0_attention: expected a time >= 0 in "
                           "microseconds, got -2.0");
  j["prediction"]["steps"] = {{"c3", "fast"}};
  EXPECT_EQ(parseError(j), "cfg.json: prediction.steps.c3: expected a time >= 0 in "
                           "microseconds, got \"fast\"");
  j["prediction"]["steps"] = json::array({1.0});
  EXPECT_EQ(parseError(j), "cfg.json: prediction.steps: expected an object of step name -> "
                           "microseconds");
}

TEST(Config, PredictionCalibrationRoundTripAndRejections) {
  json j = withPrediction();
  j["prediction"]["calibration"] = {{"default_measured_us", 1600.5},
                                    {"default_predicted_us", 1493.1}};
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(j.dump(), "cfg.json", c, error)) << error;
  EXPECT_TRUE(c.prediction.calibrated());
  EXPECT_DOUBLE_EQ(c.prediction.calibration(), 1600.5 / 1493.1);
  EXPECT_EQ(json::parse(writeConfig(c)), j);
  // Without one none is written, and the factor is 1.
  c.prediction.defaultMeasuredUs = 0;
  EXPECT_FALSE(c.prediction.calibrated());
  EXPECT_DOUBLE_EQ(c.prediction.calibration(), 1.0);
  EXPECT_FALSE(json::parse(writeConfig(c))["prediction"].contains("calibration"));
  j["prediction"]["calibration"]["default_measured_us"] = 0.0;
  EXPECT_EQ(parseError(j), "cfg.json: prediction.calibration.default_measured_us: expected a "
                           "time > 0 in microseconds, got 0.000000");
  j["prediction"]["calibration"] = {{"default_measured_us", 1600.5}};
  EXPECT_NE(parseError(j).find("default_predicted_us"), std::string::npos) << parseError(j);
  j["prediction"]["calibration"] = {{"default_measured_us", 1600.5},
                                    {"default_predicted_us", 1493.1}, {"factor", 1.07}};
  EXPECT_NE(parseError(j).find("factor: unknown field"), std::string::npos) << parseError(j);
}

TEST(Config, PredictionRejectionsSayWhy) {
  json j = withPrediction();
  j["version"] = 1;
  EXPECT_EQ(parseError(j), "cfg.json: prediction: not in config version 1 (a prediction needs "
                           "version 2)");
  j = withPrediction();
  j["prediction"]["forward_us"] = -1.0;
  EXPECT_EQ(parseError(j), "cfg.json: prediction.forward_us: expected a time >= 0 in "
                           "microseconds, got -1.000000");
  j = withPrediction();
  j["prediction"]["step_us"] = 805.2; // derived (forward + backward), not a field
  EXPECT_NE(parseError(j).find("prediction.step_us: unknown field"), std::string::npos)
      << parseError(j);
  j = withPrediction();
  j["prediction"]["gpu"] = "x";
  EXPECT_NE(parseError(j).find("gpu"), std::string::npos);
  j = withPrediction();
  j["version"] = 4;
  EXPECT_NE(parseError(j).find("unsupported version 4 (this reader reads versions 1 to 3)"),
            std::string::npos);
}

json withPaths() {
  json j = validConfig();
  j["version"] = 3;
  j["paths"] = {{"fused_attention", true}, {"column_fusion", false}, {"bias_grads", "none"},
                {"gemm_addends", true}, {"stack_in_place", true}};
  return j;
}

TEST(Config, PathsRoundTrip) {
  Configuration c;
  std::string error;
  ASSERT_TRUE(parseConfig(withPaths().dump(), "cfg.json", c, error)) << error;
  ASSERT_TRUE(c.hasPaths);
  EXPECT_FALSE(c.paths.columnFusion);
  EXPECT_EQ(c.paths.biasGrads, "none");
  EXPECT_TRUE(c.paths.stackInPlace);
  EXPECT_EQ(json::parse(writeConfig(c)), withPaths());
  // Absent: not written; a file without them reads (flags decide).
  c.hasPaths = false;
  EXPECT_FALSE(json::parse(writeConfig(c)).contains("paths"));
  json v3 = withPaths();
  v3.erase("paths");
  ASSERT_TRUE(parseConfig(v3.dump(), "cfg.json", c, error)) << error;
  EXPECT_FALSE(c.hasPaths);
}

TEST(Config, PathRejectionsSayWhy) {
  json j = withPaths();
  j["version"] = 2;
  EXPECT_EQ(parseError(j), "cfg.json: paths: not in config version 2 (paths need version 3)");
  j = withPaths();
  j["paths"]["bias_grads"] = "some";
  EXPECT_EQ(parseError(j), "cfg.json: paths.bias_grads: expected one of \"saving\", \"all\", "
                           "\"none\", got \"some\"");
  j = withPaths();
  j["paths"]["fused_attention"] = "yes";
  EXPECT_NE(parseError(j).find("paths.fused_attention"), std::string::npos) << parseError(j);
  j = withPaths();
  j["paths"].erase("gemm_addends");
  EXPECT_NE(parseError(j).find("paths.gemm_addends"), std::string::npos) << parseError(j);
  j = withPaths();
  j["paths"]["dropout_bits"] = true; // in the tensors, not a path
  EXPECT_NE(parseError(j).find("paths.dropout_bits: unknown field"), std::string::npos)
      << parseError(j);
}

} // namespace
