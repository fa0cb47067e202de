//===- Match.h - Which records apply to this device and software -*- C++ -*-===//
//
// A record measured on another GPU, or with another CUDA, cuBLASLt, NVRTC or
// codegen version, is never used silently: match() sets it aside and counts
// why, so `dmc compile --db` can say "412 matched; 37 rejected: 30 other
// device (NVIDIA H200 9.0), 7 other cuBLASLt (130000)".
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_MATCH_H
#define DMC_TUNINGDB_MATCH_H

#include "tuning-db/Record.h"

#include <map>
#include <string>
#include <vector>

namespace dmc::tuningdb {

struct MatchResult {
  std::vector<const Record *> matched; ///< usable: this device, this software, status ok
  size_t rejected = 0;
  std::map<std::string, size_t> reasons; ///< reason -> count; counts sum to `rejected`
  /// "N matched; M rejected: A reason, B reason" (largest count first).
  std::string summary() const;
};

/// Why `r` does not apply here ("other device (NAME CC)", "other cuBLASLt
/// (130000)", "rejected by the tuner"), or "" when it does. Every device field
/// must be equal, and every software version: a record's time depends on them.
/// `libraries` false leaves out the CUDA runtime and cuBLASLt versions: what
/// a compiler machine checks for kernel records, whose code is the cubin
/// NVRTC and codegen made (the GPU node's libraries are not known there).
std::string mismatch(const Record &r, const Device &, const Software &, bool libraries = true);

MatchResult match(const std::vector<Record> &, const Device &, const Software &,
                  bool libraries = true);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_MATCH_H
