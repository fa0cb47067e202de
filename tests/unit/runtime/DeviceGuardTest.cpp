//===- DeviceGuardTest.cpp - The caller's current device comes back -------===//
//
// runtime/DeviceGuard.h with fake CUDA calls (no GPU): a thread-local
// "current device", a failing get or set on demand, and a log of the sets.
//
//===----------------------------------------------------------------------===//
#include "runtime/DeviceGuard.h"

#include <gtest/gtest.h>

#include <vector>

using namespace dmrt;

namespace {

int current = 0;
bool getFails = false, setFails = false;
int clears = 0, gets = 0;
std::vector<int> sets;

cudaError_t fakeGet(int *d) {
  ++gets;
  if (getFails)
    return cudaErrorNoDevice;
  *d = current;
  return cudaSuccess;
}
cudaError_t fakeSet(int d) {
  sets.push_back(d);
  if (setFails)
    return cudaErrorInvalidDevice;
  current = d;
  return cudaSuccess;
}
cudaError_t fakeClear() {
  ++clears;
  return cudaSuccess;
}
const DeviceOps fake = {&fakeGet, &fakeSet, &fakeClear};

struct DeviceGuardTest : ::testing::Test {
  void SetUp() override {
    current = 0;
    getFails = setFails = false;
    clears = gets = 0;
    sets.clear();
  }
};

TEST_F(DeviceGuardTest, SameDeviceSetsNothing) {
  current = 1;
  {
    DeviceGuard g(fake);
    std::string error;
    EXPECT_TRUE(g.use(1, error));
    EXPECT_EQ(current, 1);
  }
  EXPECT_EQ(current, 1);
  EXPECT_TRUE(sets.empty());
}

TEST_F(DeviceGuardTest, OtherDeviceSwitchesAndRestores) {
  current = 1;
  {
    DeviceGuard g(fake);
    std::string error;
    ASSERT_TRUE(g.use(0, error));
    EXPECT_EQ(current, 0);
    EXPECT_TRUE(g.use(0, error)); // already current: no second set
  }
  EXPECT_EQ(current, 1);
  EXPECT_EQ(sets, (std::vector<int>{0, 1}));
}

TEST_F(DeviceGuardTest, RestoresWhatACalleeSwitched) {
  current = 2;
  {
    DeviceGuard g(fake);
    g.assumeSwitched();
    current = 0; // e.g. CudaDriver::open's cudaSetDevice, behind the guard
  }
  EXPECT_EQ(current, 2);
  EXPECT_EQ(sets, (std::vector<int>{2}));
  EXPECT_EQ(gets, 1);
}

// An entry point (guard, use, return) asks the current device once, whether
// it switches or not.
TEST_F(DeviceGuardTest, OneGetPerGuard) {
  for (int target : {1, 0}) {
    current = 1;
    gets = 0;
    {
      DeviceGuard g(fake);
      std::string error;
      ASSERT_TRUE(g.use(target, error));
      ASSERT_TRUE(g.use(target, error));
    }
    EXPECT_EQ(gets, 1) << "use(" << target << ")";
    EXPECT_EQ(current, 1);
  }
}

TEST_F(DeviceGuardTest, EarlyReturnRestores) {
  current = 3;
  auto body = [](std::string &error) {
    DeviceGuard g(fake);
    if (!g.use(1, error))
      return false;
    return false; // an error after the switch
  };
  std::string error;
  EXPECT_FALSE(body(error));
  EXPECT_EQ(current, 3);
}

TEST_F(DeviceGuardTest, FailedGetRestoresNothingAndClears) {
  getFails = true;
  {
    DeviceGuard g(fake);
    EXPECT_FALSE(g.saved());
    current = 5;
  }
  EXPECT_EQ(current, 5);
  EXPECT_TRUE(sets.empty());
  EXPECT_EQ(clears, 1);
}

TEST_F(DeviceGuardTest, FailedSetIsAnError) {
  current = 1;
  setFails = true;
  {
    DeviceGuard g(fake);
    std::string error;
    EXPECT_FALSE(g.use(4, error));
    EXPECT_NE(error.find("cudaSetDevice(4)"), std::string::npos) << error;
  }
  EXPECT_EQ(current, 1);
  EXPECT_EQ(sets, (std::vector<int>{4})); // nothing switched: nothing to restore
  EXPECT_GE(clears, 1);
}

TEST_F(DeviceGuardTest, NestedGuardsRestoreInOrder) {
  current = 1;
  {
    DeviceGuard outer(fake);
    std::string error;
    ASSERT_TRUE(outer.use(0, error));
    {
      DeviceGuard inner(fake);
      ASSERT_TRUE(inner.use(2, error));
      EXPECT_EQ(current, 2);
    }
    EXPECT_EQ(current, 0);
  }
  EXPECT_EQ(current, 1);
}

} // namespace
