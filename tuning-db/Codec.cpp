//===- Codec.cpp - Record <-> JSON, every value checked -------------------===//
#include "tuning-db/Codec.h"

#include "runtime/format/DType.h"
#include "runtime/format/JsonReader.h"

#include <climits>
#include <set>

namespace dmc::tuningdb {
namespace {

using dmrt::json;
using dmrt::Reader;
using ojson = nlohmann::ordered_json;

ojson toJson(const Record &r) {
  ojson knobs = ojson::object();
  for (const auto &[name, value] : r.knobs)
    if (const int64_t *i = std::get_if<int64_t>(&value))
      knobs[name] = *i;
    else
      knobs[name] = std::get<std::string>(value);
  ojson sizes = ojson::object();
  for (const auto &[dim, extent] : r.sizes)
    sizes[dim] = extent;
  const Device &d = r.device;
  const Software &s = r.software;
  ojson o = {{"format", "dmc-tuning"}, {"version", kFormatVersion},
             {"device", {{"name", d.name}, {"cc", d.cc}, {"sms", d.sms},
                         {"mem_clock_khz", d.memClockKhz}, {"l2_bytes", d.l2Bytes}}},
             {"software", {{"cuda", s.cuda}, {"cublaslt", s.cublaslt}, {"nvrtc", s.nvrtc},
                           {"codegen", s.codegen}}},
             {"kind", kindName(r.kind)}, {"signature", r.signature}, {"sizes", sizes},
             {"dtype", r.dtype}, {"layouts", r.layouts}, {"knobs", knobs},
             {"algorithm", r.algorithm}, {"epilogue", r.epilogue},
             {"median_us", r.medianUs}, {"min_us", r.minUs}, {"samples", r.samples},
             {"date", r.date}, {"status", r.rejected ? "rejected" : "ok"}};
  if (r.rejected)
    o["reason"] = r.reason;
  return o;
}

bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
/// Quoted for a message; the text may be any bytes (a corrupt line), so
/// invalid UTF-8 is replaced, not thrown on.
std::string jsonText(const std::string &s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Reader::object, with the allowed fields named in the message.
bool fields(Reader &r, std::string &error, const json &o, const std::string &p,
            std::initializer_list<const char *> allowed) {
  if (r.object(o, p, allowed))
    return true;
  if (o.is_object()) {
    std::string list;
    for (const char *a : allowed)
      list += (list.empty() ? "" : ", ") + std::string(a);
    error += " (allowed: " + list + ")";
  }
  return false;
}

/// A string field matching `ok`, else "expected WHAT, got VALUE".
template <typename Pred>
bool checked(Reader &r, const json &o, const std::string &p, const char *key, std::string &out,
             const char *what, Pred ok) {
  if (!r.str(o, p, key, out))
    return false;
  return ok(out) || r.fail(Reader::join(p, key),
                           std::string("expected ") + what + ", got " + jsonText(out));
}

std::string allDTypes() {
  std::string s = "one of";
  for (dmrt::DType t : dmrt::kAllDTypes)
    s += std::string(s.size() > 6 ? ", " : " ") + jsonText(dmrt::dtypeName(t));
  return s;
}

bool versionString(const std::string &s) { // "MAJOR.MINOR"
  size_t dot = s.find('.');
  auto digits = [](const std::string &t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  };
  return dot != std::string::npos && digits(s.substr(0, dot)) && digits(s.substr(dot + 1));
}

bool decodeDevice(Reader &r, std::string &e, const json &o, const std::string &p, Device &d) {
  auto nonEmpty = [](const std::string &s) { return !s.empty(); };
  return fields(r, e, o, p, {"name", "cc", "sms", "mem_clock_khz", "l2_bytes"}) &&
         checked(r, o, p, "name", d.name, "a non-empty device name", nonEmpty) &&
         checked(r, o, p, "cc", d.cc, "a compute capability \"MAJOR.MINOR\"", versionString) &&
         r.integer(o, p, "sms", d.sms, 1) && r.integer(o, p, "mem_clock_khz", d.memClockKhz, 1) &&
         r.integer(o, p, "l2_bytes", d.l2Bytes, 1);
}

bool decodeSoftware(Reader &r, std::string &e, const json &o, const std::string &p,
                    Software &s) {
  return fields(r, e, o, p, {"cuda", "cublaslt", "nvrtc", "codegen"}) &&
         r.integer(o, p, "cuda", s.cuda, 1) && r.integer(o, p, "cublaslt", s.cublaslt, 1) &&
         checked(r, o, p, "nvrtc", s.nvrtc, "an NVRTC version \"MAJOR.MINOR\"", versionString) &&
         r.integer(o, p, "codegen", s.codegen, 1);
}

bool decodeSizes(Reader &r, const json &o, const std::string &p, Record &rec) {
  const json *v;
  std::string path = Reader::join(p, "sizes");
  if (!r.field(o, p, "sizes", v))
    return false;
  if (!v->is_object() || v->empty())
    return r.fail(path, "expected an object of dimension letter -> extent, got " +
                            dmrt::describeValue(*v));
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it.key().size() != 1 || !isLetter(it.key()[0]))
      return r.fail(path, "expected a dimension letter (a-z, A-Z) as key, got " +
                              jsonText(it.key()));
    if (!r.integer(*it, Reader::join(path, it.key()), rec.sizes[it.key()], 1))
      return false;
  }
  return true;
}

bool decodeLayouts(Reader &r, const json &o, const std::string &p, Record &rec) {
  const json *v;
  std::string path = Reader::join(p, "layouts");
  if (!r.array(o, p, "layouts", v))
    return false;
  for (size_t i = 0; i < v->size(); ++i) {
    const json &l = (*v)[i];
    std::set<char> seen;
    bool ok = l.is_string() && !l.get<std::string>().empty();
    for (char c : ok ? l.get<std::string>() : std::string())
      ok &= isLetter(c) && rec.sizes.count(std::string(1, c)) && seen.insert(c).second;
    if (!ok)
      return r.fail(Reader::index(path, i),
                    "expected dimension letters of sizes, each once (e.g. \"bjk\"), got " +
                        dmrt::describeValue(l));
    rec.layouts.push_back(l.get<std::string>());
  }
  return true;
}

bool decodeKnobs(Reader &r, const json &o, const std::string &p, Record &rec) {
  const json *v;
  std::string path = Reader::join(p, "knobs");
  if (!r.field(o, p, "knobs", v))
    return false;
  if (!v->is_object())
    return r.fail(path, "expected an object of knob -> integer or string, got " +
                            dmrt::describeValue(*v));
  for (auto it = v->begin(); it != v->end(); ++it) {
    int64_t i;
    if (it->is_string())
      rec.knobs[it.key()] = it->get<std::string>();
    else if (r.integer(*it, Reader::join(path, it.key()), i, INT64_MIN,
                       "an integer or a string"))
      rec.knobs[it.key()] = i;
    else
      return false;
  }
  return true;
}

bool decodeTimes(Reader &r, const json &o, const std::string &p, Record &rec) {
  // A rejected candidate may not have run at all: zero samples and times.
  double least = rec.rejected ? 0 : 1e-300;
  const char *positive = rec.rejected ? "a number >= 0" : "a number > 0";
  if (!r.number(o, p, "median_us", rec.medianUs) || !r.number(o, p, "min_us", rec.minUs) ||
      !r.integer(o, p, "samples", rec.samples, rec.rejected ? 0 : 1))
    return false;
  using Field = std::pair<const char *, double>;
  for (auto [key, value] : {Field{"median_us", rec.medianUs}, Field{"min_us", rec.minUs}})
    if (value < least)
      return r.fail(Reader::join(p, key),
                    std::string("expected ") + positive + ", got " + json(value).dump());
  if (rec.minUs > rec.medianUs)
    return r.fail(Reader::join(p, "min_us"), "expected at most median_us (" +
                                                 json(rec.medianUs).dump() + "), got " +
                                                 json(rec.minUs).dump());
  return true;
}

bool decodeRecord(Reader &r, std::string &e, const json &o, const std::string &p,
                  Record &rec) {
  if (!fields(r, e, o, p,
              {"format", "version", "device", "software", "kind", "signature", "sizes",
               "dtype", "layouts", "knobs", "algorithm", "epilogue", "median_us", "min_us",
               "samples", "date", "status", "reason"}))
    return false;
  std::string format, kind, status = "ok";
  int64_t version;
  const json *device, *software;
  dmrt::DType dtype;
  if (!checked(r, o, p, "format", format, "\"dmc-tuning\"",
               [](const std::string &s) { return s == "dmc-tuning"; }) ||
      !r.integer(o, p, "version", version, 0))
    return false;
  if (version != kFormatVersion)
    return r.fail(Reader::join(p, "version"), "expected 1 (this dmc reads version 1), got " +
                                                  std::to_string(version));
  if (!r.field(o, p, "device", device) ||
      !decodeDevice(r, e, *device, Reader::join(p, "device"), rec.device) ||
      !r.field(o, p, "software", software) ||
      !decodeSoftware(r, e, *software, Reader::join(p, "software"), rec.software) ||
      !checked(r, o, p, "kind", kind, "one of \"kernel\", \"contraction\", \"transpose\", \"step\"",
               [&](const std::string &s) { return parseKind(s, rec.kind); }) ||
      !checked(r, o, p, "signature", rec.signature, "a non-empty signature",
               [](const std::string &s) { return !s.empty(); }) ||
      !decodeSizes(r, o, p, rec) ||
      !checked(r, o, p, "dtype", rec.dtype,
               allDTypes().c_str(),
               [&](const std::string &s) { return dmrt::parseDType(s, dtype); }) ||
      !decodeLayouts(r, o, p, rec) || !decodeKnobs(r, o, p, rec))
    return false;
  bool contraction = rec.kind == Kind::Contraction;
  if (!checked(r, o, p, "algorithm", rec.algorithm,
               contraction ? "a cuBLASLt algorithm or \"heuristic\" for a contraction"
                           : "\"\" (only contractions have an algorithm)",
               [&](const std::string &s) { return s.empty() != contraction; }) ||
      !checked(r, o, p, "epilogue", rec.epilogue, "\"\" (only contractions have an epilogue)",
               [&](const std::string &s) { return s.empty() || contraction; }))
    return false;
  if (o.contains("status") &&
      !checked(r, o, p, "status", status, "\"ok\" or \"rejected\"",
               [](const std::string &s) { return s == "ok" || s == "rejected"; }))
    return false;
  rec.rejected = status == "rejected";
  if (rec.rejected && !checked(r, o, p, "reason", rec.reason, "a non-empty reason",
                               [](const std::string &s) { return !s.empty(); }))
    return false;
  if (!rec.rejected && o.contains("reason"))
    return r.fail(Reader::join(p, "reason"), "expected no reason for a record with status "
                                             "\"ok\", got " + dmrt::describeValue(o["reason"]));
  return decodeTimes(r, o, p, rec) &&
         checked(r, o, p, "date", rec.date, "an ISO 8601 UTC date \"YYYY-MM-DDTHH:MM:SSZ\"",
                 validDate);
}

} // namespace

