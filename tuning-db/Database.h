//===- Database.h - A tuning database file (JSON Lines) ----------*- C++ -*-===//
//
// One record per line (tuning-db/Codec.h), appended under flock(LOCK_EX) in one
// write() call, so several tuners (one per GPU of a host) can share a file
// and a killed tuner loses at most the line in flight. Readers take
// flock(LOCK_SH), so they never see a line half written by a live writer.
// A file that a rewrite (prune, merge) replaced while we waited for its lock
// is reopened: every writer writes to the file the path names.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_DATABASE_H
#define DMC_TUNINGDB_DATABASE_H

#include "tuning-db/Record.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dmc::tuningdb {

class Database {
public:
  /// Reads PATH. A missing file is an empty database when `missingIsEmpty`,
  /// else an error. A torn last line is skipped with a warning; any other bad
  /// line is an error naming FILE:LINE.
  bool load(const std::string &path, bool missingIsEmpty, std::string &error,
            std::vector<std::string> &warnings);
  void add(const Record &);
  /// Every record, in file order (duplicates of one key included).
  const std::vector<Record> &records() const { return records_; }
  /// The best record with this key (Record.h's better()), or null.
  const Record *find(const std::string &key) const;

private:
  std::vector<Record> records_;
  std::unordered_map<std::string, size_t> best_;
};

/// Parses the text of a database file named `path` (for messages).
bool parseDatabase(const std::string &text, const std::string &path, std::vector<Record> &out,
                   std::string &error, std::vector<std::string> &warnings);

/// Appends one line to PATH (created if missing) under the exclusive lock. A
/// torn tail left by a killed writer is removed first (with a warning); a
/// complete last record without its newline gets the newline. `sync` fsyncs.
bool append(const std::string &path, const Record &, bool sync, std::string &error,
            std::vector<std::string> &warnings);

/// Replaces PATH under its exclusive lock: `edit` gets the records read from
/// it and leaves those to keep; they are written to a temporary file in the
/// same directory, fsynced and renamed over PATH. A missing PATH is an empty
/// database when `create`, else an error.
using Edit = std::function<bool(std::vector<Record> &records, std::string &error)>;
bool rewrite(const std::string &path, bool create, const Edit &edit, std::string &error,
             std::vector<std::string> &warnings);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_DATABASE_H
