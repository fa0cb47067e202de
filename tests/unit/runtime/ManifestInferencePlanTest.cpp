//===- ManifestInferencePlanTest.cpp - version 5's inference plan ---------===//
//
// The reader and writer of the inference plan (docs/bundle-format.md,
// "Inference plan") on the tiny layer of LayerFixture.h: a version-5
// manifest round-trips; older versions still read and fall back to the
// training plan, and reject the new fields; every rule of the plan is
// provoked once and its message checked (field path and what is wrong).
// Also arenaShortfall (runtime/LayerPlan.h), the size check the C API runs
// before a training run.
//
//===----------------------------------------------------------------------===//
#include "runtime/LayerPlan.h"
#include "runtime/format/ArenaPlan.h"
#include "runtime/format/Manifest.h"

#include "LayerFixture.h"

#include <gtest/gtest.h>

using namespace dmrt;
using layerfixture::json;

namespace {

#define EXPECT_HAS(hay, needle)                                                \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos)                  \
      << "message: " << (hay) << "\nexpected to contain: " << (needle)

std::string parseError(const json &j) {
  Manifest m;
  std::string error;
  return parseManifest(j.dump(), "m.json", m, error) ? "" : error;
}

TEST(InferencePlan, Version5RoundTrips) {
  json j = layerfixture::manifestV5();
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", m, error)) << error;
  EXPECT_EQ(m.version, 5);
  EXPECT_EQ(m.arenaBytes, 512);
  EXPECT_EQ(m.inferenceArenaBytes, 256);
  EXPECT_EQ(m.tensor(4)->inferenceArenaOffset, 0); // h
  EXPECT_EQ(m.tensor(8)->arenaOffset, 256);         // g: training only
  EXPECT_EQ(m.tensor(8)->inferenceArenaOffset, -1);
  EXPECT_EQ(planUsed(m, ArenaPlanKind::Inference), ArenaPlanKind::Inference);
  std::string text = writeManifest(m);
  EXPECT_EQ(json::parse(text), j);
  Manifest back;
  ASSERT_TRUE(parseManifest(text, "m.json", back, error)) << error;
  EXPECT_EQ(writeManifest(back), text);
  // A planted change of each new field reaches the text.
  Manifest changed = m;
  changed.inferenceArenaBytes = 512;
  EXPECT_NE(writeManifest(changed), text);
  changed = m;
  changed.tensors[4].inferenceArenaOffset = 256;
  EXPECT_NE(writeManifest(changed), text);
  // A forward kernel's workspace: inference_workspace_offset written and read.
  json w = j;
  w["kernels"][0]["workspace_bytes"] = 64;
  w["kernels"][0]["workspace_offset"] = 512;
  w["kernels"][0]["inference_workspace_offset"] = 256;
  w["arena_bytes"] = 768;
  w["inference_arena_bytes"] = 512;
  ASSERT_TRUE(parseManifest(w.dump(), "m.json", m, error)) << error;
  EXPECT_EQ(m.kernels[0].inferenceWorkspaceOffset, 256);
  EXPECT_EQ(planWorkspaceBytes(m, ArenaPlanKind::Inference), 64);
  EXPECT_EQ(json::parse(writeManifest(m)), w);
}

TEST(InferencePlan, OlderVersionsFallBackAndRejectTheFields) {
  json v4 = layerfixture::manifest();
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(v4.dump(), "m.json", m, error)) << error;
  EXPECT_EQ(planUsed(m, ArenaPlanKind::Inference), ArenaPlanKind::Training);
  EXPECT_EQ(arenaBytesOf(m, planUsed(m, ArenaPlanKind::Inference)), 256);
  EXPECT_EQ(summarizeArena(m).inferenceArenaBytes, 256);
  EXPECT_EQ(writeManifest(m).find("inference"), std::string::npos);

  json bad = v4;
  bad["inference_arena_bytes"] = 256;
  EXPECT_EQ(parseError(bad), "m.json: inference_arena_bytes: not in bundle version 4 (the "
                             "inference memory plan needs version 5)");
  bad = v4;
  bad["tensors"][4]["inference_arena"] = 0;
  EXPECT_EQ(parseError(bad), "m.json: tensors[4].inference_arena: not in bundle version 4 "
                             "(the inference memory plan needs version 5)");
  bad = v4;
  bad["kernels"][0]["inference_workspace_offset"] = 0;
  EXPECT_HAS(parseError(bad), "kernels[0].inference_workspace_offset: not in bundle version 4");
  bad = v4;
  bad["version"] = 3;
  for (json &k : bad["kernels"]) {
    k.erase("cubin_bytes");
    k.erase("cubin_fnv1a64");
  }
  for (json &t : bad["tensors"])
    t.erase("init");
  EXPECT_EQ(parseError(bad), "");
  bad["tensors"][0]["inference_arena"] = nullptr;
  EXPECT_HAS(parseError(bad), "tensors[0].inference_arena: not in bundle version 3");
}

