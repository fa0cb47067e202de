//===- StridedViewTest.cpp - gathering and scattering a strided view ------===//
#include "runtime/StridedView.h"

#include <gtest/gtest.h>

using namespace dmrt;

namespace {

/// A [2, 3] i32 view with strides (7, 2): elements at 0, 2, 4, 7, 9, 11.
BundleTensor view() {
  BundleTensor t;
  t.dims = "ab";
  t.shape = {2, 3};
  t.dtype = DType::I32;
  t.bytes = 24;
  t.isAlias = true;
  t.aliasStrides = {7, 2};
  return t;
}

} // namespace

TEST(StridedView, GatherAndScatterVisitEachElementOnce) {
  BundleTensor t = view();
  ASSERT_EQ(t.spanElements(), 12);
  std::vector<int32_t> span(12);
  for (int i = 0; i < 12; ++i)
    span[size_t(i)] = 100 + i;
  std::vector<uint8_t> got = gatherView(t, reinterpret_cast<const uint8_t *>(span.data()));
  ASSERT_EQ(got.size(), 24u);
  const int32_t *g = reinterpret_cast<const int32_t *>(got.data());
  EXPECT_EQ(std::vector<int32_t>(g, g + 6), (std::vector<int32_t>{100, 102, 104, 107, 109, 111}));
  // Scattered back into a span of -1: exactly those six, the rest untouched.
  std::vector<int32_t> back(12, -1);
  std::vector<int32_t> dense = {1, 2, 3, 4, 5, 6};
  scatterView(t, reinterpret_cast<const uint8_t *>(dense.data()),
              reinterpret_cast<uint8_t *>(back.data()));
  EXPECT_EQ(back, (std::vector<int32_t>{1, -1, 2, -1, 3, -1, -1, 4, -1, 5, -1, 6}));
  // Planted: a dense view reads the first six as they lie.
  t.aliasStrides.clear();
  got = gatherView(t, reinterpret_cast<const uint8_t *>(span.data()));
  g = reinterpret_cast<const int32_t *>(got.data());
  EXPECT_EQ(std::vector<int32_t>(g, g + 6), (std::vector<int32_t>{100, 101, 102, 103, 104, 105}));
}
