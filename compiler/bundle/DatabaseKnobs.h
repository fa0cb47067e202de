//===- DatabaseKnobs.h - dmc compile --db: knobs from measurements -*- C++ -*-===//
//
// Reads the bundle just compiled with the default configuration (its
// manifest.json and config.json) and the tuning database, lists each
// kernel's measured candidates in its default layouts (tuning-db/
// KnobSelection.h), and selects one configuration for all kernels by
// shortest path (DatabaseSelection.h) for the device the database names;
// the caller compiles again with it when anything changed.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_DATABASEKNOBS_H
#define DMC_COMPILER_BUNDLE_DATABASEKNOBS_H

#include "runtime/format/Config.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace dmc::bundle {

/// `config`: the default bundle's configuration with the chosen knobs;
/// `changed`: whether any kernel's knobs differ from the default's. Writes
/// what matched, what was rejected and why, and the choice per kernel to
/// `log`. Errors name the file (database, bundle) and what is wrong.
llvm::Error knobsFromDatabase(const std::string &defaultBundle, const std::string &dbPath,
                              const std::string &device, dmrt::Configuration &config,
                              bool &changed, llvm::raw_ostream &log);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_DATABASEKNOBS_H
