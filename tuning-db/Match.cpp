//===- Match.cpp - Records of this device and software, reasons for others --===//
#include "tuning-db/Match.h"

#include <algorithm>

namespace dmc::tuningdb {

std::string mismatch(const Record &r, const Device &d, const Software &s, bool libraries) {
  const Device &rd = r.device;
  const Software &rs = r.software;
  if (rd.name != d.name || rd.cc != d.cc)
    return "other device (" + rd.name + " " + rd.cc + ")";
  if (rd.sms != d.sms || rd.memClockKhz != d.memClockKhz || rd.l2Bytes != d.l2Bytes)
    return "other configuration of " + rd.name + " (" + std::to_string(rd.sms) + " SMs, " +
           std::to_string(rd.memClockKhz) + " kHz memory clock, " +
           std::to_string(rd.l2Bytes) + " bytes L2)";
  if (libraries && rs.cuda != s.cuda)
    return "other CUDA (" + std::to_string(rs.cuda) + ")";
  if (libraries && rs.cublaslt != s.cublaslt)
    return "other cuBLASLt (" + std::to_string(rs.cublaslt) + ")";
  if (rs.nvrtc != s.nvrtc)
    return "other NVRTC (" + rs.nvrtc + ")";
  if (int64_t now = codegenVersion(r.kind, r.signature); rs.codegen != now)
    return "other codegen version (" + std::to_string(rs.codegen) + " of " +
           kCodegenVersions[size_t(codegenFamily(r.kind, r.signature))].name + ", now " +
           std::to_string(now) + ")";
  return r.rejected ? "rejected by the tuner" : "";
}

MatchResult match(const std::vector<Record> &records, const Device &d, const Software &s,
                  bool libraries) {
  MatchResult m;
  for (const Record &r : records) {
    std::string why = mismatch(r, d, s, libraries);
    if (why.empty()) {
      m.matched.push_back(&r);
    } else {
      ++m.rejected;
      ++m.reasons[why];
    }
  }
  return m;
}

std::string MatchResult::summary() const {
  std::string s = std::to_string(matched.size()) + " matched";
  if (!rejected)
    return s;
  std::vector<std::pair<std::string, size_t>> byCount(reasons.begin(), reasons.end());
  std::stable_sort(byCount.begin(), byCount.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  s += "; " + std::to_string(rejected) + " rejected:";
  for (size_t i = 0; i < byCount.size(); ++i)
    s += (i ? ", " : " ") + std::to_string(byCount[i].second) + " " + byCount[i].first;
  return s;
}

} // namespace dmc::tuningdb
