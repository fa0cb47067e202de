//===- dmrt-tune.cpp - Measure candidate bundles into a tuning database ---===//
//
//   dmrt-tune CANDIDATES DB [--time-budget S] [--reps N] [--algorithms N] [--bench PATH]
//             [--resume]
//
// The GPU side of `dmc tune`: every bundle of CANDIDATES (`dmc tune
// --emit-candidates`: default.dmlib first, then c0.dmlib, c1.dmlib, ...) is
// run by dmrt-bench (`--kernel all --reference --json`, a child process, so a
// kernel that faults cannot take the tuner down; default.dmlib also with
// `--contraction all --algorithms all`: its contractions and their cuBLASLt
// algorithms, which every knob candidate bundle shares; a layout candidate
// l<n>_<i>.dmlib only the steps its tune-steps lists, contractions with
// their algorithms), and its
// checked measurements are appended to DB (importRun: failed checks as
// rejected records). One line per bundle: what was recorded, the problems it
// made faster than every bundle before it, elapsed time and the estimate of
// what is left (`dmc-db show DB` then lists the fastest candidate of every
// problem). With
// --time-budget no bundle starts after S seconds (what was measured stays in
// DB). Re-running appends only what DB lacks; with --resume a bundle whose
// run file (BUNDLE.run.json) an earlier run left complete is imported from it
// instead of being measured again. MLIR-free.
//
// Exit: 0 every bundle measured and imported; 1 a bundle failed (the others
// are imported); 2 usage; 77 no GPU (the first dmrt-bench said so).
//
//===----------------------------------------------------------------------===//
#include "tuning-db/BenchImport.h"
#include "tuning-db/Record.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <map>
#include <string>
#include <vector>

using namespace dmc::tuningdb;

namespace {

/// Algorithms measured per contraction by default (--prune-algorithms).
constexpr long kDefaultPrune = 12;

const char *kUsage =
    "usage: dmrt-tune CANDIDATES DB [--time-budget S] [--reps N] [--algorithms N]\n"
    "                 [--prune-algorithms N | --exhaustive]\n"
    "                 [--bench PATH] [--resume]\n"
    "Measures every bundle of CANDIDATES (dmc tune --emit-candidates) with dmrt-bench\n"
    "(checked against its references) and appends the checked measurements to DB.\n"
    "The contractions are measured in default.dmlib and unfused.dmlib (the knob\n"
    "candidates share them) and in the layout candidates l<n>_<i>.dmlib, which are\n"
    "measured only in the steps their tune-steps file lists; each contraction\n"
    "with up to N cuBLASLt algorithms (--algorithms,\n"
    "default 32; 0: the heuristic's alone), every algorithm's output checked before\n"
    "it is recorded. Of those, the heuristic's best and the N - 1 others the analytic\n"
    "cost model prices lowest are measured (--prune-algorithms, default 12; the\n"
    "model's rank correlation and what pruning costs: docs/tuning-db-format.md);\n"
    "--exhaustive measures every one (for studies).\n"
    "--bench: the dmrt-bench to run (default: ../runtime/tools/dmrt-bench from this\n"
    "binary's folder, then dmrt-bench beside it). --resume: a bundle whose run file\n"
    "(BUNDLE.run.json) an interrupted run left complete is imported from it, not\n"
    "measured again. Exit: 0 ok, 1 a bundle failed,\n"
    "2 usage, 77 no GPU.\n";

int usage(const std::string &msg) {
  std::fprintf(stderr, "dmrt-tune: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

std::string folderOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string selfFolder(const char *argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return folderOf(n > 0 ? std::string(buf, size_t(n)) : std::string(argv0));
}

bool isFile(const std::string &p) { return access(p.c_str(), X_OK) == 0; }

/// default.dmlib, unfused.dmlib and apart.dmlib first (in that order), then
/// cN.dmlib by N, then any other bundle by name.
std::vector<std::string> bundlesOf(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".dmlib") == 0)
        names.push_back(n);
    }
    closedir(d);
  }
  auto rank = [](const std::string &n) {
    if (n == "default.dmlib")
      return std::make_pair(-3L, n);
    if (n == "unfused.dmlib")
      return std::make_pair(-2L, n);
    if (n == "apart.dmlib")
      return std::make_pair(-1L, n);
    if (n[0] == 'c' && std::isdigit(static_cast<unsigned char>(n[1])))
      return std::make_pair(std::strtol(n.c_str() + 1, nullptr, 10), n);
    return std::make_pair(1L << 40, n);
  };
  std::sort(names.begin(), names.end(),
            [&](const std::string &a, const std::string &b) { return rank(a) < rank(b); });
  return names;
}

