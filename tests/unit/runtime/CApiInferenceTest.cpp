//===- CApiInferenceTest.cpp - the inference arena through dmrt.h, no GPU -===//
//
// dmrt_arena_bytes and dmrt_memory report the training and the inference
// arena (LayerFixture.h manifestV5: 512 and 256 bytes; a version-4 bundle
// has one plan for both), and DMRT_OPEN_INFERENCE_ONLY turns every training
// run into DMRT_ERROR_STATE before anything else is checked. The arena-size
// check of a training run on a caller arena needs a device (dmrt_set_arena);
// its logic is runtime/LayerPlan.h arenaShortfall
// (ManifestInferencePlanTest.cpp) and tests/gpu/WholeStepInference.cpp runs it.
//
//===----------------------------------------------------------------------===//
#include "runtime/dmrt.h"
#include "runtime/dmrt.hpp"

#include "LayerFixture.h"

#include <gtest/gtest.h>

namespace {

#define EXPECT_HAS(hay, needle)                                                \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos)                  \
      << "message: " << (hay) << "\nexpected to contain: " << (needle)

void *fakePtr(uintptr_t align) {
  return reinterpret_cast<void *>(uintptr_t(0x7f0000000000ull) + align);
}

/// Binds every caller tensor of the fixture (wa and wb: slices of one buffer).
void bindAll(dmrt::Layer &layer) {
  uintptr_t at = 1;
  for (const char *n : {"x", "y", "dy", "x.grad", "wa"})
    ASSERT_TRUE(layer.bind(n, fakePtr(256 * (at += 2)))) << n;
  ASSERT_TRUE(layer.bind("wb", static_cast<char *>(fakePtr(256 * 11)) + 128));
}

TEST(CApiInference, ArenaBytesPerMode) {
  dmrt::Layer layer;
  ASSERT_TRUE(layer.open(layerfixture::write(layerfixture::manifestV5()),
                         DMRT_OPEN_VALIDATE_ONLY));
  int64_t train = 0, inference = 0;
  ASSERT_TRUE(layer.arenaBytes(DMRT_MODE_TRAIN, train));
  ASSERT_TRUE(layer.arenaBytes(DMRT_MODE_INFERENCE, inference));
  EXPECT_EQ(train, 512);
  EXPECT_EQ(inference, 256);
  dmrt_memory_info mem;
  ASSERT_TRUE(layer.memory(mem));
  EXPECT_EQ(mem.arena_bytes, 512);
  dmrt::Status s = layer.arenaBytes(dmrt_mode(5), train);
  EXPECT_EQ(s.code, DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "dmrt_arena_bytes: unknown mode 5");
  EXPECT_EQ(dmrt_arena_bytes(layer.get(), DMRT_MODE_TRAIN, nullptr),
            DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dmrt_arena_bytes(nullptr, DMRT_MODE_TRAIN, &train), DMRT_ERROR_INVALID_ARGUMENT);

  // Version 4: no inference plan; inference needs the training arena.
  dmrt::Layer old;
  ASSERT_TRUE(old.open(layerfixture::write(layerfixture::manifest()), DMRT_OPEN_VALIDATE_ONLY));
  ASSERT_TRUE(old.arenaBytes(DMRT_MODE_INFERENCE, inference));
  ASSERT_TRUE(old.arenaBytes(DMRT_MODE_TRAIN, train));
  EXPECT_EQ(inference, 256);
  EXPECT_EQ(train, 256);
  EXPECT_GE(dmrt_api_version(), 2);
}

TEST(CApiInference, InferenceOnlyLayer) {
  dmrt::Layer layer;
  ASSERT_TRUE(layer.open(layerfixture::write(layerfixture::manifestV5()),
                         DMRT_OPEN_VALIDATE_ONLY | DMRT_OPEN_INFERENCE_ONLY));
  dmrt_memory_info mem;
  ASSERT_TRUE(layer.memory(mem));
  EXPECT_EQ(mem.arena_bytes, 256); // what dmrt_open allocates with a device
  int64_t train = 0;
  ASSERT_TRUE(layer.arenaBytes(DMRT_MODE_TRAIN, train));
  EXPECT_EQ(train, 512); // still reported
  // Training is refused first, whatever else is missing.
  dmrt::Status s = layer.forward(nullptr, DMRT_MODE_TRAIN);
  EXPECT_EQ(s.code, DMRT_ERROR_STATE);
  EXPECT_HAS(s.message, "forward (DMRT_MODE_TRAIN): the layer was opened with "
                        "DMRT_OPEN_INFERENCE_ONLY");
  s = layer.backward(nullptr);
  EXPECT_EQ(s.code, DMRT_ERROR_STATE);
  EXPECT_HAS(s.message, "backward: the layer was opened with DMRT_OPEN_INFERENCE_ONLY");
  float ms[2];
  EXPECT_EQ(dmrt_profile(layer.get(), nullptr, 0, ms, 2), DMRT_ERROR_STATE);
  EXPECT_HAS(dmrt_last_error(), "DMRT_OPEN_INFERENCE_ONLY");
  // Inference goes on to the usual checks: bindings, then the device.
  s = layer.forward(nullptr, DMRT_MODE_INFERENCE);
  EXPECT_EQ(s.code, DMRT_ERROR_UNBOUND);
  bindAll(layer);
  s = layer.forward(nullptr, DMRT_MODE_INFERENCE);
  EXPECT_EQ(s.code, DMRT_ERROR_STATE);
  EXPECT_HAS(s.message, "DMRT_OPEN_VALIDATE_ONLY");
  // Without the flag the same layer may train (up to the missing device).
  dmrt::Layer trainable;
  ASSERT_TRUE(trainable.open(layerfixture::write(layerfixture::manifestV5()),
                             DMRT_OPEN_VALIDATE_ONLY));
  bindAll(trainable);
  s = trainable.forward(nullptr, DMRT_MODE_TRAIN);
  EXPECT_EQ(s.code, DMRT_ERROR_STATE);
  EXPECT_HAS(s.message, "DMRT_OPEN_VALIDATE_ONLY");
}

} // namespace
