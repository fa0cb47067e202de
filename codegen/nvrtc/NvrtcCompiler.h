//===- NvrtcCompiler.h - Generated CUDA C++ -> cubin through NVRTC -*- C++ -*-===//
//
// The NVRTC driver for generated kernels. MLIR-free and exception-free at its
// interface: every failure comes back as `false` plus a message. Compiles need
// no GPU (only libnvrtc), hand the embedded dmrt headers to every program, and
// may be cached on disk keyed by everything that determines the cubin.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_NVRTC_NVRTCCOMPILER_H
#define DMC_CODEGEN_NVRTC_NVRTCCOMPILER_H

#include "codegen/nvrtc/EmbeddedHeaders.h"

#include <string>
#include <vector>

namespace dmcgen {

struct CompileJob {
  std::string name;   ///< kernel/file name: the NVRTC program name, used in messages
  std::string source; ///< CUDA C++; may include "runtime/format/device/Philox.h", "runtime/format/device/Float16.h"
};

struct CompileOptions {
  /// One of allowedArchs(): sm_80, sm_89, sm_90, sm_90a, sm_100.
  std::string arch = "sm_90a";
  /// Extra NVRTC flags, after the defaults (--gpu-architecture, -std=c++17,
  /// -default-device, --pre-include=runtime/format/device/Types.h). No --use_fast_math by
  /// default: kernels must match the CPU interpreter bit for bit.
  std::vector<std::string> flags;
  /// "" = no disk cache; defaultCacheDir() is the conventional place.
  std::string cacheDir;
  /// Where the source of a failing job is kept; "" = the system temp dir.
  std::string failedSourceDir;
};

struct CompiledKernel {
  std::string name;
  std::vector<char> cubin; ///< an ELF image for `arch`
  std::string log;         ///< NVRTC's log (warnings), plus cache-write warnings
  bool fromCache = false;
  double seconds = 0; ///< wall time of this job (compile or cache read)
};

/// The NVRTC library version, "major.minor", e.g. "13.0".
std::string nvrtcVersion();

/// $DMC_CACHE_DIR, else $XDG_CACHE_HOME/dmc/nvrtc, else $HOME/.cache/dmc/nvrtc;
/// "" when none of those variables is set.
std::string defaultCacheDir();

/// The architectures CompileOptions::arch accepts.
const std::vector<std::string> &allowedArchs();

/// Compiles one job to a cubin. False on failure; `error` then names the job
/// and the arch, includes the full NVRTC log, and the path of the file where
/// the failing source was kept.
bool compileToCubin(const CompileJob &job, const CompileOptions &options,
                    CompiledKernel &out, std::string &error);

/// Compiles all jobs on `threads` worker threads (0 = hardware concurrency).
/// Results and `errors` are in job order; errors[i] is empty on success.
std::vector<CompiledKernel> compileAll(const std::vector<CompileJob> &jobs,
                                       const CompileOptions &options,
                                       unsigned threads,
                                       std::vector<std::string> &errors);

} // namespace dmcgen

#endif // DMC_CODEGEN_NVRTC_NVRTCCOMPILER_H
