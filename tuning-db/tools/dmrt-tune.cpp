//===- dmrt-tune.cpp - Measure candidate bundles into a tuning database ---===//
//
//   dmrt-tune CANDIDATES DB [--time-budget S] [--reps N] [--algorithms N] [--bench PATH]
//             [--resume] [--remeasure] [--devices LIST]
//
// The GPU side of `dmc tune`: every bundle of CANDIDATES (`dmc tune
// --emit-candidates`: default.dmlib first, then c0.dmlib, c1.dmlib, ...) is
// run by dmrt-bench (`--kernel all --reference --json`, a child process, so a
// kernel that faults cannot take the tuner down; default.dmlib also with
// `--contraction all --algorithms all`: its contractions and their cuBLASLt
// algorithms, which every knob candidate bundle shares; a layout candidate
// l<n>_<i>.dmlib only the steps its tune-steps lists, contractions with
// their algorithms), and its checked measurements are appended to DB
// (importRun: failed checks as rejected records; appends hold the file's
// lock). With --devices, one worker per GPU of the host takes the next
// bundle as soon as its last is done (dmrt-bench --device N), all into the
// one DB. One line per bundle: what was recorded, the problems it made
// faster than every bundle before it, elapsed time and the estimate of what
// is left (`dmc-db show DB` then lists the fastest candidate of every
// problem). With --time-budget no bundle starts after S seconds (what was
// measured stays in DB). The steps DB already holds for a device's GPU
// (device and software as `dmrt-bench --device-info` reports them before
// the first bundle, else as the first imported run's records have them;
// stepsRecorded) are left out of its bundles, and a
// bundle left with nothing to measure is not run (--remeasure: every step
// measured); re-running appends only what DB lacks. With --resume a bundle whose run file (BUNDLE.run.json) an earlier
// run left complete is imported from it instead of being measured again.
// MLIR-free.
//
// Exit: 0 every bundle measured and imported; 1 a bundle failed (the others
// are imported); 2 usage; 77 no GPU (a dmrt-bench said so).
//
//===----------------------------------------------------------------------===//
#include "tuning-db/BenchImport.h"
#include "tuning-db/tools/TuneBundles.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace dmc::tuningdb;

