//===- Codec.h - Records as JSON lines and export documents ------*- C++ -*-===//
//
// One record is one compact JSON object on one line, keys in a fixed order,
// starting with "format":"dmc-tuning","version":1. The decoder accepts exactly
// the fields of docs/tuning-db-format.md and checks every value; an error
// reads `FILE:LINE: FIELD.PATH: what was expected, got VALUE`.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_CODEC_H
#define DMC_TUNINGDB_CODEC_H

#include "tuning-db/Record.h"

#include <string>
#include <vector>

namespace dmc::tuningdb {

inline constexpr int64_t kFormatVersion = 1;

/// The record as one line, without the newline.
std::string encodeLine(const Record &);
/// Parses one line; `where` ("FILE:LINE") starts the error message.
bool decodeLine(const std::string &line, const std::string &where, Record &out,
                std::string &error);

/// {"format":"dmc-tuning-export","version":1,"records":[...]}: every record as
/// its line's object, one per line, for review.
std::string encodeExport(const std::vector<Record> &);
bool decodeExport(const std::string &text, const std::string &file, std::vector<Record> &out,
                  std::string &error);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_CODEC_H
