//===- WholeStepTest.cpp - a whole bf16 training step against the interpreter ===//
//
//   dmc-whole-step-test BUNDLE.dmlib STORAGE.safetensors [--exact FP64.safetensors]
//                       [--plant-fault NAME[:FACTOR]] [--rtol R]
//                       [--atol-fraction A] [--noise-factor N]
//   dmc-whole-step-test --dir DIR
//
// Runs a whole training step of a compiled bundle on the GPU through the C
// API (runtime/dmrt.h: open, bind every caller buffer, forward, backward;
// WholeStepRun.h), with the inputs, parameters and dy of a `dmc eval --train
// --stage fuse --precision storage` file and its dropout seed (metadata
// "seed"; Philox counters as runtime/format/device/Philox.h), then compares the layer's
// outputs and every gradient with the file's, per tensor with a bound scaled
// by that tensor's values (runtime/StepCheck.h; --exact: the same inputs
// evaluated in fp64, whose distance from the storage run sets the noise
// floor). Every caller buffer starts as NaN bytes, so an element no step
// writes fails. The same step is also replayed from CUDA graphs (equal bit
// for bit) and with another seed offset (results change with dropout).
//
// --plant-fault NAME[:FACTOR] multiplies result NAME by FACTOR (default 0)
// after the GPU run: the test then passes only if the comparison reports
// NAME, and only NAME. --dir DIR runs every DIR/NAME.dmlib with
// DIR/NAME.storage.safetensors and DIR/NAME.fp64.safetensors, and for each
// also checks two planted faults (the first gradient scaled by 1.25, the last
// one zeroed) on the same GPU results, and misuse through the C API (a host
// pointer, backward before forward or twice, and the bundle of
// DIR/other-arch/*.dmlib, compiled for another arch, must fail to open).
//
// --bind-only: load and bind the files (names, dims, shapes, bf16 inputs) and
// stop before the GPU, so a compiler machine can check them.
//
// Exit: 0 pass, 1 failure, 2 usage, 77 no GPU (skipped).
//
//===----------------------------------------------------------------------===//
#include "runtime/Bundle.h"
#include "runtime/StepCheck.h"

#include "GpuTestDevice.h"
#include "WholeStepRun.h"

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <map>
#include <string>
#include <vector>

using namespace dmrt;
using dmctest::StepRun;

namespace {

struct Fault {
  std::string name; // "" when none
  double factor = 0;
};

bool fail(const std::string &msg) {
  std::printf("FAIL: %s\n", msg.c_str());
  return false;
}

/// Runs the bundle on the GPU and fills `run`. False (printed) on any error.
bool runOnGpu(const std::string &bundleDir, const std::string &storagePath,
              const std::string &exactPath, StepRun &run) {
  std::string error;
  return dmctest::runStep(bundleDir, storagePath, exactPath, run, error) || fail(error);
}

/// Compares every result (with `fault` planted into a copy of the GPU's);
/// returns the names that fail. Prints one line per tensor when `verbose`.
std::vector<std::string> compare(const StepRun &run, const TensorBound &bound,
                                 const Fault &fault, bool verbose) {
  std::vector<std::string> failed;
  for (const std::string &name : run.names) {
    std::vector<double> got = run.got.at(name);
    if (name == fault.name)
      for (double &v : got)
        v *= fault.factor;
    auto exact = run.exact.find(name);
    TensorCheck c = checkTensor(name, run.ref.at(name), got,
                                exact == run.exact.end() ? nullptr : &exact->second, bound);
    if (verbose || !c.pass)
      std::printf("  %s\n", describeCheck(c).c_str());
    if (!c.pass)
      failed.push_back(name);
  }
  return failed;
}

/// With no fault: every tensor passes. With one: exactly the planted one fails.
bool verdict(const std::vector<std::string> &failed, const Fault &fault) {
  if (fault.name.empty()) {
    if (!failed.empty())
      return fail(std::to_string(failed.size()) + " tensors differ from the interpreter");
    std::printf("PASS: every output and gradient matches the storage-precision interpreter\n");
    return true;
  }
  if (failed.size() == 1 && failed[0] == fault.name) {
    std::printf("PASS: the planted fault (%s x %g) is reported\n", fault.name.c_str(),
                fault.factor);
    return true;
  }
  std::string list;
  for (const std::string &n : failed)
    list += " " + n;
  return fail("planted fault " + fault.name + " x " + std::to_string(fault.factor) +
              ": expected exactly it to fail, failing:" + (list.empty() ? " none" : list));
}

bool parseFault(const std::string &s, Fault &out) {
  size_t colon = s.rfind(':');
  out.name = s.substr(0, colon);
  if (colon == std::string::npos)
    return !out.name.empty();
  char *end = nullptr;
  out.factor = std::strtod(s.c_str() + colon + 1, &end);
  return !out.name.empty() && end && *end == '\0' && end != s.c_str() + colon + 1;
}

/// --dir: every NAME.dmlib of `dir` with its eval files, plus planted faults.
bool runDirectory(const std::string &dir, const TensorBound &bound) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".dmlib") == 0)
        names.push_back(n.substr(0, n.size() - 6));
    }
    closedir(d);
  }
  if (names.empty())
    return fail(dir + ": no *.dmlib bundles (run tests/gpu/make-bundles.sh)");
  bool ok = true;
  for (const std::string &n : names) {
    std::string base = dir + "/" + n;
    StepRun run;
    if (!runOnGpu(base + ".dmlib", base + ".storage.safetensors", base + ".fp64.safetensors",
                  run)) {
      ok = false;
      continue;
    }
    ok &= verdict(compare(run, bound, {}, true), {});
    // Planted faults on the same GPU results: the comparison must catch them.
    std::vector<std::string> grads;
    for (const std::string &r : run.names)
      if (r.size() > 5 && r.compare(r.size() - 5, 5, ".grad") == 0)
        grads.push_back(r);
    if (grads.empty()) {
      ok = fail(base + ": no gradients to plant a fault in");
      continue;
    }
    for (Fault f : {Fault{grads.front(), 1.25}, Fault{grads.back(), 0.0}})
      ok &= verdict(compare(run, bound, f, false), f);
    std::string otherArch;
    if (DIR *d = opendir((dir + "/other-arch").c_str())) {
      while (dirent *e = readdir(d))
        if (std::string(e->d_name).find(".dmlib") != std::string::npos)
          otherArch = dir + "/other-arch/" + e->d_name;
      closedir(d);
    }
    ok &= dmctest::checkMisuse(base + ".dmlib", otherArch) || fail(base + ": misuse checks");
    ok &= dmctest::checkSharedInstances(base + ".dmlib", base + ".storage.safetensors") ||
          fail(base + ": shared instances and the current device");
    ok &= dmctest::checkInferenceArena(base + ".dmlib", base + ".storage.safetensors") ||
          fail(base + ": inference in the inference arena");
  }
  return ok;
}

