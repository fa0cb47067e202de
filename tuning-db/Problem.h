//===- Problem.h - What a bundle step computes, as a tuning key --*- C++ -*-===//
//
// The tuner measures steps of bundles; the compiler looks their times up when
// it compiles another bundle of the same (or another) model. Both sides
// describe a step by what it computes, never by its position or its tensors'
// names: the signature (the kernel's member op kinds, as its name spells
// them, and the dimension sets of its inputs and outputs; a contraction's
// equation up to layout, and its epilogue), the extent of every dimension,
// the element type, and separately the layouts it reads and writes. One
// definition for both sides, read off the bundle's manifest (MLIR-free), so
// a record the tuner writes is found by the compiler exactly when the two
// steps agree on all of it.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_PROBLEM_H
#define DMC_TUNINGDB_PROBLEM_H

#include "runtime/format/Config.h"
#include "runtime/format/Manifest.h"
#include "tuning-db/Record.h"

#include <map>
#include <string>
#include <vector>

namespace dmc::tuningdb {

struct Problem {
  Kind kind = Kind::Kernel;
  std::string signature;
  std::map<std::string, int64_t> sizes; ///< every dimension letter of its tensors
  std::string dtype;                    ///< of its first output
  std::vector<std::string> layouts;     ///< inputs then outputs (manifest order)
  std::string epilogue;                 ///< contractions: "none", "bias", ...
};

/// A fused kernel: "kernel NAME(ijk,i->ijk)" with every dims string sorted
/// (layout-independent), e.g. "kernel bias_dropout(bij,i->bij)".
Problem kernelProblem(const dmrt::Manifest &, const dmrt::BundleKernel &);
/// The kernel a configuration's transpose inserts (`dm.kernel "transpose"`,
/// config.json `transposes[]`) reading `t` in layout `from` and writing it in
/// `to`: kernelProblem of that kernel in a bundle, without the bundle.
Problem transposeProblem(const dmrt::BundleTensor &t, const std::string &from,
                         const std::string &to);
/// A contraction: "contraction ab,bc->ac" with sorted dims, and its epilogue.
Problem contractionProblem(const dmrt::Manifest &, const dmrt::BundleContraction &);

/// A whole training step of the bundle: "step 10 kernels 12 contractions
/// HASH", HASH the FNV-1a 64 of every step in order (its problem, layouts,
/// epilogue, phase, and a kernel's knobs or a contraction's algorithm), the
/// union of their sizes, the first step's dtype; no layouts. Two bundles
/// share it exactly when they run the same steps in the same configuration.
Problem stepProblem(const dmrt::Manifest &);

/// The fields of `p` copied into a record (kind, signature, sizes, dtype,
/// layouts, epilogue); device, software, candidate and times are the caller's.
void fillProblem(const Problem &p, Record &r);
/// Whether record `r` is a measurement of problem `p` (every field of
/// fillProblem equal, layouts included).
bool sameProblem(const Problem &p, const Record &r);
/// The same computation in any layouts: every field but the layouts equal,
/// and as many layouts (the global selection's candidates of a step).
bool sameComputation(const Problem &p, const Record &r);

/// A fused kernel's knobs as a record holds them (lane_dim, tx, ty,
/// per_thread, vec, split): the one conversion both ways.
std::map<std::string, Knob> recordKnobs(const dmrt::ConfigKernel &k);
/// The record's knobs written into `k`; false (and `k` untouched) when the
/// record lacks one of them or has one of the wrong type.
bool configKnobs(const Record &r, dmrt::ConfigKernel &k);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_PROBLEM_H
