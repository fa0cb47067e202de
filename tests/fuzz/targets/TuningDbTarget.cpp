//===- TuningDbTarget.cpp - A tuning database file, and an export document -===//
//
// The input is read both ways a database arrives: as a JSON Lines file
// (parseDatabase: one record per line, a torn last line skipped with a
// warning) and as an export document (decodeExport). Every accepted record
// must encode to a line that decodes to the same line, and its knobs must
// either convert to a configuration entry and back or be refused.
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzTarget.h"

#include "tuning-db/Codec.h"
#include "tuning-db/Database.h"
#include "tuning-db/Match.h"
#include "tuning-db/Problem.h"

namespace dmc::fuzz {

namespace {

constexpr char kTarget[] = "tuningdb";

void checkRecords(const std::vector<tuningdb::Record> &records) {
  tuningdb::Device device{"NVIDIA H200", "9.0", 132, 3201000, 0};
  tuningdb::Software software{13000, 130000, "13.0", 0};
  for (const tuningdb::Record &r : records) {
    std::string line = tuningdb::encodeLine(r), error;
    tuningdb::Record again;
    require(tuningdb::decodeLine(line, "written:1", again, error), kTarget,
            "encodeLine's output does not decode: " + error);
    require(tuningdb::encodeLine(again) == line, kTarget,
            "encodeLine(decodeLine(encodeLine(r))) differs from encodeLine(r)");
    (void)tuningdb::key(r);
    (void)tuningdb::describeCandidate(r);
    (void)tuningdb::mismatch(r, device, software);
    require(tuningdb::codegenVersion(r.kind, r.signature) > 0, kTarget,
            "a record's family has no codegen version: " + r.signature);
    dmrt::ConfigKernel k;
    if (r.kind == tuningdb::Kind::Kernel && tuningdb::configKnobs(r, k))
      for (const auto &[name, value] : tuningdb::recordKnobs(k)) {
        auto it = r.knobs.find(name);
        require(it != r.knobs.end() && it->second == value, kTarget,
                "knob " + name + " changed in a conversion to config.json's form and back");
      }
  }
  (void)tuningdb::match(records, device, software);
}

} // namespace

int runTuningDb(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size), error;
  std::vector<tuningdb::Record> records;
  std::vector<std::string> warnings;
  if (tuningdb::parseDatabase(text, "fuzz.jsonl", records, error, warnings))
    checkRecords(records);
  else
    requireNamed(error, "fuzz.jsonl", kTarget);

  records.clear();
  error.clear();
  if (tuningdb::decodeExport(text, "fuzz-export.json", records, error))
    checkRecords(records);
  else
    requireNamed(error, "fuzz-export.json", kTarget);
  return 0;
}

} // namespace dmc::fuzz
