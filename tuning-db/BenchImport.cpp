//===- BenchImport.cpp - Measurements of dmrt-bench as records ------------===//
#include "tuning-db/BenchImport.h"

#include "runtime/format/GemmAlgoConfig.h"
#include "runtime/format/JsonReader.h"
#include "tuning-db/Database.h"
#include "tuning-db/Problem.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

namespace dmc::tuningdb {
namespace {

using dmrt::json;
using dmrt::Reader;

bool readDevice(Reader &r, const json &root, Device &d, int64_t &cuda, int64_t &cublaslt) {
  const json *dev;
  if (!r.field(root, "", "device", dev))
    return false;
  const char *newer = "a dmrt-bench of this dmc version writes it";
  if (!r.str(*dev, "device", "name", d.name) ||
      !r.str(*dev, "device", "compute_capability", d.cc) ||
      !r.integer(*dev, "device", "sm_count", d.sms, 1) ||
      !r.integer(*dev, "device", "l2_bytes", d.l2Bytes, 0) ||
      !r.integer(*dev, "device", "runtime_version", cuda, 1))
    return false;
  if (!dev->contains("mem_clock_khz") || !dev->contains("cublaslt_version"))
    return r.fail("device", std::string("no mem_clock_khz / cublaslt_version (") + newer + ")");
  return r.integer(*dev, "device", "mem_clock_khz", d.memClockKhz, 0) &&
         r.integer(*dev, "device", "cublaslt_version", cublaslt, 1);
}

const dmrt::ConfigKernel *knobsOf(const dmrt::Configuration &c, const std::string &entry) {
  for (const dmrt::ConfigKernel &k : c.kernels)
    if (k.name == entry)
      return &k;
  return nullptr;
}

/// Why a step that ran is rejected ("" when it passed its check).
std::string rejection(const json &step) {
  if (step.contains("error") && step["error"].is_string())
    return "failed to run: " + step["error"].get<std::string>();
  if (step.value("pass", true))
    return "";
  std::string why = "output differs from the reference";
  if (step.contains("outputs") && step["outputs"].is_array())
    for (const json &o : step["outputs"])
      if (o.is_object() && !o.value("pass", true))
        return why + " (" + o.value("output", std::string("?")) + ": " +
               std::to_string(o.value("failing", 0)) + " elements out of bound)";
  return why;
}

/// The records of a contraction's algorithm sweep (`algorithm_runs` of step
/// `s` at `path`): one per algorithm, `base` (problem, device, software,
/// date) with its serialized algorithm; an entry of the heuristic's list
/// has knob `heuristic_rank` (rank 0 is the default configuration's
/// algorithm). An entry that did not run or failed its check is rejected;
/// every entry is when the step itself failed its reference check
/// (`stepRejection`), whose outputs the entries may have been compared with.
bool importRuns(Reader &r, const json &s, const std::string &path, const Record &base,
                const std::string &stepRejection, ImportResult &out) {
  const json *runs;
  int64_t reps = 0;
  if (!r.array(s, path, "algorithm_runs", runs) ||
      !r.integer(s, path, "algorithm_reps", reps, 1))
    return false;
  for (size_t i = 0; i < runs->size(); ++i) {
    const json &a = (*runs)[i];
    std::string p = Reader::index(Reader::join(path, "algorithm_runs"), i), source, why;
    Record rec = base;
    bool checked = false, pass = false;
    if (!r.str(a, p, "algorithm", rec.algorithm) || !r.str(a, p, "source", source) ||
        !r.boolean(a, p, "checked", checked) || !r.boolean(a, p, "pass", pass))
      return false;
    dmrt::GemmAlgoConfig parsed;
    std::string bad;
    if (!dmrt::parseAlgorithm(rec.algorithm, parsed, bad))
      return r.fail(Reader::join(p, "algorithm"), bad);
    if (source == "heuristic") {
      int64_t rank = 0;
      if (!r.integer(a, p, "heuristic_rank", rank, 0))
        return false;
      rec.knobs["heuristic_rank"] = rank;
    } else if (source != "enumerated") {
      return r.fail(Reader::join(p, "source"),
                    "expected \"heuristic\" or \"enumerated\", got \"" + source + "\"");
    }
    if (a.contains("error") && a["error"].is_string())
      why = a["error"].get<std::string>();
    if (!stepRejection.empty())
      rec.reason = "the step itself was rejected (" + stepRejection + ")";
    else if (!checked)
      rec.reason = why.empty() ? "not checked" : why;
    else if (!pass)
      rec.reason = std::string("output differs from the ") +
                   (s.value("algorithms_checked_against", std::string()) == "default"
                        ? "default configuration's"
                        : "reference") +
                   (why.empty() ? "" : " (" + why + ")");
    rec.rejected = !rec.reason.empty();
    if (!rec.rejected) {
      if (!r.number(a, p, "median_us", rec.medianUs) || !r.number(a, p, "min_us", rec.minUs))
        return false;
      rec.samples = reps;
    }
    (rec.rejected ? out.rejected : out.ok)++;
    out.records.push_back(std::move(rec));
  }
  return true;
}

bool readFile(const std::string &path, std::string &text, std::string &error) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    text.append(buf, n);
  std::fclose(f);
  return true;
}

/// A bundle's manifest and configuration, read from its directory.
bool readBundle(const std::string &bundleDir, dmrt::Manifest &manifest,
                dmrt::Configuration &config, std::string &error) {
  std::string manifestPath = bundleDir + "/manifest.json";
  std::string configPath = bundleDir + "/config.json";
  std::string manifestText, configText;
  return readFile(manifestPath, manifestText, error) &&
         readFile(configPath, configText, error) &&
         dmrt::parseManifest(manifestText, manifestPath, manifest, error) &&
         dmrt::parseConfig(configText, configPath, config, error);
}

/// Whether id `id` is selected by `sel`: "all", "" (none) or a list "3,5".
bool selected(const std::string &sel, int64_t id) {
  if (sel == "all")
    return true;
  for (size_t at = 0; at < sel.size();) {
    size_t comma = std::min(sel.find(',', at), sel.size());
    if (sel.substr(at, comma - at) == std::to_string(id))
      return true;
    at = comma + 1;
  }
  return false;
}

/// The record a run of bundle `m` on `device` with `software` (the run's
/// CUDA and cuBLASLt; NVRTC from the manifest, the codegen version of the
/// record's family this build's) makes
/// of kernel `k` in its knobs, or of contraction `c`: problem, candidate,
/// device and software; times, date and verdict are the caller's.
Record stepRecord(const dmrt::Manifest &m, const Device &device, Software software) {
  Record rec;
  rec.device = device;
  software.nvrtc = m.nvrtc;
  rec.software = software;
  return rec;
}
Record kernelRecord(const dmrt::Manifest &m, const dmrt::BundleKernel &k,
                    const dmrt::ConfigKernel &knobs, const Device &device,
                    const Software &software) {
  Record rec = stepRecord(m, device, software);
  fillProblem(kernelProblem(m, k), rec);
  rec.software.codegen = codegenVersion(rec.kind, rec.signature);
  rec.knobs = recordKnobs(knobs);
  return rec;
}
Record contractionRecord(const dmrt::Manifest &m, const dmrt::BundleContraction &c,
                         const Device &device, const Software &software) {
  Record rec = stepRecord(m, device, software);
  fillProblem(contractionProblem(m, c), rec);
  rec.software.codegen = codegenVersion(rec.kind, rec.signature);
  return rec;
}

} // namespace