namespace {

/// Algorithms measured per contraction by default (--prune-algorithms).
constexpr long kDefaultPrune = 12;

const char *kUsage =
    "usage: dmrt-tune CANDIDATES DB [--time-budget S] [--reps N] [--algorithms N]\n"
    "                 [--prune-algorithms N | --exhaustive]\n"
    "                 [--bench PATH] [--resume] [--remeasure] [--devices LIST]\n"
    "Measures every bundle of CANDIDATES (dmc tune --emit-candidates) with dmrt-bench\n"
    "(checked against its references) and appends the checked measurements to DB.\n"
    "The contractions are measured in default.dmlib and the other paths' bundles\n"
    "(unfused, bgrad, nobgrad, noaddend; apart and the knob candidates\n"
    "share the default's) and in the\n"
    "layout candidates\n"
    "l<n>_<i>.dmlib and t<n>_<i>.dmlib, which are measured only in the steps their\n"
    "tune-steps file lists; each contraction\n"
    "with up to N cuBLASLt algorithms (--algorithms,\n"
    "default 32; 0: the heuristic's alone), every algorithm's output checked before\n"
    "it is recorded. Of those, the heuristic's best and the N - 1 others the analytic\n"
    "cost model prices lowest are measured (--prune-algorithms, default 12; the\n"
    "model's rank correlation and what pruning costs: docs/tuning-db-format.md);\n"
    "--exhaustive measures every one (for studies).\n"
    "--devices 0,1,...: measure on these GPUs of the host in parallel, a bundle at a\n"
    "time each, into the one DB (default: dmrt-bench's device, 0).\n"
    "--bench: the dmrt-bench to run (default: ../runtime/tools/dmrt-bench from this\n"
    "binary's folder, then dmrt-bench beside it). --resume: a bundle whose run file\n"
    "(BUNDLE.run.json) an interrupted run left complete is imported from it, not\n"
    "measured again. Once a bundle of a GPU is imported, a kernel or contraction DB\n"
    "already holds for that GPU (device, CUDA, cuBLASLt, NVRTC, codegen) is not\n"
    "measured again (--remeasure: measure every one). Exit: 0 ok, 1 a bundle failed,\n"
    "2 usage, 77 no GPU.\n";

int usage(const std::string &msg) {
  std::fprintf(stderr, "dmrt-tune: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

struct Options {
  std::string dir, db, reps = "30", bench;
  double budget = 0;
  long algorithms = 32, prune = kDefaultPrune;
  bool resume = false;
  bool remeasure = false; ///< measure kernels DB holds for this GPU again
  std::vector<int> devices; ///< empty: dmrt-bench's default device
};

/// The run's shared state: the next bundle, the counts, the output; every
/// worker (one per device) takes bundles until none is left.
class Tuner {
public:
  Tuner(const Options &o, std::vector<std::string> bundles)
      : o_(o), bundles_(std::move(bundles)), start_(std::chrono::steady_clock::now()) {}

  /// Measures bundles on `device` (-1: dmrt-bench's default) until none is
  /// left, the budget is spent or a dmrt-bench finds no GPU.
  void work(int device) {
    identify(device);
    for (;;) {
      size_t i = next_++;
      if (i >= bundles_.size() || noGpu_)
        return;
      if (o_.budget > 0 && elapsed() >= o_.budget) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!budgetSaid_)
          std::printf("dmrt-tune: time budget %.0f s reached: %zu of %zu bundle(s) measured\n",
                      o_.budget, done_, bundles_.size());
        budgetSaid_ = true;
        return;
      }
      measure(bundles_[i], device);
    }
  }

  int status() const { return noGpu_ ? 77 : status_; }
  size_t problems() const { return best_.problems(); }

private:
  /// The GPU of `device` as `dmrt-bench --device-info` reports it, so that
  /// the first bundle already leaves out what DB holds for it; nothing when
  /// the bench cannot say (no GPU, or a bench without the option: the first
  /// import then tells) or with --remeasure.
  void identify(int device) {
    if (o_.remeasure)
      return;
    const std::string file =
        o_.dir + "/device" + (device >= 0 ? std::to_string(device) : std::string()) + ".json";
    std::vector<std::string> args = {o_.bench, "--device-info", "--json", file};
    if (device >= 0)
      args.insert(args.end(), {"--device", std::to_string(device)});
    Record gpu;
    std::string error;
    bool known = runChild(args, file + ".log") == 0 && benchDevice(file, gpu, error);
    std::remove(file.c_str());
    std::remove((file + ".log").c_str());
    if (!known)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    gpu_.emplace(device, gpu);
    std::printf("dmrt-tune: device %s: %s (%lld SMs, cc %s): what DB holds for it is not "
                "measured again (--remeasure: everything)\n",
                device >= 0 ? std::to_string(device).c_str() : "default",
                gpu.device.name.c_str(), (long long)gpu.device.sms, gpu.device.cc.c_str());
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  /// Imports bundle `name`'s run file into DB and reports it ("  LINE NOTE",
  /// the problems it made faster, warnings); false with `error` when it
  /// cannot. Holds the lock.
  bool import(const std::string &name, const std::string &run, int device, const char *note,
              std::string &error) {
    std::string line;
    std::vector<std::string> warnings;
    std::vector<Record> records;
    bool ok = importRun(o_.db, run, o_.dir + "/" + name, line, error, warnings, &records);
    if (ok && !records.empty())
      gpu_.emplace(device, records.front()); // this GPU's device and software
    if (ok) {
      std::printf("  %s%s\n", line.c_str(), note);
      std::string faster = best_.update(records, name);
      if (!faster.empty())
        std::printf("  %s\n", faster.c_str());
    }
    for (const std::string &w : warnings)
      std::fprintf(stderr, "dmrt-tune: warning: %s\n", w.c_str());
    std::fflush(stdout);
    return ok;
  }

  void measure(const std::string &name, int device) {
    std::string bundle = o_.dir + "/" + name, run = bundle + ".run.json",
                log = bundle + ".run.log";
    if (o_.resume && access(run.c_str(), R_OK) == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      std::string error;
      if (import(name, run, device, " (resumed: not measured again)", error)) {
        ++done_;
        return;
      }
      std::printf("dmrt-tune: %s: %s; measuring it again\n", name.c_str(), error.c_str());
    }
    std::remove(run.c_str()); // never import an earlier run's file for this one
    // The contractions, with their algorithms, where they differ: default
    // and the other paths but apart (whose contractions are the default's,
    // as the knob candidates' are), and a layout candidate's (its
    // tune-steps: only the steps it changed).
    std::string kernels = "all", contractions, stepsError;
    if (name == "default.dmlib" || (isPathBundle(name) && name != "apart.dmlib"))
      contractions = "all";
    if (!readTuneSteps(bundle + "/tune-steps", kernels, contractions, stepsError) &&
        !stepsError.empty()) {
      std::lock_guard<std::mutex> lock(mutex_);
      std::printf("dmrt-tune: %s\n", stepsError.c_str());
      status_ = 1;
      ++done_;
      return;
    }
    if (!o_.remeasure && !leaveOutRecorded(name, bundle, device, kernels, contractions))
      return;
    std::vector<std::string> args = {o_.bench, bundle};
    if (!kernels.empty())
      args.insert(args.end(), {"--kernel", kernels});
    if (!contractions.empty())
      args.insert(args.end(), {"--contraction", contractions});
    args.insert(args.end(), {"--reference", "--reps", o_.reps, "--json", run});
    if (!contractions.empty()) {
      if (o_.algorithms > 0)
        args.insert(args.end(), {"--algorithms", "all", "--max-algorithms",
                                 std::to_string(o_.algorithms)});
      if (o_.algorithms > 0 && o_.prune > 0 && o_.prune < o_.algorithms)
        args.insert(args.end(), {"--prune-algorithms", std::to_string(o_.prune)});
    }
    if (device >= 0)
      args.insert(args.end(), {"--device", std::to_string(device)});
    int rc = runChild(args, log);
    std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
    ++measured_;
    if (rc == 77) {
      if (!noGpu_)
        std::fprintf(stderr, "dmrt-tune: no GPU here (dmrt-bench exit 77, see %s): run this on "
                             "a GPU machine\n", log.c_str());
      noGpu_ = true;
      return;
    }
    std::string error, on = device >= 0 ? " on device " + std::to_string(device) : "";
    if (rc > 1 || rc < 0) { // 1: a check failed; its verdicts are in the run file
      std::printf("dmrt-tune: %s%s: dmrt-bench exit %d (see %s)\n", name.c_str(), on.c_str(), rc,
                  log.c_str());
      status_ = 1;
    } else if (!import(name, run, device, "", error)) {
      std::printf("dmrt-tune: %s: %s\n", name.c_str(), error.c_str());
      status_ = 1;
    }
    double t = elapsed();
    std::printf("dmrt-tune: %zu/%zu %s%s, %.0f s elapsed, ~%.0f s left\n", done_,
                bundles_.size(), name.c_str(), on.c_str(), t,
                t / double(measured_) * double(bundles_.size() - done_));
    std::fflush(stdout);
  }

  /// Leaves out of `kernels` and `contractions` ("all", "" or a list "3,5")
  /// the steps DB already holds for the GPU of `device` (known once a run on
  /// it was imported); false when nothing is left to measure (the bundle is
  /// then done). Holds the lock.
  bool leaveOutRecorded(const std::string &name, const std::string &bundle, int device,
                        std::string &kernels, std::string &contractions) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto gpu = gpu_.find(device);
    if (gpu == gpu_.end())
      return true;
    RecordedSteps steps;
    std::string error;
    std::vector<std::string> warnings;
    if (!stepsRecorded(o_.db, bundle, gpu->second, kernels, contractions, o_.algorithms > 0,
                       steps, error, warnings)) {
      std::printf("dmrt-tune: %s: %s; measuring it whole\n", name.c_str(), error.c_str());
      return true;
    }
    for (const std::string &w : warnings)
      std::fprintf(stderr, "dmrt-tune: warning: %s\n", w.c_str());
    auto list = [](const std::vector<int64_t> &ids) {
      std::string s;
      for (int64_t id : ids)
        s += (s.empty() ? "" : ",") + std::to_string(id);
      return s;
    };
    size_t kernelsKnown = steps.knownKernels.size(),
           contractionsKnown = steps.knownContractions.size();
    if (kernelsKnown + contractionsKnown == 0)
      return true;
    // "all" stays "all" where nothing is left out: the run keeps its options.
    if (kernelsKnown)
      kernels = list(steps.leftKernels);
    if (contractionsKnown)
      contractions = list(steps.leftContractions);
    std::printf("  %s: %zu of %zu kernel(s) and %zu of %zu contraction(s) already in %s for "
                "this GPU, not measured again (--remeasure: every one)\n",
                name.c_str(), kernelsKnown, kernelsKnown + steps.leftKernels.size(),
                contractionsKnown, contractionsKnown + steps.leftContractions.size(),
                o_.db.c_str());
    if (!kernels.empty() || !contractions.empty())
      return true;
    ++done_;
    std::printf("dmrt-tune: %zu/%zu %s: nothing left to measure, %.0f s elapsed\n", done_,
                bundles_.size(), name.c_str(), elapsed());
    std::fflush(stdout);
    return false;
  }

  const Options &o_;
  const std::vector<std::string> bundles_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> noGpu_{false};
  std::mutex mutex_; ///< the counts, the output, DB, best_
  size_t done_ = 0, measured_ = 0;
  int status_ = 0;
  bool budgetSaid_ = false;
  BestSoFar best_;
  /// Per device (-1: dmrt-bench's default): a record measured on it, whose
  /// device and software key the records its bundles would add.
  std::map<int, Record> gpu_;
};

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> pos;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help")
      return std::printf("%s", kUsage), 0;
    if (a == "--resume") {
      o.resume = true;
      continue;
    }
    if (a == "--remeasure") {
      o.remeasure = true;
      continue;
    }
    if (a == "--exhaustive") {
      o.prune = 0;
      continue;
    }
    if (a == "--devices") {
      if (i + 1 >= argc)
        return usage(a + " needs a value");
      std::string error;
      if (!parseDevices(argv[++i], o.devices, error))
        return usage(error);
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
      (a == "--algorithms" ? o.algorithms : o.prune) = n;
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
        o.budget = x;
      else if (a == "--reps")
        o.reps = v;
      else
        o.bench = v;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option " + a);
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2)
    return usage("give the candidates folder and the database");
  o.dir = pos[0];
  o.db = pos[1];
  std::vector<std::string> bundles = bundlesOf(o.dir);
  if (bundles.empty())
    return usage("no *.dmlib in " + o.dir + " (make them with dmc tune MODEL --emit-candidates " +
                 o.dir + ")");
  if (o.bench.empty()) {
    std::string self = selfFolder(argv[0]);
    o.bench = isFile(self + "/../runtime/tools/dmrt-bench") ? self + "/../runtime/tools/dmrt-bench"
                                                             : self + "/dmrt-bench";
  }
  if (!isFile(o.bench))
    return usage("no dmrt-bench at " + o.bench + " (give --bench PATH)");
  std::fflush(stdout);
  Tuner tuner(o, std::move(bundles));
  if (o.devices.size() <= 1) {
    tuner.work(o.devices.empty() ? -1 : o.devices[0]);
  } else {
    std::printf("dmrt-tune: measuring on devices");
    for (int d : o.devices)
      std::printf(" %d", d);
    std::printf(" in parallel\n");
    std::fflush(stdout);
    std::vector<std::thread> workers;
    for (int d : o.devices)
      workers.emplace_back([&tuner, d] { tuner.work(d); });
    for (std::thread &w : workers)
      w.join();
  }
  if (tuner.status() != 77)
    std::printf("dmrt-tune: %zu problem(s) measured; `dmc-db show %s` lists the fastest "
                "candidate of every problem\n", tuner.problems(), o.db.c_str());
  return tuner.status();
}
