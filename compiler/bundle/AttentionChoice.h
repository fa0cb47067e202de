//===- AttentionChoice.h - Fused or unfused attention, by measurement -*- C++ -*-===//
//
// `dmc compile --db` prices the fused attention path (dm-fuse-attention's
// kernels) and the unfused one (the score tensors through softmax kernels and
// cuBLASLt contractions) from the same tuning database: each path's tuned
// step, the kernels' shortest path plus the contractions' chosen algorithms
// (DatabaseKnobs.h). The faster path wins when both are priced in full;
// otherwise the fused one stays and the line says why. `dmc tune` measures
// both (default.dmlib and unfused.dmlib).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_ATTENTIONCHOICE_H
#define DMC_COMPILER_BUNDLE_ATTENTIONCHOICE_H

#include "compiler/bundle/DatabaseKnobs.h"

#include <string>

namespace dmc::bundle {

struct AttentionChoice {
  bool compared = false; ///< both paths priced in full
  bool unfused = false;  ///< the unfused path is faster
  std::string line;      ///< the report: both prices, bytes, the choice or why none
};

/// The choice between the fused path (`fused`, the default) and the unfused
/// one (`unfused`), both DatabaseView of the same database and device.
AttentionChoice chooseAttention(const DatabaseView &fused, const DatabaseView &unfused);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_ATTENTIONCHOICE_H