std::string ImportResult::summary() const {
  int kernels = 0, contractions = 0;
  for (const Record &r : records)
    (r.kind == Kind::Kernel ? kernels : contractions)++;
  return std::to_string(kernels) + " kernel(s), " + std::to_string(contractions) +
         " contraction(s): " + std::to_string(ok) + " ok, " + std::to_string(rejected) +
         " rejected; " + std::to_string(unchecked) + " step(s) not checked (not recorded)";
}

bool benchDevice(const std::string &file, Record &out, std::string &error) {
  std::string text;
  if (!readFile(file, text, error))
    return false;
  Reader r(file, error);
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return r.fail("", "not a JSON object (expected dmrt-bench's --device-info or --json)");
  out = Record{};
  return readDevice(r, root, out.device, out.software.cuda, out.software.cublaslt);
}

bool importBench(const std::string &benchText, const std::string &benchFile,
                 const dmrt::Manifest &m, const dmrt::Configuration &config,
                 const std::string &date, ImportResult &out, std::string &error) {
  Reader r(benchFile, error);
  json root = json::parse(benchText, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return r.fail("", "not a JSON object (expected the --json file of dmrt-bench)");
  std::string model;
  if (!r.str(root, "", "model", model))
    return false;
  if (model != m.model)
    return r.fail("model", "the run is of model \"" + model + "\", the bundle's is \"" +
                               m.model + "\" (give the bundle that was measured)");
  const json *options, *steps;
  bool referenced = false;
  if (!r.field(root, "", "options", options) ||
      !r.boolean(*options, "options", "reference", referenced))
    return false;
  if (!referenced)
    return r.fail("options.reference", "the run did not check outputs (run dmrt-bench with "
                                       "--reference: the tuner records checked candidates only)");
  if (root.value("planted_fault", std::string("none")) != "none")
    return r.fail("planted_fault", "a run with a planted fault measures nothing");
  Device device;
  Software software;
  if (!readDevice(r, root, device, software.cuda, software.cublaslt))
    return false;
  if (!r.array(root, "", "steps", steps))
    return false;
  out = ImportResult{};
  for (size_t i = 0; i < steps->size(); ++i) {
    const json &s = (*steps)[i];
    std::string path = Reader::index("steps", i), kind;
    int64_t id = 0;
    if (!r.str(s, path, "kind", kind) || !r.integer(s, path, "id", id, 0))
      return false;
    bool unchecked =
        s.contains("skipped") || (!s.contains("error") && !s.value("checked", false));
    // A contraction's algorithm sweep (--algorithms all): every algorithm
    // checked against the reference or the step's own outputs.
    bool sweep = kind == "contraction" && s.contains("algorithm_runs");
    if (unchecked && !sweep) {
      ++out.unchecked;
      continue;
    }
    Record rec;
    if (kind == "kernel") {
      const dmrt::BundleKernel *k = m.kernel(id);
      const dmrt::ConfigKernel *knobs = k ? knobsOf(config, k->entry) : nullptr;
      if (!k || !knobs)
        return r.fail(path, "kernel " + std::to_string(id) +
                                " is not in the bundle's manifest and config.json");
      rec = kernelRecord(m, *k, *knobs, device, software);
    } else if (kind == "contraction") {
      const dmrt::BundleContraction *c = m.contraction(id);
      if (!c)
        return r.fail(path, "contraction " + std::to_string(id) + " is not in the manifest");
      rec = contractionRecord(m, *c, device, software);
      rec.algorithm = "heuristic";
    } else {
      return r.fail(Reader::join(path, "kind"), "expected \"kernel\" or \"contraction\", got \"" +
                                                    kind + "\"");
    }
    rec.date = date;
    std::string stepRejection = rejection(s);
    if (sweep && !importRuns(r, s, path, rec, stepRejection, out))
      return false;
    if (unchecked) {
      ++out.unchecked;
      continue;
    }
    rec.reason = stepRejection;
    rec.rejected = !rec.reason.empty();
    if (!rec.rejected) {
      int64_t reps = 0;
      if (!r.number(s, path, "median_us", rec.medianUs) ||
          !r.number(s, path, "min_us", rec.minUs) || !r.integer(s, path, "reps", reps, 1))
        return false;
      rec.samples = reps;
    }
    (rec.rejected ? out.rejected : out.ok)++;
    out.records.push_back(std::move(rec));
  }
  return true;
}

bool stepsRecorded(const std::string &dbPath, const std::string &bundleDir,
                   const Record &measured, const std::string &kernels,
                   const std::string &contractions, bool sweep, RecordedSteps &out,
                   std::string &error, std::vector<std::string> &warnings) {
  dmrt::Manifest m;
  dmrt::Configuration config;
  Database db;
  if (!readBundle(bundleDir, m, config, error) ||
      !db.load(dbPath, /*missingIsEmpty=*/true, error, warnings))
    return false;
  out = RecordedSteps{};
  auto held = [&](const Record &rec) {
    const Record *old = db.find(key(rec));
    return old && !old->rejected;
  };
  for (const dmrt::BundleKernel &k : m.kernels) {
    if (!selected(kernels, k.id))
      continue;
    // Without knobs importBench rejects the run: left, so the tuner says so.
    const dmrt::ConfigKernel *knobs = knobsOf(config, k.entry);
    bool known = knobs && held(kernelRecord(m, k, *knobs, measured.device, measured.software));
    (known ? out.knownKernels : out.leftKernels).push_back(k.id);
  }
  // A contraction in its layouts and epilogue, whichever algorithm: held
  // with an ok record of any (with `sweep`, of one the sweep measures:
  // records of the step's own run, "heuristic", do not count).
  auto stepKey = [](Record r) {
    r.algorithm.clear();
    r.knobs.clear();
    return key(r);
  };
  std::set<std::string> measuredSteps;
  for (const Record &r : db.records())
    if (r.kind == Kind::Contraction && !r.rejected && (!sweep || r.algorithm != "heuristic"))
      measuredSteps.insert(stepKey(r));
  for (const dmrt::BundleContraction &c : m.contractions) {
    if (!c.mappable || !selected(contractions, c.id))
      continue;
    Record rec = contractionRecord(m, c, measured.device, measured.software);
    (measuredSteps.count(stepKey(rec)) ? out.knownContractions : out.leftContractions)
        .push_back(c.id);
  }
  return true;
}

bool readBundleFiles(const std::string &bundleDir, dmrt::Manifest &manifest,
                     dmrt::Configuration &config, std::string &error) {
  return readBundle(bundleDir, manifest, config, error);
}

bool importRun(const std::string &dbPath, const std::string &benchPath,
               const std::string &bundleDir, std::string &line, std::string &error,
               std::vector<std::string> &warnings, std::vector<Record> *imported) {
  std::string benchText;
  dmrt::Manifest manifest;
  dmrt::Configuration config;
  if (!readBundle(bundleDir, manifest, config, error) || !readFile(benchPath, benchText, error))
    return false;
  ImportResult result;
  if (!importBench(benchText, benchPath, manifest, config, utcNow(), result, error))
    return false;
  Database db;
  if (!db.load(dbPath, /*missingIsEmpty=*/true, error, warnings))
    return false;
  int added = 0, present = 0;
  for (const Record &r : result.records) {
    const Record *old = db.find(key(r));
    if (old && !old->rejected) {
      ++present;
      continue;
    }
    if (!append(dbPath, r, /*sync=*/false, error, warnings))
      return false;
    db.add(r);
    ++added;
  }
  line = benchPath + ": " + result.summary() + "; " + std::to_string(added) + " appended to " +
         dbPath + ", " + std::to_string(present) + " already there";
  if (imported)
    *imported = std::move(result.records);
  return true;
}

} // namespace dmc::tuningdb
