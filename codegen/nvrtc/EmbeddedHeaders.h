//===- EmbeddedHeaders.h - Headers handed to every NVRTC compile --*- C++ -*-===//
//
// The device-side headers generated kernels include, embedded at build time
// (EmbedHeaders.cmake) so a compile never touches the file system:
//   "dmrt/Types.h"     codegen/nvrtc/DeviceTypes.h (pre-included)
//   "dmrt/Philox.h"    runtime/Philox.h
//   "runtime/Philox.h" runtime/Philox.h (the name runtime/Float16.h includes)
//   "dmrt/Float16.h"   runtime/Float16.h
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_NVRTC_EMBEDDEDHEADERS_H
#define DMC_CODEGEN_NVRTC_EMBEDDEDHEADERS_H

#include <string>
#include <utility>
#include <vector>

namespace dmcgen {

/// Include name -> contents, in a fixed order.
const std::vector<std::pair<std::string, std::string>> &embeddedHeaders();

/// The include name that every compile pre-includes.
inline constexpr const char *kPreIncludedHeader = "dmrt/Types.h";

} // namespace dmcgen

#endif // DMC_CODEGEN_NVRTC_EMBEDDEDHEADERS_H
