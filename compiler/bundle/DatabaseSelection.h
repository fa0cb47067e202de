//===- DatabaseSelection.h - One configuration by shortest path ---*- C++ -*-===//
//
// The global selection of `dmc compile --db` (DESIGN.md, "Configuration
// selection"): the default bundle's fused kernels in step order are the
// operators of a passes/select ConfigProblem, and so are the cuBLASLt
// contractions; every matched, checked record of a step's computation (any
// layouts; a contraction's in any algorithm) is one of its configurations,
// at its measured median (a contraction's other than the heuristic in the
// default layouts: plus kAlgorithmMinGain, so noise keeps the default); a
// tensor's candidate layouts are those its records read or write. Tensors
// the caller owns and views keep their layouts. A contraction's operand a or
// b may be read through a transpose kernel inserted before it, at the time
// of that transpose's record (dmc tune's transpose candidates; none
// measured: not allowed); other reads take the stored layout (a kernel
// reads and writes any layout itself; a contraction's layouts are those it
// was measured in, dmc tune's layout candidates).
// The exact shortest path over the cuts (residuals and saved activations in
// the state) is the configuration: its knobs and the layouts of the tensors
// it moves. A kernel without records keeps its default, at an unknown cost.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_DATABASESELECTION_H
#define DMC_COMPILER_BUNDLE_DATABASESELECTION_H

#include "runtime/format/Config.h"
#include "runtime/format/Manifest.h"
#include "tuning-db/Record.h"

#include <string>
#include <vector>

namespace dmc::bundle {

struct GlobalSelection {
  bool ok = false;
  std::string error; ///< when !ok: why no configuration was selected
  size_t states = 0, edges = 0, configs = 0, freeTensors = 0;
  double predictedUs = 0;    ///< the shortest path: the chosen kernels' and contractions' time
  double contractionUs = 0;  ///< the contractions' part of predictedUs
  /// predictedUs by the steps' phases (forward + backward = predictedUs).
  double forwardUs = 0, backwardUs = 0;
  /// Each step's chosen time in the manifest's order: a kernel by its entry
  /// name, a contraction by "c<index>" (inserted transposes are in their
  /// contraction's).
  std::vector<std::pair<std::string, double>> stepUs;
  /// Adds `us` to the sum of `phase` (a manifest step's "forward" or "backward").
  void addToPhase(const std::string &phase, double us) {
    (phase == "forward" ? forwardUs : backwardUs) += us;
  }
  double defaultContractionUs = 0; ///< the contractions' part of defaultUs
  double lowerBoundUs = 0;   ///< each step at its fastest, consistency ignored
  /// The forward-chain-only selection (Substation's: each step consistent
  /// with the one before it only), priced by the records' medians; -1: none.
  double chainUs = -1;
  /// That selection reads some tensor in a layout its writer (not the step
  /// just before) did not write: it could not be compiled as chosen.
  bool chainInconsistent = false;
  double defaultUs = -1;     ///< the default configuration (-1: not every kernel measured in it)
  int kernelsChanged = 0, contractionsChanged = 0, layoutsChanged = 0;
  /// Transpose kernels the selection inserted before contraction operands
  /// (config.json `transposes[]`) and their measured time, in predictedUs.
  int transposesInserted = 0;
  double transposeUs = 0;
  std::string describe() const;
};

/// Selects knobs and layouts for `config` (the default bundle's, manifest
/// `m`) from `matched` records (this device and software, not rejected), and
/// writes them into `config` (tensor layouts, kernel knobs, contraction
/// algorithms; the contractions' forms follow from the layouts when the
/// configuration is applied with checkForms false).
GlobalSelection selectGlobally(const dmrt::Manifest &m, dmrt::Configuration &config,
                               const std::vector<const tuningdb::Record *> &matched);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_DATABASESELECTION_H
