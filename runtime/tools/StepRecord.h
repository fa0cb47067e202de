//===- StepRecord.h - dmc-run --bench --record: a whole step as a record --===//
//
// The tuner measures each kernel and contraction alone; a whole step run
// back to back with CUDA graphs takes longer than their sum (the time between
// dependent steps, kernels slowed beside each other, the clock a GPU lowers at
// its power limit). `dmc-run BUNDLE --bench --record DB` appends the step it
// measured as a `step` record (tuningdb::stepProblem: every step of the bundle
// in its configuration), so that `dmc compile --db` can calibrate the sum of
// another configuration by the default configuration's measured step
// (docs/tuning-db-format.md, "Whole steps").
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_TOOLS_STEPRECORD_H
#define DMRT_TOOLS_STEPRECORD_H

#include "runtime/Bundle.h"
#include "tuning-db/Record.h"

#include <string>

namespace dmrt {

/// The record of `bundle`'s whole step measured on CUDA device `ordinal`:
/// median and fastest step in microseconds over `samples` steps. False, with
/// `error`, when the device cannot be queried.
bool stepRecord(const Bundle &bundle, int ordinal, double medianUs, double minUs,
                int64_t samples, dmc::tuningdb::Record &out, std::string &error);

} // namespace dmrt

#endif // DMRT_TOOLS_STEPRECORD_H
