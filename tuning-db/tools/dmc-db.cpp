//===- dmc-db.cpp - Inspect and maintain tuning databases -----------------===//
//
//   dmc-db show DB [--signature S] [--device NAME]
//   dmc-db merge OUT IN...
//   dmc-db prune DB [--keep-best N] [--device NAME] [--older-than DATE] [--rejected]
//                   [--signature S [--knob K=V]]
//   dmc-db export DB [-o FILE]
//   dmc-db import DB BENCH.json --bundle DIR
//
// Exit: 0 ok; 1 a data or file error (naming FILE:LINE); 2 a usage error.
// docs/tuning-db-format.md describes the format and the commands.
//
//===----------------------------------------------------------------------===//
#include "tuning-db/BenchImport.h"
#include "tuning-db/Codec.h"
#include "tuning-db/Database.h"
#include "tuning-db/Problem.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

using namespace dmc::tuningdb;

namespace {

const char *kUsage =
    "usage: dmc-db show DB [--signature S] [--device NAME]\n"
    "       dmc-db merge OUT IN...\n"
    "       dmc-db prune DB [--keep-best N] [--device NAME] [--older-than DATE] [--rejected]\n"
    "                       [--signature S [--knob K=V]]\n"
    "                       [--stale-codegen]\n"
    "       dmc-db export DB [-o FILE]\n"
    "       dmc-db import DB BENCH.json --bundle DIR\n"
    "       dmc-db step DIR\n"
    "Tuning databases (JSON Lines, docs/tuning-db-format.md). `dmc-db COMMAND --help`\n"
    "describes a command. Exit: 0 ok, 1 data or file error, 2 usage error.\n";

const std::map<std::string, const char *> kHelp = {
    {"show", "usage: dmc-db show DB [--signature S] [--device NAME]\n"
             "One row per problem (device, software, kind, signature, sizes, dtype): the\n"
             "number of records, the best median and its candidate; then the totals.\n"},
    {"merge", "usage: dmc-db merge OUT IN...\n"
              "Adds the records of every IN to OUT (created if missing), one per key: of two\n"
              "records with one key, the one with more samples, then the lower median.\n"},
    {"prune", "usage: dmc-db prune DB [--keep-best N] [--device NAME] [--older-than DATE]\n"
              "                       [--rejected] [--stale-codegen] [--signature S [--knob K=V]]\n"
              "Removes the records of device NAME, those measured before DATE (YYYY-MM-DD or\n"
              "YYYY-MM-DDTHH:MM:SSZ), those the tuner rejected, those of a codegen version\n"
              "other than this dmc's (never matched again), those of signature S (with\n"
              "--knob: only those whose knob K is V, e.g. wgmma=1: the candidates one code\n"
              "change made stale), and all but the N fastest of each problem (rejected ones\n"
              "are left to --rejected). Rewrites DB atomically.\n"},
    {"export", "usage: dmc-db export DB [-o FILE]\n"
               "Writes {\"format\":\"dmc-tuning-export\",\"version\":1,\"records\":[...]} to FILE\n"
               "or standard output, for review.\n"},
    {"import", "usage: dmc-db import DB BENCH.json --bundle DIR\n"
               "Appends the measurements of a `dmrt-bench DIR --reference --json BENCH.json`\n"
               "run to DB (created if missing): a record per checked kernel (its knobs from\n"
               "DIR/config.json) and contraction; steps whose check failed are recorded as\n"
               "rejected, unchecked steps not at all; records already in DB are skipped.\n"},
    {"step", "usage: dmc-db step DIR\n"
             "Prints the key a `step` record of the bundle DIR's whole step has (what\n"
             "`dmc-run DIR --bench --record DB` appends and `dmc compile --db` looks up for\n"
             "the default configuration) as one JSON object: kind, signature, sizes, dtype,\n"
             "and the NVRTC and codegen versions the record must carry.\n"}};

int usage(const std::string &cmd, const std::string &msg) {
  auto it = kHelp.find(cmd);
  std::fprintf(stderr, "dmc-db: %s\n%s", msg.c_str(), it == kHelp.end() ? kUsage : it->second);
  return 2;
}

int dataError(const std::string &msg) {
  std::fprintf(stderr, "dmc-db: %s\n", msg.c_str());
  return 1;
}

void warn(const std::vector<std::string> &warnings) {
  for (const std::string &w : warnings)
    std::fprintf(stderr, "dmc-db: warning: %s\n", w.c_str());
}

/// Loads a database, printing its warnings; false (the error printed) when it
/// cannot be read.
bool loadDb(const std::string &path, bool missingIsEmpty, Database &db) {
  std::string error;
  std::vector<std::string> warnings;
  bool ok = db.load(path, missingIsEmpty, error, warnings);
  warn(warnings);
  if (!ok)
    dataError(error);
  return ok;
}

/// The command's arguments: positionals, and options taking a value or not.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
};

