//===- ManifestProperties.h - What an accepted manifest promises --*- C++ -*-===//
#ifndef DMC_TESTS_FUZZ_MANIFESTPROPERTIES_H
#define DMC_TESTS_FUZZ_MANIFESTPROPERTIES_H

#include "runtime/format/Manifest.h"

namespace dmc::fuzz {

/// Checks (aborting under `target`'s name) what the executor relies on once
/// parseManifest accepted `m`: every arena tensor and workspace lies inside
/// its arena, a tensor's bytes are its elements' bytes, the manifest writes
/// back to text that reads back the same; and when buildLayerPlan accepts it,
/// binding every caller tensor at its planned offset makes both phases ready.
void checkAcceptedManifest(const dmrt::Manifest &m, const char *target);

} // namespace dmc::fuzz

#endif // DMC_TESTS_FUZZ_MANIFESTPROPERTIES_H
