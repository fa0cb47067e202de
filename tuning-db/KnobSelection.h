//===- KnobSelection.h - Measured knobs for a bundle's kernels ---*- C++ -*-===//
//
// `dmc compile --db DB`'s table: each fused kernel of the default
// configuration against its measured candidates in its default layouts
// (records of its Problem on the chosen device, with this NVRTC and codegen
// version, not rejected): its default knobs' time and the fastest. The
// choice itself is the shortest-path selection's (compiler/bundle/
// DatabaseSelection.h), which also sees other layouts. MLIR-free.
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
  std::vector<double> candidateUs; ///< every candidate's median (the distribution)
  std::vector<dmrt::ConfigKernel> candidateKnobs; ///< their knobs, in the same order
};

/// A contraction against its measured cuBLASLt algorithms (in its default
/// layouts and epilogue).
struct ContractionChoice {
  std::string contraction;  ///< "c4"
  std::string equation;     ///< as the manifest spells it
  int candidates = 0;       ///< measured algorithms (the heuristic's included)
  double defaultUs = -1;    ///< the heuristic's best (the default), -1: not measured
  double chosenUs = -1;     ///< the chosen algorithm's median, -1: no records
  std::string chosen;       ///< its serialized algorithm ("heuristic": unchanged)
  bool changed = false;
  std::vector<double> candidateUs;
};

/// The algorithm to run: the fastest record unless it is within this
/// fraction of the default's time (noise; the default stays).
inline constexpr double kAlgorithmMinGain = 0.01;

struct KnobSelection {
  MatchResult match;        ///< the database against device and software
  std::vector<KernelChoice> kernels;
  std::vector<ContractionChoice> contractions;
  /// Over the contractions measured with the default algorithm too.
  double contractionDefaultSumUs = 0, contractionChosenSumUs = 0;
  int contractionsComparable = 0;
  /// Sums over the kernels measured with their default knobs too: the
  /// kernel time the selection predicts against the default's.
  double defaultSumUs = 0, chosenSumUs = 0;
  int comparable = 0;
  /// Per kernel a line, then the totals: for the terminal and the report.
  std::string describe() const;
};

/// Whether the record's knobs are `k`'s.
bool knobsEqual(const Record &r, const dmrt::ConfigKernel &k);

/// Each contraction of `config` against its measured algorithms (records of
/// its Problem: layouts and epilogue as configured): the default's time
/// (a record of algorithm "heuristic", else the heuristic's rank 0 in a
/// sweep, knob `heuristic_rank`) and the fastest; the chosen algorithm is
/// written into `config` (`algorithm`) when it beats the default by more
/// than kAlgorithmMinGain, or when the default was not measured.
void selectAlgorithms(const dmrt::Manifest &m, dmrt::Configuration &config, KnobSelection &sel);

/// Each kernel of `config` (the default configuration of the bundle with
/// manifest `m`) against its measured candidates in its default layouts:
/// `records` matched against `device` and `software` (libraries not
/// compared: see Match.h). A report; the choice is the global selection's.
KnobSelection selectKnobs(const dmrt::Manifest &m, const dmrt::Configuration &config,
                          const std::vector<Record> &records, const Device &device,
                          const Software &software);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_KNOBSELECTION_H