/// 0 when parsed (or -1 after --help), else 2 with the usage printed.
int parseArgs(const std::string &cmd, int argc, char **argv, const std::vector<std::string> &valued,
              const std::vector<std::string> &flags, Args &a) {
  for (int i = 2; i < argc; ++i) {
    std::string s = argv[i];
    bool hasValue = std::find(valued.begin(), valued.end(), s) != valued.end();
    if (s == "-h" || s == "--help") {
      std::printf("%s", kHelp.at(cmd));
      return -1;
    } else if (hasValue) {
      if (i + 1 >= argc)
        return usage(cmd, s + " needs a value");
      a.options[s] = argv[++i];
    } else if (std::find(flags.begin(), flags.end(), s) != flags.end()) {
      a.options[s] = "";
    } else if (s.size() > 1 && s[0] == '-') {
      return usage(cmd, "unknown option " + s + " for " + cmd);
    } else {
      a.positional.push_back(s);
    }
  }
  return 0;
}

std::string deviceName(const Record &r) { return r.device.name + " " + r.device.cc; }

std::string sizesText(const Record &r) {
  std::string s;
  for (const auto &[dim, extent] : r.sizes)
    s += (s.empty() ? "" : " ") + dim + "=" + std::to_string(extent);
  return s;
}

void printTable(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      width.resize(std::max(width.size(), c + 1));
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto &row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += c + 1 == row.size() ? row[c] : row[c] + std::string(width[c] - row[c].size() + 2, ' ');
    std::printf("%s\n", line.c_str());
  }
}

int show(const Args &a) {
  if (a.positional.size() != 1)
    return usage("show", "show takes one database");
  Database db;
  if (!loadDb(a.positional[0], /*missingIsEmpty=*/false, db))
    return 1;
  auto sig = a.options.find("--signature"), dev = a.options.find("--device");
  struct Group { size_t records = 0, rejected = 0; const Record *first = nullptr, *best = nullptr; };
  std::vector<Group> groups;
  std::unordered_map<std::string, size_t> index;
  std::map<std::string, size_t> devices;
  size_t total = 0, rejected = 0;
  for (const Record &r : db.records()) {
    if ((sig != a.options.end() && r.signature != sig->second) ||
        (dev != a.options.end() && r.device.name != dev->second))
      continue;
    auto [it, added] = index.emplace(problemKey(r), groups.size());
    if (added)
      groups.push_back({0, 0, &r, nullptr});
    Group &g = groups[it->second];
    ++g.records, ++total, ++devices[deviceName(r)];
    if (r.rejected)
      ++g.rejected, ++rejected;
    else if (!g.best || r.medianUs < g.best->medianUs)
      g.best = &r;
  }
  std::vector<std::vector<std::string>> rows = {
      {"KIND", "RECORDS", "BEST_US", "DEVICE", "SIGNATURE", "SIZES", "DTYPE", "BEST CANDIDATE"}};
  for (const Group &g : groups) {
    const Record &r = *g.first;
    char best[32] = "-";
    if (g.best)
      std::snprintf(best, sizeof best, "%.2f", g.best->medianUs);
    rows.push_back({kindName(r.kind),
                    std::to_string(g.records) +
                        (g.rejected ? " (" + std::to_string(g.rejected) + " rejected)" : ""),
                    best, deviceName(r), r.signature, sizesText(r), r.dtype,
                    g.best ? describeCandidate(*g.best) : "(every record rejected)"});
  }
  printTable(rows);
  std::string devs;
  for (const auto &[name, n] : devices)
    devs += (devs.empty() ? "" : ", ") + name + " (" + std::to_string(n) + ")";
  std::printf("%zu records (%zu rejected by the tuner) in %zu problems; devices: %s\n", total,
              rejected, groups.size(), devs.empty() ? "none" : devs.c_str());
  return 0;
}

