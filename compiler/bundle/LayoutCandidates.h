//===- LayoutCandidates.h - the tuner's contraction layout candidates -----===//
//
// Issue 11, section 1: every layout of a contraction's tensors that maps to
// cuBLASLt (GEMM or strided-batched, operands swapped or not: the swap
// follows from D's innermost group) is a candidate the tuner measures. For
// each contraction of a configured graph, each of its operands and its
// result whose layout the global selection may move (not the caller's, not
// a view and not viewed, its producer able to write any layout) gets one
// candidate per other layout it has among the contraction's mappable
// triples (codegen/gemm/MappableLayouts.h) with the other two tensors kept:
// the default configuration with that tensor moved. A candidate becomes a
// bundle through applyConfiguration(checkForms = false), the path of
// `dmc compile --config` and `--db`, which may still reject it (another
// contraction reading the tensor no longer maps).
//
// Transpose candidates (issue 11, section 1: "transposes priced by
// measurement"): each operand a or b in each other mappable layout with the
// other two kept, the tensor left where its producer writes it (pinned ones
// too: an argument, a view) and a transpose kernel inserted before the
// contraction (config.json `transposes[]`). Its bundle measures that kernel
// and the contraction, so the global selection can price a read through a
// transpose where two readers want different layouts.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_LAYOUTCANDIDATES_H
#define DMC_COMPILER_BUNDLE_LAYOUTCANDIDATES_H

#include "runtime/format/Config.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace dmc::bundle {

struct LayoutCandidate {
  std::string contraction; ///< "c3"
  char operand = 'd';      ///< 'a', 'b' or 'd'
  std::string tensor;      ///< config.json's name of the moved tensor
  std::string from, to;    ///< its default layout and the candidate's
  /// The tensor stays in `from`; a transpose kernel gives the contraction
  /// `to` (operands a and b only).
  bool transpose = false;
  /// The default configuration with `tensor` in `to` and no kernel entries
  /// (every kernel in codegen's default knobs for its layouts); contraction
  /// forms as the default's: apply with checkForms = false.
  dmrt::Configuration config;
  /// "c3 d t12 bhjk -> bhkj", "c3 a t9 bji -> jbi through a transpose"
  std::string describe() const;
};

struct LayoutCandidates {
  std::vector<LayoutCandidate> candidates;
  /// Operands and results left out because the selection keeps their layout,
  /// with why ("a function argument", "a view", "viewed").
  int pinned = 0;
  std::vector<std::string> pinnedWhy;
  int transposes = 0; ///< candidates with `transpose` (counted in candidates)
  /// "N candidate(s) (T through a transpose) over M contraction(s); P tensor(s) pinned (...)"
  std::string summary(size_t contractions) const;
};

/// The candidates of the configured graph `f` (the config stage), whose
/// configuration is `config` (extractConfiguration of `f`).
llvm::Expected<LayoutCandidates> layoutCandidates(mlir::func::FuncOp f,
                                                  const dmrt::Configuration &config);

/// The steps ("k3", "c1": reference file stems, manifest ids) of `candidate`
/// whose operand or result layouts differ from `base`'s; both graphs have the
/// same kernels and contractions in the same order (a candidate inserts no
/// transpose). Empty when the step lists differ.
std::vector<std::string> changedSteps(mlir::func::FuncOp base, mlir::func::FuncOp candidate);

/// The steps a transpose candidate measures in its graph `candidate`: the
/// transpose kernel inserted before contraction `contraction` ("c3") and the
/// contraction. Empty when there is no such kernel.
std::vector<std::string> transposeSteps(mlir::func::FuncOp candidate,
                                        const std::string &contraction);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_LAYOUTCANDIDATES_H
