//===- LayerBindingsTest.cpp - Binding caller buffers without a GPU -------===//
//
// runtime/LayerBindings.h on the tiny bundle of LayerFixture.h: a bind is
// checked before it is recorded, so a failing one (through bind, or
// check without commit, as the C API does when the device check fails)
// leaves every pointer, buffer start and the version as they were.
//
//===----------------------------------------------------------------------===//
#include "runtime/Bundle.h"
#include "runtime/LayerBindings.h"
#include "runtime/dmrt.hpp"

#include "LayerFixture.h"

#include <gtest/gtest.h>

using namespace dmrt;

namespace {

void *fakePtr(uintptr_t offset) { return reinterpret_cast<void *>(uintptr_t(0x7f0000000000ull) + offset); }

struct Tiny {
  Bundle b;
  LayerPlan p;
  Tiny() {
    std::string error;
    EXPECT_TRUE(loadBundle(layerfixture::write(layerfixture::manifest()), b, error)) << error;
    EXPECT_TRUE(buildLayerPlan(b, p, error)) << error;
  }
  size_t index(const char *name) const { return size_t(p.findCallerTensor(b, name)); }
};

TEST(LayerBindings, FailingBindChangesNothing) {
  Tiny t;
  LayerBindings lb(t.b, t.p);
  std::string error;
  ASSERT_TRUE(lb.bind("x", fakePtr(256), 256, DType::BF16, {16, 8}, error)) << error;
  ASSERT_TRUE(lb.bind("wa", fakePtr(512), 128, DType::BF16, {8, 8}, error)) << error;
  size_t x = t.index("x"), wa = t.index("wa"), wb = t.index("wb");
  size_t xBuf = t.p.callerTensors[x].buffer, waBuf = t.p.callerTensors[wa].buffer;
  uint64_t version = lb.version();
  // Each failure names its cause and leaves x, wa and the version alone.
  EXPECT_FALSE(lb.bind("x", fakePtr(1024), 256, DType::BF16, {8, 16}, error));
  EXPECT_NE(error.find("shape [8, 16]"), std::string::npos) << error;
  EXPECT_FALSE(lb.bind("x", fakePtr(1024 + 16), 256, DType::BF16, {16, 8}, error));
  EXPECT_FALSE(lb.bind("wb", fakePtr(2048 + 128), 128, DType::BF16, {8, 8}, error));
  EXPECT_NE(error.find("shares one buffer with 'wa'"), std::string::npos) << error;
  EXPECT_EQ(lb.bound(x), fakePtr(256));
  EXPECT_EQ(lb.bound(wa), fakePtr(512));
  EXPECT_EQ(lb.bound(wb), nullptr);
  EXPECT_EQ(lb.bufferStart(xBuf), static_cast<char *>(fakePtr(256)));
  EXPECT_EQ(lb.bufferStart(waBuf), static_cast<char *>(fakePtr(512)));
  EXPECT_EQ(lb.version(), version);
  // A bind that passes check but is not committed (the C API's device check
  // failed) records nothing either.
  int64_t i = lb.check("x", fakePtr(4096), 256, DType::BF16, {16, 8}, error);
  ASSERT_EQ(i, int64_t(x)) << error;
  EXPECT_EQ(lb.bound(x), fakePtr(256));
  EXPECT_EQ(lb.version(), version);
  lb.commit(size_t(i), fakePtr(4096));
  EXPECT_EQ(lb.bound(x), fakePtr(4096));
  EXPECT_EQ(lb.bufferStart(xBuf), static_cast<char *>(fakePtr(4096)));
  EXPECT_NE(lb.version(), version);
}

// Through the C API: a rejected re-bind keeps the old pointer bound, so the
// phase still finds every tensor bound (it fails later, for want of a device).
TEST(LayerBindings, CApiFailingRebindKeepsTheOldBinding) {
  Layer layer;
  ASSERT_TRUE(layer.open(layerfixture::write(layerfixture::manifest()), DMRT_OPEN_VALIDATE_ONLY));
  uintptr_t at = 1;
  for (const char *n : {"x", "wa", "y", "dy", "x.grad"})
    ASSERT_TRUE(layer.bind(n, fakePtr(256 * (at += 2)))) << n;
  ASSERT_TRUE(layer.bind("wb", static_cast<char *>(fakePtr(256 * 5)) + 128));
  Status s = layer.bind("x", fakePtr(256 * 40), 256, DMRT_DTYPE_F32, {16, 8});
  EXPECT_EQ(s.code, DMRT_ERROR_BINDING);
  s = layer.bind("x", nullptr);
  EXPECT_EQ(s.code, DMRT_ERROR_BINDING);
  s = layer.forward(nullptr);
  EXPECT_EQ(s.code, DMRT_ERROR_STATE) << s.message; // not DMRT_ERROR_UNBOUND
}

} // namespace