int merge(const Args &a) {
  if (a.positional.size() < 2)
    return usage("merge", "merge takes OUT and at least one IN");
  std::vector<Database> inputs(a.positional.size() - 1);
  std::string error;
  std::vector<std::string> warnings;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].load(a.positional[i + 1], false, error, warnings))
      return warn(warnings), dataError(error);
  size_t added = 0, duplicate = 0, replaced = 0, total = 0;
  Edit edit = [&](std::vector<Record> &records, std::string &) {
    std::vector<Record> out;
    std::unordered_map<std::string, size_t> index;
    auto take = [&](const Record &r, bool counted) {
      auto [it, isNew] = index.emplace(key(r), out.size());
      if (isNew)
        out.push_back(r);
      else if (better(r, out[it->second]))
        out[it->second] = r, replaced += counted;
      (isNew ? added : duplicate) += counted;
    };
    for (const Record &r : records)
      take(r, false);
    for (const Database &db : inputs)
      for (const Record &r : db.records())
        take(r, true);
    records = std::move(out);
    total = records.size();
    return true;
  };
  bool ok = rewrite(a.positional[0], true, edit, error, warnings);
  warn(warnings);
  if (!ok)
    return dataError(error);
  std::printf("dmc-db: merged %zu records from %zu files into %s: %zu new, %zu duplicate (%zu of "
              "them replaced a record with fewer samples or a higher median); %zu records\n",
              added + duplicate, inputs.size(), a.positional[0].c_str(), added, duplicate,
              replaced, total);
  return 0;
}

int prune(const Args &a) {
  if (a.positional.size() != 1)
    return usage("prune", "prune takes one database");
  auto opt = [&](const char *name) {
    auto it = a.options.find(name);
    return it == a.options.end() ? nullptr : &it->second;
  };
  const std::string *keep = opt("--keep-best"), *device = opt("--device"),
                    *older = opt("--older-than");
  bool dropRejected = opt("--rejected"), dropStale = opt("--stale-codegen");
  const std::string *signature = opt("--signature"), *knob = opt("--knob");
  std::string knobName, knobValue;
  if (knob) {
    const size_t eq = knob->find('=');
    if (!signature)
      return usage("prune", "--knob needs --signature: the knob of which kernel's records");
    if (eq == std::string::npos || eq == 0)
      return usage("prune", "--knob needs NAME=VALUE (e.g. wgmma=1), got \"" + *knob + "\"");
    knobName = knob->substr(0, eq);
    knobValue = knob->substr(eq + 1);
  }
  // Whether r is of the signature given and (with --knob) has that knob value.
  auto selected = [&](const Record &r) {
    if (!signature || r.signature != *signature)
      return false;
    if (!knob)
      return true;
    auto it = r.knobs.find(knobName);
    if (it == r.knobs.end())
      return false;
    const std::string value = std::holds_alternative<int64_t>(it->second)
                                  ? std::to_string(std::get<int64_t>(it->second))
                                  : std::get<std::string>(it->second);
    return value == knobValue;
  };
  long long keepBest = 0;
  if (keep) {
    char *end = nullptr;
    keepBest = std::strtoll(keep->c_str(), &end, 10);
    if (keep->empty() || *end || keepBest < 1 || keepBest > 1000000)
      return usage("prune", "--keep-best needs an integer in [1, 1000000], got \"" + *keep + "\"");
  }
  if (older && !validDate(*older) && !validDate(*older + "T00:00:00Z"))
    return usage("prune", "--older-than needs YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, got \"" +
                              *older + "\"");
  if (!keep && !device && !older && !dropRejected && !dropStale && !signature)
    return usage("prune", "nothing to prune: give --keep-best, --device, --older-than, "
                          "--rejected, --stale-codegen or --signature");
  size_t byDevice = 0, byDate = 0, byStatus = 0, byCodegen = 0, bySelection = 0, byRank = 0,
         left = 0;
  Edit edit = [&](std::vector<Record> &records, std::string &) {
    std::vector<Record> kept;
    for (Record &r : records) {
      // Dates of one shape compare as strings; "2024-05-01" sorts before that day's times.
      bool drop = (device && r.device.name == *device && ++byDevice) ||
                  (older && r.date < *older && ++byDate) || (dropRejected && r.rejected && ++byStatus) ||
                  (dropStale && r.software.codegen != codegenVersion(r.kind, r.signature) &&
                   ++byCodegen) ||
                  (selected(r) && ++bySelection);
      if (!drop)
        kept.push_back(std::move(r));
    }
    if (keep) { // the N fastest ok records of each problem, ties in file order
      std::unordered_map<std::string, std::vector<size_t>> byProblem;
      for (size_t i = 0; i < kept.size(); ++i)
        if (!kept[i].rejected)
          byProblem[problemKey(kept[i])].push_back(i);
      std::vector<bool> beyond(kept.size());
      for (auto &[k, idx] : byProblem) {
        std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
          return kept[x].medianUs < kept[y].medianUs;
        });
        for (size_t j = (size_t)keepBest; j < idx.size(); ++j)
          beyond[idx[j]] = true, ++byRank;
      }
      std::vector<Record> best;
      for (size_t i = 0; i < kept.size(); ++i)
        if (!beyond[i])
          best.push_back(std::move(kept[i]));
      kept = std::move(best);
    }
    records = std::move(kept);
    left = records.size();
    return true;
  };
  std::string error;
  std::vector<std::string> warnings;
  bool ok = rewrite(a.positional[0], false, edit, error, warnings);
  warn(warnings);
  if (!ok)
    return dataError(error);
  std::string why;
  auto part = [&](bool on, size_t n, const std::string &what) {
    if (on)
      why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  part(device, byDevice, "of device " + (device ? *device : ""));
  part(older, byDate, "older than " + (older ? *older : ""));
  part(dropRejected, byStatus, "rejected by the tuner");
  part(dropStale, byCodegen,
       "of another codegen version than their family's (" + describeCodegenVersions() + ")");
  part(signature, bySelection,
       "of " + (signature ? *signature : "") + (knob ? " with " + *knob : ""));
  part(keep, byRank, "beyond the best " + std::to_string(keepBest) + " of their problem");
  std::printf("dmc-db: pruned %s: removed %zu records (%s); %zu left\n", a.positional[0].c_str(),
              byDevice + byDate + byStatus + byCodegen + bySelection + byRank, why.c_str(), left);
  return 0;
}

