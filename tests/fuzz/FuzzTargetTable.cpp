//===- FuzzTargetTable.cpp - Every target (the regression test's list) -----===//
#include "tests/fuzz/FuzzTarget.h"

namespace dmc::fuzz {

const std::vector<Target> &targets() {
  static const std::vector<Target> all = {
      {"model", runModel},       {"config", runConfig},
      {"manifest", runManifest}, {"bundle", runBundle},
      {"safetensors", runSafetensors}, {"tuningdb", runTuningDb},
  };
  return all;
}

} // namespace dmc::fuzz
