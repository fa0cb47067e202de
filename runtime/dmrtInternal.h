//===- dmrtInternal.h - libdmrt.so's test hooks (not the public API) ------===//
//
// Exported by libdmrt.so for the runtime's own tests (tests/gpu/), never
// part of runtime/dmrt.h: they may change without notice. A test linking
// both libdmrt.so and the static runtime must ask libdmrt.so, whose module
// registry is the one dmrt_open uses; hence C functions, not C++ accessors.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_DMRTINTERNAL_H
#define DMRT_DMRTINTERNAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The process-wide module registry of libdmrt.so (runtime/ModuleCache.h):
/// cubins loaded and unloaded since the process started, and loaded now.
/// Any pointer may be null.
void dmrt_internal_module_stats(uint64_t *loads, uint64_t *unloads, uint64_t *live);

#ifdef __cplusplus
}
#endif

#endif // DMRT_DMRTINTERNAL_H
