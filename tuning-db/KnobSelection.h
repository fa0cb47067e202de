//===- KnobSelection.h - Measured knobs for a bundle's kernels ---*- C++ -*-===//
//
// `dmc compile --db DB`: each fused kernel of the default configuration gets
// the knobs of its fastest measured candidate (records of its Problem, same
// layouts, on the chosen device, with this NVRTC and codegen version, not
// rejected); a kernel without records keeps codegen's default knobs. Layouts
// and contraction algorithms are not chosen here yet (the shortest-path
// selection over layouts, passes/select/, needs layout candidates measured).
// MLIR-free: the compiler calls it on the manifest of the default bundle.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_KNOBSELECTION_H
#define DMC_TUNINGDB_KNOBSELECTION_H

#include "runtime/format/Config.h"
#include "runtime/format/Manifest.h"
#include "tuning-db/Match.h"

#include <string>
#include <vector>

namespace dmc::tuningdb {

/// The device whose records to use: the one named `requested` (an exact
/// device name), or, when `requested` is empty, the only device of the
/// usable records. False with an error listing the devices otherwise.
bool chooseDevice(const std::vector<Record> &, const std::string &requested, Device &out,
                  std::string &error);

struct KernelChoice {
  std::string kernel;       ///< entry name, "k3_softmax"
  int candidates = 0;       ///< measured candidates of its problem
  double defaultUs = -1;    ///< its default knobs' median, -1: not measured
  double chosenUs = -1;     ///< the chosen candidate's median, -1: no records
  std::string chosen;       ///< the chosen knobs (describeCandidate)
  bool changed = false;     ///< knobs differ from the default's
};

struct KnobSelection {
  MatchResult match;        ///< the database against device and software
  std::vector<KernelChoice> kernels;
  /// Sums over the kernels measured with their default knobs too: the
  /// kernel time the selection predicts against the default's.
  double defaultSumUs = 0, chosenSumUs = 0;
  int comparable = 0;
  /// Per kernel a line, then the totals: for the terminal and the report.
  std::string describe() const;
};

/// Whether the record's knobs are `k`'s.
bool knobsEqual(const Record &r, const dmrt::ConfigKernel &k);
/// Whether the record has every knob of a fused kernel (lane_dim, tx, ty,
/// per_thread, vec, split), as importBench writes them.
bool hasAllKnobs(const Record &r);
/// The record's knobs written into `k`.
void applyKnobs(const Record &r, dmrt::ConfigKernel &k);

/// Chooses knobs for every kernel of `config` (the default configuration of
/// the bundle with manifest `m`) from `records`, matched against `device`
/// and `software` (libraries not compared: see Match.h), and writes them
/// into `config`.
KnobSelection selectKnobs(const dmrt::Manifest &m, dmrt::Configuration &config,
                          const std::vector<Record> &records, const Device &device,
                          const Software &software);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_KNOBSELECTION_H
