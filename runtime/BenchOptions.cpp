//===- BenchOptions.cpp - dmrt-bench's command line -----------------------===//
#include "runtime/BenchOptions.h"

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace dmrt {

const char *const kBenchUsage =
    "usage: dmrt-bench --device-info [--device N=0] [--json OUT.json]\n"
    "       dmrt-bench BUNDLE [--list] [--kernel ID|NAME[,...]|all] "
    "[--contraction ID[,...]|all]\n"
    "                  [--config-sweep] [--reference] [--reps N=50] "
    "[--warmup N=5]\n"
    "                  [--timing stream|isolated] [--flush-l2] [--seed S=0]\n"
    "                  [--json OUT.json] [--tolerance T] [--device N=0] "
    "[--int-max N=1]\n"
    "                  [--algorithms heuristic|all] [--max-algorithms N=256]\n"
    "                  [--prune-algorithms N]\n"
    "                  [--plant-fault zero|scale|shift|permute]\n"
    "Runs, checks (--reference: against BUNDLE/reference/{k,c}<N>.safetensors)\n"
    "and times the kernels and contractions of a layer bundle. Without --kernel\n"
    "and --contraction every step runs.\n"
    "Timing (per launch; median, min, max over samples):\n"
    "  --timing stream    (default) back-to-back launches on one stream, each on\n"
    "                     the next of R copies of the step's tensors (R sets span\n"
    "                     >= 4x the L2, at most 64); a sample is K >= 20\n"
    "                     launches (a multiple of R) between two events, and\n"
    "                     there are max(ceil(reps/K), min(reps, 7)) samples.\n"
    "  --timing isolated  each of --reps launches alone between two events,\n"
    "                     after --warmup launches; --flush-l2 (isolated only)\n"
    "                     overwrites 2x the L2 before each timed launch.\n"
    "%copy: GB/s as a % of a 1 GiB device-to-device copy; %size-copy: as a %\n"
    "of a copy moving the step's bytes (bytes/2 copied) timed the same way\n"
    "(\"-\": not measured; --json: copy_us, pct_same_size_copy).\n"
    "cuBLASLt algorithms of a contraction:\n"
    "  --algorithms heuristic  (default) check and time the heuristic's best.\n"
    "  --algorithms all        then also time every algorithm of the heuristic's\n"
    "                     top 8 and those enumerated from\n"
    "                     cublasLtMatmulAlgoGetIds (tile x stages x split-k x\n"
    "                     swizzle that cublasLtMatmulAlgoCheck accepts), at most\n"
    "                     --max-algorithms in all, each timed as the step with\n"
    "                     min(reps, 5) reps; a failing algorithm is counted, not\n"
    "                     fatal. A line per contraction: algorithms tried, the\n"
    "                     heuristic best's and the fastest one's time and\n"
    "                     configuration (--json: algorithms_tried, heuristic_us,\n"
    "                     best_us, best_algorithm); with --reference the fastest\n"
    "                     is checked too.\n"
    "  --prune-algorithms N    (with all) time and check only the heuristic's best\n"
    "                     and the N - 1 other algorithms the analytic cost model\n"
    "                     prices lowest (its GEMM rate: the step's own time;\n"
    "                     --json: algorithms_considered, algorithms_pruned);\n"
    "                     without it every algorithm is (exhaustive).\n"
    "Check (--reference): element i of an output passes iff |got - ref| <=\n"
    "  rtol x (RMS(ref) + |ref_i|), RMS over the output's reference values;\n"
    "  rtol = --tolerance, default 2^-7 bf16, 2^-9 f16, 1e-4 f32, 0 integers.\n"
    "  An all-zero reference fails. Every element is compared when the\n"
    "  reference holds all of them, else every stride-th (stride odd, so every\n"
    "  vector lane is sampled). A contraction the compiler skipped (above its\n"
    "  flop limit; recorded in the reference file) is listed as skipped; any\n"
    "  other step without a reference file is an error.\n"
    "--plant-fault F (with --reference): every GPU output is changed before its\n"
    "  comparison (zero; scale x1.05; shift by 3% of its RMS; permute: each\n"
    "  group of 8 elements reversed); then exit 0 only if every checked step\n"
    "  failed its comparison, 1 naming the steps that passed despite the fault.\n"
    "Exit: 0 pass, 1 mismatch or CUDA failure (a GPU that is present but\n"
    "unusable included), 2 usage/bundle error (a missing reference included),\n"
    "77 no CUDA device or no driver (skipped).\n";

bool splitSelection(const std::string &option, const std::string &value,
                    std::vector<std::string> &out, std::string &error) {
  out.clear();
  size_t start = 0;
  for (;;) {
    size_t comma = value.find(',', start);
    std::string item = value.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty()) {
      error = option + " " + value + ": an empty item (give IDs or names separated by commas)";
      return false;
    }
    for (const std::string &seen : out)
      if (seen == item) {
        error = option + " " + value + ": " + item + " given twice";
        return false;
      }
    out.push_back(item);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  for (const std::string &item : out)
    if (item == "all" && out.size() > 1) {
      error = option + " " + value + ": \"all\" cannot be listed with others";
      return false;
    }
  return true;
}

bool parseIntArg(const char *s, long long lo, long long hi, long long &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno || !end || *end || end == s || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

namespace {
/// printf into a std::string.
__attribute__((format(printf, 1, 2))) std::string format(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string out(n > 0 ? n : 0, '\0');
  if (n > 0)
    std::vsnprintf(out.data(), out.size() + 1, fmt, ap2);
  va_end(ap2);
  return out;
}
} // namespace

std::string percentCell(double pct, int width) {
  if (pct > 0 && std::isfinite(pct))
    return format("%*.1f%%", width > 1 ? width - 1 : 0, pct);
  return format("%*s", width, "-");
}

std::string stepTableHeader() {
  return format("%-4s %-5s %-36s %12s %10s %10s %9s %7s %10s %9s %4s  %s",
                "kind", "id", "name", "bytes", "median_us", "min_us", "GB/s",
                "%copy", "%size-copy", "TFLOP/s", "sets", "check");
}

std::string stepTableRow(const StepResult &r, const std::string &check) {
  bool contraction = r.kind == BundleStep::Contraction;
  std::string tflops = contraction ? format("%.1f", r.tflops) : "";
  return format("%-4s %-5lld %-36s %12lld %10.2f %10.2f %9.1f %6.1f%% %10s "
                "%9s %4d  %s",
                contraction ? "c" : "k", (long long)r.id, r.name.c_str(),
                (long long)r.bytes, r.time.medianUs, r.time.minUs, r.gbs,
                r.pctCopy, percentCell(r.pctSameCopy, 10).c_str(),
                tflops.c_str(), r.bufferSets, check.c_str());
}

std::string algorithmSweepLine(const AlgorithmSweep &s) {
  std::string line = format("       algorithms: %d tried (%d heuristic, %d "
                            "enumerated), %d failed, %d rep%s each",
                            s.tried, s.heuristic, s.enumerated, s.errors,
                            s.reps, s.reps == 1 ? "" : "s");
  if (s.pruned > 0)
    line += format(" (%d of %d enumerated left out by the cost model)", s.pruned, s.considered);
  if (!s.checkedAgainst.empty())
    line += format("; checked against the %s: %d rejected", s.checkedAgainst == "default"
                                                                ? "default's outputs"
                                                                : s.checkedAgainst.c_str(),
                   s.rejected);
  if (!s.enumerationError.empty())
    line += "; enumeration failed: " + s.enumerationError;
  line += s.heuristicUs > 0
              ? format("; heuristic %.2f us", s.heuristicUs)
              : std::string("; heuristic -");
  if (s.bestIndex < 0)
    return line + "; none ran";
  line += format("; best %.2f us", s.bestUs);
  if (s.heuristicUs > 0 && s.bestUs > 0)
    line += format(" (%.2fx)", s.heuristicUs / s.bestUs);
  line += format(" by %s #%d: ", s.bestIsHeuristic ? "heuristic" : "enumerated",
                 s.bestIndex) +
          s.bestAlgorithm;
  if (s.modelled > 1 && std::isfinite(s.modelRho))
    line += format("; cost model rank correlation %.2f over %d", s.modelRho, s.modelled);
  return line;
}

bool parseBenchArgs(int argc, const char *const *argv, BenchOptions &out,
                    std::string &error) {
  out = BenchOptions();
  HarnessOptions &opt = out.harness;
  bool flushGiven = false, timingGiven = false, maxAlgorithmsGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    long long n;
    if (a == "-h" || a == "--help") {
      out.help = true;
      return true;
    } else if (a == "--list") {
      out.list = true;
    } else if (a == "--device-info") {
      out.deviceInfo = true;
    } else if (a == "--config-sweep") {
      out.sweep = true;
    } else if (a == "--reference") {
      opt.reference = true;
    } else if (a == "--flush-l2") {
      opt.flushL2 = flushGiven = true;
    } else if (a == "--timing") {
      const char *v = value();
      if (!v || !parseTimingMode(v, opt.timing)) {
        error = "--timing needs \"stream\" or \"isolated\"" +
                (v ? std::string(", got \"") + v + "\"" : std::string());
        return false;
      }
      timingGiven = true;
    } else if (a == "--algorithms") {
      const char *v = value();
      if (!v || !parseAlgorithmMode(v, opt.algorithms)) {
        error = "--algorithms needs \"heuristic\" or \"all\"" +
                (v ? std::string(", got \"") + v + "\"" : std::string());
        return false;
      }
    } else if (a == "--max-algorithms" || a == "--prune-algorithms") {
      const char *v = value();
      if (!v || !parseIntArg(v, 1, 100000, n)) {
        error = a + " needs an integer in [1, 100000]";
        return false;
      }
      (a == "--max-algorithms" ? opt.maxAlgorithms : opt.pruneAlgorithms) = static_cast<int>(n);
      maxAlgorithmsGiven |= a == "--max-algorithms";
    } else if (a == "--kernel" || a == "--contraction" || a == "--json") {
      const char *v = value();
      if (!v || !*v) {
        error = a + " needs a value";
        return false;
      }
      (a == "--kernel"        ? out.kernelSel
       : a == "--contraction" ? out.contractionSel
                              : out.jsonOut) = v;
      if (a != "--json" &&
          !splitSelection(a, v, a == "--kernel" ? out.kernelList : out.contractionList, error))
        return false;
    } else if (a == "--reps" || a == "--warmup" || a == "--device" ||
               a == "--int-max") {
      const char *v = value();
      long long lo = a == "--reps" || a == "--int-max" ? 1 : 0;
      if (!v || !parseIntArg(v, lo, 1000000, n)) {
        error = a + " needs an integer >= " + std::to_string(lo);
        return false;
      }
      if (a == "--reps") opt.reps = static_cast<int>(n);
      else if (a == "--warmup") opt.warmup = static_cast<int>(n);
      else if (a == "--device") out.device = static_cast<int>(n);
      else opt.intMax = n;
    } else if (a == "--seed") {
      const char *v = value();
      if (!v || !parseU64(v, opt.seed)) {
        error = "--seed needs an unsigned 64-bit integer";
        return false;
      }
    } else if (a == "--plant-fault") {
      const char *v = value();
      if (!v || !parsePlantedFault(v, opt.plantFault)) {
        error = "--plant-fault needs zero, scale, shift or permute";
        return false;
      }
    } else if (a == "--tolerance") {
      const char *v = value();
      char *end = nullptr;
      double t = v ? std::strtod(v, &end) : -1;
      if (!v || !end || *end || !(t >= 0) || !std::isfinite(t)) {
        error = "--tolerance needs a non-negative number";
        return false;
      }
      opt.tolerance = t;
    } else if (!a.empty() && a[0] == '-') {
      error = "unknown option " + a;
      return false;
    } else if (out.bundleDir.empty()) {
      out.bundleDir = a;
    } else {
      error = "more than one bundle given (" + out.bundleDir + ", " + a + ")";
      return false;
    }
  }
  if (flushGiven && opt.timing != TimingMode::Isolated) {
    error = std::string("--flush-l2 needs --timing isolated") +
            (timingGiven ? "" : " (the default timing is stream)") +
            ": stream timing rotates over copies of the tensors larger than "
            "the L2 instead of flushing it";
    return false;
  }
  if (opt.pruneAlgorithms > 0 && opt.algorithms != AlgorithmMode::All) {
    error = "--prune-algorithms needs --algorithms all (the default, heuristic, "
            "times the heuristic's best alone)";
    return false;
  }
  if (maxAlgorithmsGiven && opt.algorithms != AlgorithmMode::All) {
    error = "--max-algorithms needs --algorithms all (the default, heuristic, "
            "times the heuristic's best alone)";
    return false;
  }
  if (opt.plantFault != PlantedFault::None && !opt.reference) {
    error = "--plant-fault needs --reference (a fault is planted to be caught by the "
            "comparison)";
    return false;
  }
  if (out.deviceInfo && !out.bundleDir.empty()) {
    error = "--device-info takes no bundle (" + out.bundleDir + " given)";
    return false;
  }
  if (out.bundleDir.empty() && !out.deviceInfo) {
    error = "no bundle given";
    return false;
  }
  return true;
}

} // namespace dmrt