/// A layout candidate's `tune-steps` (docs/bundle-format.md): the steps it
/// changed, "kernels 3,5" and "contractions 1" ("-": none). False when the
/// file is absent (`error` empty) or malformed (`error` says why).
bool readTuneSteps(const std::string &path, std::string &kernels, std::string &contractions,
                   std::string &error) {
  FILE *f = std::fopen(path.c_str(), "r");
  if (!f)
    return false;
  char buf[4096];
  bool gotK = false, gotC = false;
  while (std::fgets(buf, sizeof buf, f)) {
    std::string line = buf;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
      line.pop_back();
    size_t sp = line.find(' ');
    std::string key = line.substr(0, sp), value = sp == std::string::npos ? "" : line.substr(sp + 1);
    bool ok = !value.empty() && value.find_first_not_of("0123456789,-") == std::string::npos;
    if (key == "kernels" && ok && !gotK) {
      kernels = value == "-" ? "" : value;
      gotK = true;
    } else if (key == "contractions" && ok && !gotC) {
      contractions = value == "-" ? "" : value;
      gotC = true;
    } else {
      error = path + ": expected \"kernels LIST\" and \"contractions LIST\" (ids separated by "
              "commas, or -), got \"" + line + "\"";
      break;
    }
  }
  std::fclose(f);
  if (error.empty() && (!gotK || !gotC))
    error = path + ": needs a \"kernels\" and a \"contractions\" line";
  return error.empty();
}

/// The fastest checked candidate of each problem seen in this run, and the
/// problems a bundle made faster ("faster: NAME 252.6 -> 233.3 us (c12.dmlib)").
class BestSoFar {
public:
  std::string update(const std::vector<Record> &records, const std::string &bundle) {
    std::string faster;
    for (const Record &r : records) {
      if (r.rejected)
        continue;
      auto [it, added] = best_.try_emplace(problemKey(r), r.medianUs);
      if (added || r.medianUs >= it->second)
        continue;
      char buf[64];
      std::snprintf(buf, sizeof buf, " %.1f -> %.1f us", it->second, r.medianUs);
      faster += (faster.empty() ? "" : ", ") + opName(r) + buf;
      it->second = r.medianUs;
    }
    return faster.empty() ? "" : "faster: " + faster + " (" + bundle + ")";
  }
  size_t problems() const { return best_.size(); }

private:
  /// "kernel causal_mask_softmax_dropout(bhjk->...)" -> "causal_mask_softmax_dropout".
  static std::string opName(const Record &r) {
    std::string s = r.signature.substr(0, r.signature.find('('));
    size_t space = s.find(' ');
    return space == std::string::npos ? s : s.substr(space + 1);
  }
  std::map<std::string, double> best_;
};

