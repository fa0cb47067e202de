//===- BenchImport.h - Measurements of dmrt-bench as records -----*- C++ -*-===//
//
// The GPU side of tuning: dmrt-bench runs every step of a candidate bundle,
// checks its outputs against the bundle's references and times it
// (`--reference --json`); importBench turns that run into records: one per
// kernel (its knobs from the bundle's config.json) and one per contraction
// (the heuristic's algorithm), each keyed by its Problem. A step whose output
// failed the check, or that failed to run, becomes a rejected record (a
// resumed tuner skips it; the compiler never selects it); a step that was
// not checked is not recorded at all, since a fast wrong candidate must
// never reach the database. Device and software come from the run (name,
// compute capability, SMs, memory clock, L2; CUDA runtime and cuBLASLt
// versions) and the bundle (NVRTC version); codegen is this build's version
// of the record's family (codegenVersion), so the bundle must come from the
// same dmc.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_BENCHIMPORT_H
#define DMC_TUNINGDB_BENCHIMPORT_H

#include "runtime/format/Config.h"
#include "runtime/format/Manifest.h"
#include "tuning-db/Record.h"

#include <string>
#include <vector>

namespace dmc::tuningdb {

struct ImportResult {
  std::vector<Record> records;
  int ok = 0, rejected = 0;
  /// Steps left out: not checked (no reference: the compiler skipped them),
  /// or without a cuBLASLt form.
  int unchecked = 0;
  /// "12 kernels, 6 contractions: 17 ok, 1 rejected; 13 not checked (not recorded)".
  std::string summary() const;
};

/// Records of the dmrt-bench JSON `benchText` (file `benchFile`, for errors)
/// of the bundle whose manifest and configuration are given, dated `date`.
/// False with an error naming the file and field when the run cannot be
/// imported (not a dmrt-bench run, run without --reference, another bundle's
/// run, a missing device field).
bool importBench(const std::string &benchText, const std::string &benchFile,
                 const dmrt::Manifest &, const dmrt::Configuration &, const std::string &date,
                 ImportResult &out, std::string &error);

/// The GPU of the dmrt-bench JSON file `file` (`dmrt-bench --device-info`,
/// or a run's): its device and the CUDA runtime and cuBLASLt versions into
/// `out` (a record of that GPU, as stepsRecorded takes it). False with an
/// error naming the file and field.
bool benchDevice(const std::string &file, Record &out, std::string &error);
/// The manifest.json and config.json of the bundle directory `bundleDir`;
/// false with `error` naming the file when one cannot be read or parsed.
bool readBundleFiles(const std::string &bundleDir, dmrt::Manifest &manifest,
                     dmrt::Configuration &config, std::string &error);
/// importBench of the run file `benchPath` of the bundle directory `bundleDir`
/// (its manifest.json and config.json), appended to the database `dbPath`
/// (created if missing) record by record, skipping candidates the database
/// already holds as ok. `line`: "RUN: 13 kernel(s), ...; 12 appended to DB, 1
/// already there". Warnings (a torn line repaired) go to `warnings`. With
/// `imported`, every record of the run (appended or already there) is put there.
bool importRun(const std::string &dbPath, const std::string &benchPath,
               const std::string &bundleDir, std::string &line, std::string &error,
               std::vector<std::string> &warnings, std::vector<Record> *imported = nullptr);

/// Which steps of a bundle a tuning database already holds (stepsRecorded).
struct RecordedSteps {
  std::vector<int64_t> knownKernels, leftKernels;
  std::vector<int64_t> knownContractions, leftContractions;
};

/// The steps of the bundle directory `bundleDir` that the database `dbPath`
/// already holds for the device and software of `measured` (a record of
/// this GPU: its device, CUDA and cuBLASLt; NVRTC from the manifest, each family's
/// codegen version this build's), so that a tuner need not measure them again: a kernel
/// with an ok record of its knobs; a contraction (with a cuBLASLt form) with
/// an ok record of any algorithm (with `sweep`, of a swept one: a cuBLASLt
/// algorithm, not "heuristic"). Of the kernels in `kernels` and the contractions in
/// `contractions`, each "all", "" (none) or a list "3,5"; the others are
/// `left`. False with `error` when a file cannot be read.
bool stepsRecorded(const std::string &dbPath, const std::string &bundleDir,
                   const Record &measured, const std::string &kernels,
                   const std::string &contractions, bool sweep, RecordedSteps &out,
                   std::string &error, std::vector<std::string> &warnings);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_BENCHIMPORT_H
