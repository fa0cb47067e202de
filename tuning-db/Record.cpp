//===- Record.cpp - Record identity, ordering and descriptions ------------===//
#include "tuning-db/Record.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>

namespace dmc::tuningdb {
namespace {

using json = nlohmann::json;

json knobsJson(const Record &r) {
  json o = json::object();
  for (const auto &[name, value] : r.knobs)
    if (const int64_t *i = std::get_if<int64_t>(&value))
      o[name] = *i;
    else
      o[name] = std::get<std::string>(value);
  return o;
}

json problem(const Record &r) {
  const Software &s = r.software;
  return json::array({r.device.name, r.device.cc, s.cuda, s.cublaslt, s.nvrtc, s.codegen,
                      kindName(r.kind), r.signature, json(r.sizes), r.dtype});
}

} // namespace

CodegenFamily codegenFamily(Kind kind, const std::string &signature) {
  if (kind == Kind::Contraction)
    return CodegenFamily::Contractions;
  // "kernel NAME(...)": a fused attention kernel is named after its kind.
  const std::string prefix = "kernel ";
  if (signature.compare(0, prefix.size(), prefix) == 0) {
    std::string name = signature.substr(prefix.size(), signature.find('(') - prefix.size());
    for (const CodegenVersion &v : kCodegenVersions)
      if (v.family != CodegenFamily::Kernels && v.family != CodegenFamily::Contractions &&
          name == v.name)
        return v.family;
  }
  return CodegenFamily::Kernels;
}

int64_t codegenVersion(Kind kind, const std::string &signature) {
  if (kind == Kind::Step) {
    int64_t sum = 0;
    for (const CodegenVersion &v : kCodegenVersions)
      sum += v.version;
    return sum;
  }
  CodegenFamily f = codegenFamily(kind, signature);
  for (const CodegenVersion &v : kCodegenVersions)
    if (v.family == f)
      return v.version;
  return 0;
}

std::string describeCodegenVersions() {
  std::string s;
  for (const CodegenVersion &v : kCodegenVersions)
    s += (s.empty() ? "" : ", ") + std::string(v.name) + " " + std::to_string(v.version);
  return s;
}

const char *kindName(Kind k) {
  switch (k) {
  case Kind::Kernel: return "kernel";
  case Kind::Contraction: return "contraction";
  case Kind::Transpose: return "transpose";
  case Kind::Step: return "step";
  }
  return "?";
}

bool parseKind(const std::string &s, Kind &out) {
  for (Kind k : {Kind::Kernel, Kind::Contraction, Kind::Transpose, Kind::Step})
    if (s == kindName(k)) {
      out = k;
      return true;
    }
  return false;
}

// A JSON array: unambiguous whatever the strings contain, and maps dump sorted.
// A whole step's measurement is also keyed by its date: the same step on
// other GPUs of one name takes a few percent more or less (power caps), so
// each is a sample to keep, and dmc compile takes their median.
std::string key(const Record &r) {
  json k = problem(r);
  k.push_back(r.layouts);
  k.push_back(knobsJson(r));
  k.push_back(r.algorithm);
  k.push_back(r.epilogue);
  if (r.kind == Kind::Step)
    k.push_back(r.date);
  return k.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string problemKey(const Record &r) {
  return problem(r).dump(-1, ' ', false, json::error_handler_t::replace);
}

bool better(const Record &a, const Record &b) {
  if (a.rejected != b.rejected)
    return !a.rejected;
  if (a.samples != b.samples)
    return a.samples > b.samples;
  return a.medianUs < b.medianUs;
}

std::string describeCandidate(const Record &r) {
  if (r.kind == Kind::Step)
    return "the whole step, CUDA graphs";
  std::string s = "layouts [";
  for (size_t i = 0; i < r.layouts.size(); ++i)
    s += (i ? ", " : "") + r.layouts[i];
  s += "]";
  if (!r.knobs.empty()) {
    s += " knobs {";
    bool first = true;
    for (const auto &[name, value] : r.knobs) {
      const int64_t *i = std::get_if<int64_t>(&value);
      s += (first ? "" : ", ") + name + "=" +
           (i ? std::to_string(*i) : std::get<std::string>(value));
      first = false;
    }
    s += "}";
  }
  if (!r.algorithm.empty())
    s += " algorithm " + r.algorithm;
  if (!r.epilogue.empty())
    s += " epilogue " + r.epilogue;
  return s;
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool validDate(const std::string &s) {
  const char *shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != 20)
    return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
      return false;
  auto two = [&](size_t at) { return (s[at] - '0') * 10 + (s[at + 1] - '0'); };
  return two(5) >= 1 && two(5) <= 12 && two(8) >= 1 && two(8) <= 31 && two(11) <= 23 &&
         two(14) <= 59 && two(17) <= 60;
}

} // namespace dmc::tuningdb
