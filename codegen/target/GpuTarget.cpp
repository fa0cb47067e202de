//===- GpuTarget.cpp - the facts about a GPU that code generation uses ----===//
#include "codegen/target/GpuTarget.h"

namespace dmcgen {

const std::vector<GpuTarget> &knownTargets() {
  // From NVIDIA's data sheets and the CUDA programming guide's per-arch limits
  // (maximum shared memory per block with the opt-in attribute).
  static const std::vector<GpuTarget> targets = {
      {"h100", "NVIDIA H100 SXM (80 GB)", "sm_90a", 132, 227 * 1024, 50ll << 20},
      {"h200", "NVIDIA H200 SXM (141 GB)", "sm_90a", 132, 227 * 1024, 50ll << 20},
      {"a100", "NVIDIA A100 SXM (40/80 GB)", "sm_80", 108, 163 * 1024, 40ll << 20},
      {"l40s", "NVIDIA L40S", "sm_89", 142, 99 * 1024, 96ll << 20},
      {"b200", "NVIDIA B200", "sm_100", 148, 227 * 1024, 126ll << 20},
  };
  return targets;
}

std::optional<GpuTarget> targetByName(const std::string &name) {
  for (const GpuTarget &t : knownTargets())
    if (t.name == name)
      return t;
  return std::nullopt;
}

std::string targetNames() {
  std::string names;
  for (const GpuTarget &t : knownTargets())
    names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

std::optional<GpuTarget> defaultTargetFor(const std::string &arch) {
  std::string base = arch == "sm_90" ? "sm_90a" : arch;
  for (const GpuTarget &t : knownTargets())
    if (t.arch == base)
      return t;
  return std::nullopt;
}

const GpuTarget &defaultTarget() { return knownTargets().front(); }

} // namespace dmcgen
