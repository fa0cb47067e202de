//===- PathChoice.h - One of two graphs of a layer, by measurement -*- C++ -*-===//
//
// `dmc compile --db` prices a pass's graph against the graph without it from
// the same tuning database: each path's tuned step, the kernels' shortest
// path plus the contractions' chosen algorithms (DatabaseKnobs.h). The
// faster path wins when both are priced in full; when only the alternative
// is (a database measured before the default path changed), it is taken, so
// that the later choices are priced too; otherwise the default path stays.
// The line says which and why. The choices are made this way, one after the
// other (PathSearch.h): dropout keep bits saved against drawn again
// (dm-save-dropout-bits; drawn.dmlib) and then each dropout alone,
// fused against unfused attention
// (dm-fuse-attention; `dmc tune` measures unfused.dmlib), column sums inside
// the row kernels against apart (dm-fuse-column-reductions; apart.dmlib),
// addends in the GEMMs against in kernels (dm-gemm-epilogues' accumulate;
// noaddend.dmlib), then the bias gradients' modes (bgrad.dmlib, nobgrad.dmlib).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_PATHCHOICE_H
#define DMC_COMPILER_BUNDLE_PATHCHOICE_H

#include "compiler/bundle/DatabaseKnobs.h"

#include <string>

namespace dmc::bundle {

/// What is chosen and the names of its two paths, as the line spells them:
/// {"attention", "fused", "unfused"}.
struct PathNames {
  const char *what, *current, *alternative;
};

struct PathChoice {
  bool compared = false;    ///< both paths priced in full
  bool alternative = false; ///< the alternative path is taken: faster, or the only one priced
  std::string line;         ///< the report: both prices, bytes, the choice or why none
};

/// The choice between the path compiled (`current`, the default) and the
/// alternative one, both DatabaseView of the same database and device.
PathChoice choosePath(const PathNames &names, const DatabaseView &current,
                      const DatabaseView &alternative);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_PATHCHOICE_H
