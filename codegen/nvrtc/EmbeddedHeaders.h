//===- EmbeddedHeaders.h - Headers handed to every NVRTC compile --*- C++ -*-===//
//
// The device-side headers generated kernels include, embedded at build time
// (EmbedHeaders.cmake) so a compile never touches the file system. Each is
// embedded once, under its path in the repository, so the host build and
// NVRTC resolve the same include names: runtime/format/device/Types.h,
// Philox.h and Float16.h (the bundle format's device headers).
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

/// Pre-included in every compile, so any kernel has the fixed-width integers.
inline constexpr const char *kPreIncludedHeader = "runtime/format/device/Types.h";

} // namespace dmcgen

#endif // DMC_CODEGEN_NVRTC_EMBEDDEDHEADERS_H
