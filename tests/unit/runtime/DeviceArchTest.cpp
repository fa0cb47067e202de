//===- DeviceArchTest.cpp - which cubins run on which device --------------===//
#include "runtime/DeviceArch.h"

#include <gtest/gtest.h>

using dmrt::archRunsOn;

TEST(DeviceArch, Rules) {
  std::string e;
  EXPECT_TRUE(archRunsOn("sm_90a", 9, 0, e)) << e;
  EXPECT_FALSE(archRunsOn("sm_90a", 10, 0, e));
  EXPECT_NE(e.find("runs only on compute capability 9.0"), std::string::npos) << e;
  EXPECT_NE(e.find("--arch sm_100a"), std::string::npos) << e;
  EXPECT_FALSE(archRunsOn("sm_90a", 8, 0, e));
  EXPECT_TRUE(archRunsOn("sm_80", 8, 6, e)) << e;
  EXPECT_FALSE(archRunsOn("sm_86", 8, 0, e));
  EXPECT_FALSE(archRunsOn("sm_80", 9, 0, e));
  EXPECT_NE(e.find("this device has compute capability 9.0"), std::string::npos) << e;
  EXPECT_TRUE(archRunsOn("sm_100f", 10, 3, e)) << e;
  EXPECT_TRUE(archRunsOn("sm_120", 12, 0, e)) << e;
  for (const char *bad : {"", "sm90", "sm_9", "sm_90x", "compute_90", "sm_abc"}) {
    EXPECT_FALSE(archRunsOn(bad, 9, 0, e)) << bad;
    EXPECT_NE(e.find("is not of the form sm_<major><minor>[a|f]"), std::string::npos) << e;
  }
}
