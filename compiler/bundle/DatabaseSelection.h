//===- DatabaseSelection.h - One configuration by shortest path ---*- C++ -*-===//
//
// The global selection of `dmc compile --db` (DESIGN.md, "Configuration
// selection"): the default bundle's fused kernels in step order are the
// operators of a passes/select ConfigProblem; every matched, checked record
// of a kernel's computation (any layouts) is one of its configurations, at
// its measured median; a tensor's candidate layouts are those its records
// read or write. Tensors the caller owns, views, and tensors a contraction
// touches keep their layouts (contraction layouts are not measured yet), and
// no transposes are inserted (a kernel reads and writes any layout itself).
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
  double predictedUs = 0;    ///< the shortest path: the chosen kernels' time
  double lowerBoundUs = 0;   ///< each kernel at its fastest, consistency ignored
  double chainUs = -1;       ///< the forward-chain-only selection, priced truly (-1: infeasible)
  double defaultUs = -1;     ///< the default configuration (-1: not every kernel measured in it)
  int kernelsChanged = 0, layoutsChanged = 0;
  std::string describe() const;
};

/// Selects knobs and layouts for `config` (the default bundle's, manifest
/// `m`) from `matched` records (this device and software, not rejected), and
/// writes them into `config`.
GlobalSelection selectGlobally(const dmrt::Manifest &m, dmrt::Configuration &config,
                               const std::vector<const tuningdb::Record *> &matched);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_DATABASESELECTION_H
