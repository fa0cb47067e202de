//===- GpuTarget.h - the facts about a GPU that code generation uses ------===//
//
// Kernel configurations depend on the GPU a bundle is compiled for: default
// knobs size their grids to fill its SMs, fused attention tiles must fit its
// shared memory per block. Those facts come from here, by name (`dmc compile
// --target h100`), never from constants in the emitters. MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_TARGET_GPUTARGET_H
#define DMC_CODEGEN_TARGET_GPUTARGET_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dmcgen {

struct GpuTarget {
  std::string name;          ///< "h100"
  std::string description;   ///< "NVIDIA H100 SXM (80 GB)"
  std::string arch;          ///< the NVRTC architecture it runs: "sm_90a"
  int sms = 0;               ///< streaming multiprocessors
  unsigned maxSharedPerBlock = 0; ///< dynamic shared memory one block may opt into, bytes
  int64_t l2Bytes = 0;       ///< L2 cache
};

/// Every target dmc knows, in the order `dmc compile --help` lists them.
const std::vector<GpuTarget> &knownTargets();
/// The target called `name`, or none.
std::optional<GpuTarget> targetByName(const std::string &name);
/// The names of the known targets, "h100, h200, ...".
std::string targetNames();
/// The target assumed for `arch` when none is named: the first known one of
/// that architecture (sm_90 and sm_90a: h100), or none.
std::optional<GpuTarget> defaultTargetFor(const std::string &arch);
/// The target of code compiled without one (h100).
const GpuTarget &defaultTarget();

} // namespace dmcgen

#endif // DMC_CODEGEN_TARGET_GPUTARGET_H