/// Runs `args` with stdout and stderr to `log`; the exit status (-1: not run).
int runChild(const std::vector<std::string> &args, const std::string &log) {
  // The child inherits unflushed stdio buffers; freopen would write ours again.
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), 2) < 0)
      _exit(126);
    std::vector<char *> argv;
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> pos;
  double budget = 0;
  std::string reps = "30", bench;
  long algorithms = 32;
  long prune = kDefaultPrune;
  bool resume = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help")
      return std::printf("%s", kUsage), 0;
    if (a == "--resume") {
      resume = true;
      continue;
    }
    if (a == "--exhaustive") {
      prune = 0;
      continue;
    }
    if (a == "--algorithms" || a == "--prune-algorithms") {
      if (i + 1 >= argc)
        return usage(a + " needs a value");
      std::string v = argv[++i];
      char *end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      long least = a == "--algorithms" ? 0 : 1;
      if (end == v.c_str() || *end || n < least || n > 100000)
        return usage(a + " needs an integer in [" + std::to_string(least) +
                     ", 100000], got \"" + v + "\"");
      (a == "--algorithms" ? algorithms : prune) = n;
      continue;
    }
    if (a == "--time-budget" || a == "--reps" || a == "--bench") {
      if (i + 1 >= argc)
        return usage(a + " needs a value");
      std::string v = argv[++i];
      char *end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (a != "--bench" && (end == v.c_str() || *end || x < 1))
        return usage(a + " needs a number >= 1, got \"" + v + "\"");
      if (a == "--time-budget")
        budget = x;
      else if (a == "--reps")
        reps = v;
      else
        bench = v;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option " + a);
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2)
    return usage("give the candidates folder and the database");
  const std::string &dir = pos[0], &db = pos[1];
  std::vector<std::string> bundles = bundlesOf(dir);
  if (bundles.empty())
    return usage("no *.dmlib in " + dir + " (make them with dmc tune MODEL --emit-candidates " +
                 dir + ")");
  if (bench.empty()) {
    std::string self = selfFolder(argv[0]);
    bench = isFile(self + "/../runtime/tools/dmrt-bench") ? self + "/../runtime/tools/dmrt-bench"
                                                           : self + "/dmrt-bench";
  }
  if (!isFile(bench))
    return usage("no dmrt-bench at " + bench + " (give --bench PATH)");
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int status = 0;
  size_t done = 0, measured = 0;
  BestSoFar best;
  // Imports bundle `name`'s run file into DB and reports it ("  LINE NOTE", the
  // problems it made faster, warnings); false with `error` when it cannot.
  auto import = [&](const std::string &name, const std::string &run, const char *note,
                    std::string &error) {
    std::string line;
    std::vector<std::string> warnings;
    std::vector<Record> records;
    bool ok = importRun(db, run, dir + "/" + name, line, error, warnings, &records);
    if (ok) {
      std::printf("  %s%s\n", line.c_str(), note);
      std::string faster = best.update(records, name);
      if (!faster.empty())
        std::printf("  %s\n", faster.c_str());
    }
    for (const std::string &w : warnings)
      std::fprintf(stderr, "dmrt-tune: warning: %s\n", w.c_str());
    std::fflush(stdout);
    return ok;
  };
  for (const std::string &name : bundles) {
    if (budget > 0 && elapsed() >= budget) {
      std::printf("dmrt-tune: time budget %.0f s reached: %zu of %zu bundle(s) measured\n",
                  budget, done, bundles.size());
      break;
    }
    std::string bundle = dir + "/" + name, run = bundle + ".run.json", log = bundle + ".run.log";
    if (resume && access(run.c_str(), R_OK) == 0) {
      std::string error;
      if (import(name, run, " (resumed: not measured again)", error)) {
        ++done;
        continue;
      }
      std::printf("dmrt-tune: %s: %s; measuring it again\n", name.c_str(), error.c_str());
    }
    std::remove(run.c_str()); // never import an earlier run's file for this one
    // The contractions, with their algorithms, where they differ: default and
    // unfused (the knob candidates share the default's), and a layout
    // candidate's (its tune-steps: only the steps it changed).
    std::string kernels = "all", contractions, stepsError;
    if (name == "default.dmlib" || name == "unfused.dmlib")
      contractions = "all";
    if (!readTuneSteps(bundle + "/tune-steps", kernels, contractions, stepsError) &&
        !stepsError.empty()) {
      std::printf("dmrt-tune: %s\n", stepsError.c_str());
      status = 1;
      ++done;
      continue;
    }
    std::vector<std::string> args = {bench, bundle};
    if (!kernels.empty())
      args.insert(args.end(), {"--kernel", kernels});
    if (!contractions.empty())
      args.insert(args.end(), {"--contraction", contractions});
    args.insert(args.end(), {"--reference", "--reps", reps, "--json", run});
    if (!contractions.empty()) {
      if (algorithms > 0)
        args.insert(args.end(), {"--algorithms", "all", "--max-algorithms",
                                 std::to_string(algorithms)});
      if (algorithms > 0 && prune > 0 && prune < algorithms)
        args.insert(args.end(), {"--prune-algorithms", std::to_string(prune)});
    }
    int rc = runChild(args, log);
    ++done;
    ++measured;
    if (rc == 77) {
      std::fprintf(stderr, "dmrt-tune: no GPU here (dmrt-bench exit 77, see %s): run this on a "
                           "GPU machine\n", log.c_str());
      return 77;
    }
    std::string error;
    if (rc > 1 || rc < 0) { // 1: a check failed; its verdicts are in the run file
      std::printf("dmrt-tune: %s: dmrt-bench exit %d (see %s)\n", name.c_str(), rc, log.c_str());
      status = 1;
    } else if (!import(name, run, "", error)) {
      std::printf("dmrt-tune: %s: %s\n", name.c_str(), error.c_str());
      status = 1;
    }
    double t = elapsed();
    std::printf("dmrt-tune: %zu/%zu %s, %.0f s elapsed, ~%.0f s left\n", done, bundles.size(),
                name.c_str(), t, t / double(measured) * double(bundles.size() - done));
    std::fflush(stdout);
  }
  std::printf("dmrt-tune: %zu problem(s) measured; `dmc-db show %s` lists the fastest "
              "candidate of every problem\n", best.problems(), db.c_str());
  return status;
}