int usage(const char *msg) {
  std::fprintf(stderr,
               "dmc-whole-step-test: %s\nusage: dmc-whole-step-test BUNDLE.dmlib "
               "STORAGE.safetensors [--exact FP64.safetensors] [--plant-fault "
               "NAME[:FACTOR]] [--rtol R] [--atol-fraction A] [--noise-factor N] "
               "[--bind-only]\n"
               "       dmc-whole-step-test --dir DIR [--rtol R] ...\n",
               msg);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> positional;
  std::string exactPath, dir;
  bool bindOnly = false;
  Fault fault;
  TensorBound bound;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *what) -> const char * {
      return i + 1 < argc ? argv[++i] : (usage(what), std::exit(2), nullptr);
    };
    auto number = [&](const char *what) {
      const char *v = value(what);
      char *end = nullptr;
      double d = std::strtod(v, &end);
      if (!end || *end || d < 0)
        std::exit(usage((std::string(what) + ": not a number >= 0: " + v).c_str()));
      return d;
    };
    if (a == "--exact")
      exactPath = value("--exact needs a file");
    else if (a == "--bind-only")
      bindOnly = true;
    else if (a == "--dir")
      dir = value("--dir needs a directory");
    else if (a == "--plant-fault") {
      if (!parseFault(value("--plant-fault needs NAME[:FACTOR]"), fault))
        return usage("--plant-fault: expected NAME or NAME:FACTOR");
    } else if (a == "--rtol")
      bound.rtol = number("--rtol");
    else if (a == "--atol-fraction")
      bound.atolFraction = number("--atol-fraction");
    else if (a == "--noise-factor")
      bound.noiseFactor = number("--noise-factor");
    else if (!a.empty() && a[0] == '-')
      return usage(("unknown option " + a).c_str());
    else
      positional.push_back(a);
  }
  if (dir.empty() ? positional.size() != 2 : !positional.empty())
    return usage("expected BUNDLE.dmlib STORAGE.safetensors, or --dir DIR");
  if (bindOnly && dir.empty()) {
    Bundle b;
    TensorFile storage;
    std::vector<StepBinding> bindings;
    std::string error;
    if (!loadBundle(positional[0], b, error) ||
        !readSafetensors(positional[1], storage, error) ||
        !bindEvalFile(b, storage, positional[1], bindings, error))
      return fail(error), 1;
    size_t inputs = 0;
    for (const StepBinding &sb : bindings)
      inputs += sb.input;
    std::printf("bound %zu inputs and %zu results of %s to %s\n", inputs,
                bindings.size() - inputs, positional[0].c_str(), positional[1].c_str());
    return 0;
  }
  if (int rc = dmc::test::checkGpuDevice("whole-step tests"); rc != 0)
    return rc;
  if (!dir.empty())
    return runDirectory(dir, bound) ? 0 : 1;
  StepRun run;
  if (!runOnGpu(positional[0], positional[1], exactPath, run))
    return 1;
  if (!fault.name.empty() && !run.got.count(fault.name))
    return usage(("--plant-fault: '" + fault.name + "' is not an output or gradient").c_str());
  return verdict(compare(run, bound, fault, true), fault) ? 0 : 1;
}
