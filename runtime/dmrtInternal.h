//===- dmrtInternal.h - libdmrt.so's test hooks (not the public API) ------===//
//
// Exported by libdmrt.so for the runtime's own tests (tests/gpu/) and tools
// (dmc-run), never part of runtime/dmrt.h: they may change without notice.
// A test linking both libdmrt.so and the static runtime must ask
// libdmrt.so, whose module registry is the one dmrt_open uses; hence C
// functions, not C++ accessors, for what reads that registry.
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

/// The last captured graph of `backward` 0 (training forward) or 1: steps,
/// dependency edges and the longest chain of dependent steps (zeros for a
/// serial capture, none yet, or a layer opened without a device). Edges and
/// chain count a kernel's finishing launch apart from its own launch where
/// the bundle lists the finishing launch's outputs (version 9).
void dmrt_internal_graph_shape(dmrt_layer *layer, int32_t backward, int32_t *steps,
                               int32_t *edges, int32_t *critical_path);

/// The last captured graph of `backward` 0 or 1: memset nodes (cuBLASLt's)
/// that became fill kernels and those kept (DMRT_OPEN_GRAPH_MEMSETS, or one
/// the fill kernels cannot do). Any pointer may be null.
void dmrt_internal_graph_memsets(dmrt_layer *layer, int32_t backward, int32_t *filled,
                                 int32_t *kept);

/// Graphs instantiated and graphs updated in place (a phase captured again
/// after its buffers were rebound, same topology) since the layer opened.
/// Any pointer may be null.
void dmrt_internal_graph_counts(dmrt_layer *layer, int32_t *instantiated, int32_t *updated);

#ifdef __cplusplus
}

#include "runtime/Bundle.h"
#include "runtime/dmrt.h"

#include <memory>

/// dmrt_open of a bundle the caller loaded itself (loadBundle, with its
/// cubin images unless DMRT_OPEN_VALIDATE_ONLY), so that a program that
/// needs the manifest too (dmc-run) reads the bundle once. The layer shares
/// `bundle`; `images` is read during the call only. The same option checks,
/// statuses and errors as dmrt_open after its own loadBundle. (C++: the
/// Bundle is the runtime's own type, built from the same sources.)
dmrt_status dmrt_internal_open_loaded(std::shared_ptr<const dmrt::Bundle> bundle,
                                      const dmrt::CubinImages &images,
                                      const dmrt_open_options *options, dmrt_layer **out);
#endif

#endif // DMRT_DMRTINTERNAL_H