int exportDb(const Args &a) {
  if (a.positional.size() != 1)
    return usage("export", "export takes one database");
  Database db;
  if (!loadDb(a.positional[0], /*missingIsEmpty=*/false, db))
    return 1;
  std::string text = encodeExport(db.records());
  auto out = a.options.find("-o");
  if (out == a.options.end())
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() ? 0 : 1;
  FILE *f = std::fopen(out->second.c_str(), "wb");
  bool written = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f && std::fclose(f) != 0)
    written = false;
  if (!written)
    return dataError(out->second + ": cannot write: " + std::strerror(errno));
  return 0;
}

int import(const Args &a) {
  auto bundle = a.options.find("--bundle");
  if (a.positional.size() != 2 || bundle == a.options.end())
    return usage("import", "import takes a database, a dmrt-bench JSON file and --bundle DIR");
  std::string line, error;
  std::vector<std::string> warnings;
  bool ok = importRun(a.positional[0], a.positional[1], bundle->second, line, error, warnings);
  warn(warnings);
  if (!ok)
    return dataError(error);
  std::printf("dmc-db: %s\n", line.c_str());
  return 0;
}

int step(const Args &a) {
  if (a.positional.size() != 1)
    return usage("step", "step takes one bundle directory");
  dmrt::Manifest manifest;
  dmrt::Configuration config;
  std::string error;
  if (!readBundleFiles(a.positional[0], manifest, config, error))
    return dataError(error);
  Problem p = stepProblem(manifest);
  Record r;
  fillProblem(p, r);
  r.software.nvrtc = manifest.nvrtc;
  r.software.codegen = codegenVersion(r.kind, r.signature);
  std::string sizes;
  for (const auto &[dim, n] : r.sizes)
    sizes += (sizes.empty() ? "" : ",") + ("\"" + dim + "\":" + std::to_string(n));
  std::printf("{\"kind\":\"step\",\"signature\":\"%s\",\"sizes\":{%s},\"dtype\":\"%s\","
              "\"nvrtc\":\"%s\",\"codegen\":%lld}\n",
              r.signature.c_str(), sizes.c_str(), r.dtype.c_str(), r.software.nvrtc.c_str(),
              (long long)r.software.codegen);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usage("", "no command given");
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help")
    return std::printf("%s", kUsage), 0;
  Args a;
  int rc;
  if (cmd == "show")
    rc = parseArgs(cmd, argc, argv, {"--signature", "--device"}, {}, a);
  else if (cmd == "merge")
    rc = parseArgs(cmd, argc, argv, {}, {}, a);
  else if (cmd == "prune")
    rc = parseArgs(cmd, argc, argv,
                   {"--keep-best", "--device", "--older-than", "--signature", "--knob"},
                   {"--rejected", "--stale-codegen"}, a);
  else if (cmd == "export")
    rc = parseArgs(cmd, argc, argv, {"-o"}, {}, a);
  else if (cmd == "import")
    rc = parseArgs(cmd, argc, argv, {"--bundle"}, {}, a);
  else if (cmd == "step")
    rc = parseArgs(cmd, argc, argv, {}, {}, a);
  else
    return usage("", "unknown command \"" + cmd + "\"");
  if (rc)
    return rc < 0 ? 0 : rc;
  if (cmd == "import")
    return import(a);
  if (cmd == "step")
    return step(a);
  return cmd == "show" ? show(a) : cmd == "merge" ? merge(a) : cmd == "prune" ? prune(a) : exportDb(a);
}