TEST(InferencePlan, Version5Errors) {
  json j = layerfixture::manifestV5();
  ASSERT_EQ(parseError(j), "");
  j.erase("inference_arena_bytes");
  EXPECT_EQ(parseError(j), "m.json: inference_arena_bytes: missing field");
  j = layerfixture::manifestV5();
  j["tensors"][0].erase("inference_arena");
  EXPECT_EQ(parseError(j), "m.json: tensors[0].inference_arena: missing field");
  j = layerfixture::manifestV5();
  j["tensors"][4]["inference_arena"] = "0";
  EXPECT_HAS(parseError(j), "tensors[4].inference_arena: expected a non-negative integer");
  j = layerfixture::manifestV5();
  j["tensors"][4]["inference_arena"] = nullptr; // h: a forward step uses it
  EXPECT_EQ(parseError(j), "m.json: tensors[4].inference_arena: expected an arena offset: "
                           "an intermediate that owns its memory and a forward step uses");
  j = layerfixture::manifestV5();
  j["tensors"][8]["inference_arena"] = 0; // g: backward only
  EXPECT_EQ(parseError(j), "m.json: tensors[8].inference_arena: expected null: no forward "
                           "step uses this tensor (the inference plan holds only what forward "
                           "touches)");
  j = layerfixture::manifestV5();
  j["tensors"][1]["inference_arena"] = 0; // wa: an alias
  EXPECT_HAS(parseError(j), "tensors[1].inference_arena: expected null: an alias");
  j = layerfixture::manifestV5();
  j["tensors"][0]["inference_arena"] = 0; // x: caller memory
  EXPECT_HAS(parseError(j), "tensors[0].inference_arena: expected null: the caller provides");
  j = layerfixture::manifestV5();
  j["tensors"][4]["inference_arena"] = 128;
  EXPECT_EQ(parseError(j), "m.json: tensors[4].inference_arena: 128 is not a multiple of 256");
  j = layerfixture::manifestV5();
  j["inference_arena_bytes"] = 200;
  EXPECT_EQ(parseError(j), "m.json: tensors[4].inference_arena: bytes [0, 256) end past "
                           "inference_arena_bytes 200");
  // Workspaces: a backward kernel's has no inference offset, a forward one's
  // needs one, and it overlaps nothing.
  j = layerfixture::manifestV5();
  j["kernels"][1]["workspace_bytes"] = 64;
  j["kernels"][1]["workspace_offset"] = 512;
  j["arena_bytes"] = 768;
  ASSERT_EQ(parseError(j), "");
  j["kernels"][1]["inference_workspace_offset"] = 256;
  EXPECT_EQ(parseError(j), "m.json: kernels[1].inference_workspace_offset: given but the "
                           "kernel's phase is backward (the inference plan holds only forward "
                           "kernels' workspaces)");
  j = layerfixture::manifestV5();
  j["kernels"][0]["workspace_bytes"] = 64;
  j["kernels"][0]["workspace_offset"] = 512;
  j["arena_bytes"] = 768;
  EXPECT_EQ(parseError(j), "m.json: kernels[0].inference_workspace_offset: missing: the "
                           "kernel has a workspace");
  j["kernels"][0]["inference_workspace_offset"] = 0; // onto h
  EXPECT_EQ(parseError(j),
            "m.json: kernels[0].inference_workspace_offset: kernels[0].workspace (k0, bytes "
            "[0, 64), live throughout) overlaps tensors[4] (h, bytes [0, 256), steps 0..1) "
            "while both are live (inference plan: forward steps only)");
  j = layerfixture::manifestV5();
  j["kernels"][2]["inference_workspace_offset"] = 0; // no workspace at all
  EXPECT_HAS(parseError(j), "kernels[2].inference_workspace_offset: given but the kernel has "
                            "no workspace");
  // The two plans are independent: g onto h is fine for inference (g has
  // none) but not for training (both live at step 2).
  j = layerfixture::manifestV5();
  j["tensors"][8]["arena"] = 0;
  EXPECT_EQ(parseError(j), "m.json: tensors[8].arena: tensors[8] (g, bytes [0, 256), steps "
                           "2..2) overlaps tensors[4] (h, bytes [0, 256), steps 0..2) while "
                           "both are live");
}

TEST(InferencePlan, ArenaShortfall) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(layerfixture::manifestV5().dump(), "m.json", m, error)) << error;
  EXPECT_EQ(arenaShortfall(m, ArenaPlanKind::Training, 512), "");
  EXPECT_EQ(arenaShortfall(m, ArenaPlanKind::Inference, 256), "");
  EXPECT_EQ(arenaShortfall(m, ArenaPlanKind::Training, 256),
            "an arena of 256 bytes is set; the training plan needs 512 (training 512, "
            "inference 256)");
  EXPECT_EQ(arenaShortfall(m, ArenaPlanKind::Inference, 0),
            "an arena of 0 bytes is set; the inference plan needs 256 (training 512, "
            "inference 256)");
  // Version 4: inference needs the training arena.
  ASSERT_TRUE(parseManifest(layerfixture::manifest().dump(), "m.json", m, error)) << error;
  EXPECT_EQ(arenaShortfall(m, ArenaPlanKind::Inference, 256), "");
  EXPECT_HAS(arenaShortfall(m, ArenaPlanKind::Inference, 255), "needs 256");
}

} // namespace