std::string encodeLine(const Record &r) {
  return toJson(r).dump(-1, ' ', false, json::error_handler_t::replace);
}

bool decodeLine(const std::string &line, const std::string &where, Record &out,
                std::string &error) {
  out = Record();
  Reader r(where, error);
  json o = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (o.is_discarded())
    return r.fail("", "expected one JSON object, got text that is not JSON: " +
                          jsonText(line.size() > 40 ? line.substr(0, 37) + "..." : line));
  return decodeRecord(r, error, o, "", out);
}

std::string encodeExport(const std::vector<Record> &records) {
  std::string s = "{\"format\":\"dmc-tuning-export\",\"version\":1,\"records\":[";
  for (size_t i = 0; i < records.size(); ++i)
    s += (i ? ",\n  " : "\n  ") + encodeLine(records[i]);
  return s + "\n]}\n";
}

bool decodeExport(const std::string &text, const std::string &file, std::vector<Record> &out,
                  std::string &error) {
  out.clear();
  Reader r(file, error);
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return r.fail("", "expected one JSON document, got text that is not JSON");
  std::string format;
  int64_t version;
  const json *records;
  if (!fields(r, error, root, "", {"format", "version", "records"}) ||
      !r.header(root, "dmc-tuning-export", 1, 1, "this dmc", format, version) ||
      !r.array(root, "", "records", records))
    return false;
  for (size_t i = 0; i < records->size(); ++i) {
    out.emplace_back();
    if (!decodeRecord(r, error, (*records)[i], Reader::index("records", i), out.back()))
      return false;
  }
  return true;
}

} // namespace dmc::tuningdb
