//===- DeviceArch.h - Does a bundle's arch run on this device? ----*- C++ -*-===//
//
// Cubins are SASS for one architecture (manifest `arch`, e.g. "sm_90a"):
//  - "sm_XY": runs on compute capability X.Z for Z >= Y (same major);
//  - "sm_XYf" (family-specific): the same rule;
//  - "sm_XYa" (architecture-specific features, e.g. wgmma): exactly X.Y.
// Pure function, no device call: the executor passes the device's compute
// capability; tests pass any.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_DEVICEARCH_H
#define DMRT_DEVICEARCH_H

#include <string>

namespace dmrt {

/// True when cubins for `arch` run on a device of compute capability
/// major.minor; otherwise false with `error` saying why (or that `arch`
/// is not of the form sm_<major><minor>[a|f]).
bool archRunsOn(const std::string &arch, int major, int minor, std::string &error);

} // namespace dmrt

#endif // DMRT_DEVICEARCH_H
