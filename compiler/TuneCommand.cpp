//===- TuneCommand.cpp - dmc tune: candidates, dry run, measurement -------===//
#include "compiler/TuneCommand.h"

#include "codegen/KernelEmitter.h"
#include "compiler/Driver.h"
#include "compiler/bundle/BundleWriter.h"
#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/KernelPruning.h"
#include "compiler/bundle/LayoutCandidates.h"
#include "compiler/bundle/CandidateFiles.h"
#include "compiler/bundle/Reference.h"
#include "ir/InPlaceStack.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatAdapters.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

using namespace llvm;
using mlir::MLIRContext;
using mlir::func::FuncOp;

namespace dmc {
namespace {

cl::SubCommand tuneCmd("tune", "The kernel-knob tuner: candidate bundles, their measurement on "
                               "the GPU into a tuning database (then dmc compile --db)");
cl::OptionCategory category("dmc tune options");
cl::opt<std::string> model(cl::Positional, cl::desc("MODEL.json"), cl::Required, cl::sub(tuneCmd),
                           cl::cat(category));
cl::opt<bool> dryRun("dry-run", cl::desc("Print each kernel's candidates and the measurements "
                                         "a run would make; compile nothing"),
                     cl::sub(tuneCmd), cl::cat(category));
cl::opt<std::string> emitDir("emit-candidates",
                             cl::desc("Write the candidate bundles into DIR (for "
                                      "tuning-db/tune-device.sh on a GPU machine)"),
                             cl::value_desc("DIR"), cl::sub(tuneCmd), cl::cat(category));
cl::opt<std::string> dbPath("db", cl::desc("Measure the candidates on this machine's GPU into "
                                           "this tuning database"),
                            cl::value_desc("DB.jsonl"), cl::sub(tuneCmd), cl::cat(category));
cl::opt<int> count("candidates",
                   cl::desc("Knob candidate bundles c<j>.dmlib, bundle j giving each kernel "
                            "the j-th of its configurations to measure: at most N (default: "
                            "as many as the kernel with the most to measure needs)"),
                   cl::init(0), cl::value_desc("N"), cl::sub(tuneCmd), cl::cat(category));
cl::opt<int> layoutCount("layout-candidates",
                          cl::desc("Layout candidate bundles to write: the first N "
                                   "l<n>_<i>.dmlib (a tensor moved) and the first N "
                                   "t<n>_<i>.dmlib (read through a transpose) (default: all; "
                                   "0: none)"),
                          cl::init(-1), cl::value_desc("N"), cl::sub(tuneCmd), cl::cat(category));
cl::opt<int> pruneKernels("prune-kernels",
                          cl::desc("Measure each kernel's default knobs and the N - 1 other "
                                   "configurations the kernel cost model prices lowest "
                                   "(default 8; 0: every feasible configuration)"),
                          cl::init(8), cl::value_desc("N"), cl::sub(tuneCmd), cl::cat(category));
cl::opt<int> pathCandidates(
    "path-candidates",
    cl::desc("Knob configurations measured of each kernel only a path bundle has (drawn.dmlib's "
             "drawing kernels, nobgrad.dmlib's column sums, ...): its default, in the path "
             "bundle, and the kernel cost model's N - 1 cheapest others, in <path>-k<j>.dmlib "
             "(default 4; 1: the default only; 0: every feasible one)"),
    cl::init(4), cl::value_desc("N"), cl::sub(tuneCmd), cl::cat(category));
cl::opt<unsigned> timeBudget("time-budget",
                             cl::desc("With --db: start no bundle after S seconds"),
                             cl::init(0), cl::value_desc("S"), cl::sub(tuneCmd),
                             cl::cat(category));
cl::opt<int64_t> samples("reference-samples",
                         cl::desc("Reference elements stored per output (default 16384)"),
                         cl::init(16384), cl::value_desc("N"), cl::sub(tuneCmd),
                         cl::cat(category));

cl::opt<std::string> target("target",
                            cl::desc("The GPU whose SMs and shared memory size the default knobs "
                                     "and bound the tiles (dmc compile --target; default h100)"),
                            cl::init("h100"), cl::value_desc("NAME"), cl::sub(tuneCmd),
                            cl::cat(category));

Error fail(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The configured graph the candidates are made from, for --target's GPU
/// (with `fused` false: attention left unfused; with `columns` false: column
/// sums apart from the row kernels; the tuner's alternatives).
Expected<mlir::OwningOpRef<mlir::ModuleOp>> configuredGraph(MLIRContext &ctx, bool fused = true,
                                                            bool columns = true,
                                                            Stage stage = Stage::Config,
                                                            const char *biasGrads = "saving",
                                                            bool addends = true,
                                                            bool stackInPlace = false,
                                                            bool dropoutBits = true) {
  PipelineOptions options;
  options.target = target;
  options.fusedAttention = fused;
  options.columnFusion = columns;
  options.biasGrads = biasGrads;
  options.gemmAddends = addends;
  options.stackInPlace = stackInPlace;
  options.dropoutBits = dropoutBits;
  return buildGraph(ctx, model, /*train=*/true, stage, options);
}

/// A layout candidate applied as `dmc compile --config` applies its
/// config.json (so `dmc compile --db` rebuilds what was measured): its file
/// name, the steps it changes, and its graph.
struct LayoutBundle {
  bundle::LayoutCandidate candidate;
  /// l<n>_<i>.dmlib: contraction n's i-th candidate; t<n>_<i>.dmlib: its
  /// i-th through a transpose
  std::string file;
  std::vector<std::string> steps;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// The layout candidates that apply (bundle/LayoutCandidates.h); the others
/// are counted with their reason in `skipped`. With `print`, a line each.
Expected<std::vector<LayoutBundle>> layoutBundles(MLIRContext &ctx, bool print,
                                                  std::vector<std::string> &skipped) {
  auto base = configuredGraph(ctx);
  if (!base)
    return base.takeError();
  FuncOp f = layerFunction(**base);
  auto config = bundle::extractConfiguration(f, sys::path::stem(model));
  if (!config)
    return config.takeError();
  auto all = bundle::layoutCandidates(f, *config);
  if (!all)
    return all.takeError();
  std::vector<LayoutBundle> out;
  std::map<std::string, int> perContraction; // "c3" or "tc3" -> candidates written
  for (bundle::LayoutCandidate &c : all->candidates) {
    auto module = configuredGraph(ctx, true, true, Stage::Fuse);
    if (!module)
      return module.takeError();
    FuncOp g = layerFunction(**module);
    const std::string key = (c.transpose ? "t" : "") + c.contraction;
    std::string file = (c.transpose ? "t" : "l") + c.contraction.substr(1) + "_" +
                       std::to_string(perContraction[key]) + ".dmlib";
    std::string why;
    if (Error e = bundle::applyConfiguration(g, c.config, "layout candidate " + c.describe(),
                                             /*checkForms=*/false))
      why = toString(std::move(e));
    std::vector<std::string> steps;
    if (why.empty())
      steps = c.transpose ? bundle::transposeSteps(g, c.contraction) : bundle::changedSteps(f, g);
    if (why.empty() && steps.empty())
      why = "changes no step's layouts";
    // A kernel that cannot be written in the moved layouts (e.g. a fused
    // attention kernel needs its head dim contiguous): emitted, not compiled.
    for (auto [n, k] : llvm::enumerate(g.getOps<dm::KernelOp>())) {
      if (!why.empty() || !llvm::is_contained(steps, "k" + std::to_string(n)))
        continue;
      auto emitted = codegen::emitKernel(k, bundle::knobsOf(k), bundle::kernelName(n, k));
      if (!emitted)
        why = bundle::kernelName(n, k) + ": " + toString(emitted.takeError());
    }
    if (print)
      outs() << "  layout " << c.describe() << ": "
             << (why.empty() ? file + ", " + std::to_string(steps.size()) + " step(s) measured"
                             : "skipped: " + why)
             << "\n";
    if (!why.empty()) {
      skipped.push_back(c.describe() + ": " + why);
      continue;
    }
    ++perContraction[key];
    out.push_back({std::move(c), file, std::move(steps), std::move(*module)});
  }
  if (print)
    outs() << "  " << all->summary(size_t(llvm::range_size(f.getOps<dm::ContractOp>())))
           << "\n";
  return out;
}

/// Per kernel: its feasible knob configurations, and those candidate bundles
/// measure (--prune-kernels).
struct KernelCandidates {
  std::vector<size_t> counts;
  std::vector<std::set<size_t>> measured;
};

/// Configurations of a kernel measured: `inBundles` in candidate bundles,
/// and its default in default.dmlib when pruning left it out of them.
size_t measuredCount(const std::set<size_t> &inBundles, size_t feasible) {
  return inBundles.size() + (inBundles.size() < feasible && pruneKernels > 0);
}

/// Feasible knob configurations per kernel, printed with --dry-run.
Expected<KernelCandidates> feasibleCounts(MLIRContext &ctx, bool print) {
  auto module = configuredGraph(ctx);
  if (!module)
    return module.takeError();
  KernelCandidates out;
  std::vector<size_t> &counts = out.counts;
  size_t n = 0, contractions = 0;
  FuncOp f = layerFunction(**module);
  out.measured = bundle::configurationsToMeasure(f, pruneKernels);
  // The cuBLASLt contractions: those a fused kernel holds run inside it.
  contractions = size_t(llvm::range_size(f.getOps<dm::ContractOp>()));
  // The names' column as wide as the longest name.
  size_t width = 0;
  for (auto kernel : f.getOps<dm::KernelOp>())
    width = std::max(width, bundle::kernelName(n++, kernel).size());
  n = 0;
  for (auto kernel : f.getOps<dm::KernelOp>()) {
    std::vector<std::string> rejected;
    auto all = codegen::isFusedKernel(kernel)
                   ? codegen::enumerateFusedConfigs(kernel, &rejected)
                   : codegen::enumerateConfigs(codegen::spaceOf(kernel), &rejected);
    counts.push_back(all.size());
    if (print)
      outs() << formatv("  {0} {1,3} feasible, {2,3} measured, {3,3} rejected{4}\n",
                        llvm::fmt_align(bundle::kernelName(n, kernel), llvm::AlignStyle::Left, width),
                        all.size(), measuredCount(out.measured[n], all.size()), rejected.size(),
                        rejected.empty() ? "" : " (e.g. " + rejected.front() + ")");
    ++n;
  }
  if (print)
    outs() << "  " << contractions << " contraction(s): measured in default.dmlib, each with up "
           << "to 32 cuBLASLt algorithms enumerated (dmrt-tune --algorithms N), the 12 the "
           << "cost model prices lowest measured (--prune-algorithms N, --exhaustive), every "
           << "one checked against the reference or, above its flop limit, the heuristic's "
           << "outputs\n";
  return out;
}

/// The fused configured graph written as the bundle `dir`; its stepShape.
Expected<std::string> writeOne(MLIRContext &ctx, const std::string &dir,
                               const bundle::BundleOptions &options,
                               bundle::WrittenBundle *written = nullptr) {
  auto module = configuredGraph(ctx);
  if (!module)
    return module.takeError();
  return bundle::writeGraph(layerFunction(**module), dir, options, written);
}

Error emitCandidates(MLIRContext &ctx, const std::string &dir, int n,
                     std::vector<LayoutBundle> &layouts, const KernelCandidates &kernels) {
  if (std::error_code ec = sys::fs::create_directories(dir))
    return fail(dir + ": " + ec.message());
  bundle::BundleOptions options;
  options.modelName = sys::path::stem(model).str();
  options.reference = true;
  options.referenceSamples = samples;
  // The paths and layout candidates share most steps with default.dmlib:
  // an identical step at the same index gets a copy of its reference file.
  bundle::ReferenceCache references;
  options.referenceCache = &references;
  errs() << "dmc tune: " << dir << "/default.dmlib (with references)\n";
  bundle::WrittenBundle base;
  auto fusedSteps = writeOne(ctx, dir + "/default.dmlib", options, &base);
  if (!fusedSteps)
    return fusedSteps.takeError();
  // The paths dmc compile --db compares with the default, each in its default
  // configuration with references of its own: attention unfused (contractions
  // and algorithms measured too), column sums apart (its contractions are
  // default.dmlib's), ..., stacks written in place (dm-stack-in-place, for
  // dmc compile --stack-in-place --db; bias gradients in kernels, where the
  // QKV one is fastest). A path the pass does not change is not written.
  struct Alternative {
    bool fused, columns;
    const char *biasGrads, *file, *what;
    bool addends = true, stackInPlace = false, dropoutBits = true;
  };
  for (const Alternative &alt :
       {Alternative{false, true, "saving", "unfused.dmlib", "attention unfused"},
        Alternative{true, false, "saving", "apart.dmlib", "column sums apart"},
        Alternative{true, true, "all", "bgrad.dmlib", "every bias gradient in its GEMM"},
        Alternative{true, true, "none", "nobgrad.dmlib", "every bias gradient in a kernel"},
        Alternative{true, true, "saving", "noaddend.dmlib", "every addend in a kernel", false},
        Alternative{true, true, "none", "inplace.dmlib",
                    "stacks written in place, bias gradients in kernels", true, true},
        Alternative{true, true, "saving", "drawn.dmlib",
                    "dropout masks drawn again in the backward", true, false, false}}) {
    auto module = configuredGraph(ctx, alt.fused, alt.columns, Stage::Config, alt.biasGrads,
                                  alt.addends, alt.stackInPlace, alt.dropoutBits);
    if (!module)
      return module.takeError();
    if (stepShape(layerFunction(**module)) == *fusedSteps)
      continue;
    // The in-place path only where a stack moved in place (fused attention).
    if (alt.stackInPlace &&
        llvm::none_of(layerFunction(**module).getBody().front().getOps<dm::StackOp>(),
                      [](dm::StackOp s) { return s->hasAttr(dm::kInPlaceAttr); }))
      continue;
    errs() << "dmc tune: " << dir << "/" << alt.file << " (" << alt.what
           << ", with references)\n";
    bundle::WrittenBundle path;
    if (auto written =
            bundle::writeGraph(layerFunction(**module), dir + "/" + alt.file, options, &path);
        !written)
      return written.takeError();
    if (Error e = bundle::emitPathKnobs(layerFunction(**module), dir, alt.file, path, base,
                                        options, pathCandidates, count))
      return e;
  }
  // Layout candidates, each with references of its own (its layouts are
  // stored) for the steps it changes, the only ones dmrt-tune measures.
  for (LayoutBundle &l : layouts) {
    bundle::BundleOptions o = options;
    o.referenceSteps = std::set<std::string>(l.steps.begin(), l.steps.end());
    std::string b = dir + "/" + l.file;
    if (auto written = bundle::writeGraph(layerFunction(*l.module), b, o); !written)
      return written.takeError();
    if (Error e = bundle::writeTuneSteps(b + "/tune-steps", l.steps))
      return e;
    errs() << "dmc tune: " << b << " (" << l.candidate.describe() << ", " << l.steps.size()
           << " step(s) with references)\n";
  }
  if (references.hits() > 0)
    errs() << "dmc tune: " << references.hits()
           << " reference file(s) copied from an identical step (same op at the same index)\n";
  options.reference = false;
  options.referenceCache = nullptr;
  // Bundle j: each kernel at the j-th of its configurations to measure
  // (--prune-kernels), the others at their default knobs, not measured.
  std::vector<std::map<size_t, int>> ranked = bundle::rankedBundles(kernels.measured, n);
  for (size_t j = 0; j < ranked.size(); ++j) {
    std::vector<std::string> steps;
    for (auto [k, i] : ranked[j])
      steps.push_back("k" + std::to_string(k));
    options.kernelConfigs = ranked[j];
    std::string b = dir + "/c" + std::to_string(j) + ".dmlib";
    if (auto written = writeOne(ctx, b, options); !written)
      return written.takeError();
    if (Error e = bundle::copyReferences(dir + "/default.dmlib/reference", b + "/reference"))
      return e;
    if (Error e = bundle::writeTuneSteps(b + "/tune-steps", steps))
      return e;
    errs() << "dmc tune: " << b << " (" << j + 1 << "/" << ranked.size() << ", " << steps.size()
           << " kernel(s))\n";
  }
  return Error::success();
}

} // namespace

cl::SubCommand &tuneSubCommand() { return tuneCmd; }
cl::OptionCategory &tuneCategory() { return category; }

int runTune(MLIRContext &ctx, const char *argv0) {
  auto report = [](Error e) {
    WithColor::error(errs(), "dmc tune") << toString(std::move(e)) << "\n";
    return 1;
  };
  if (!dryRun && emitDir.empty() && dbPath.empty())
    return report(fail("give --dry-run, --emit-candidates DIR or --db DB"));
  if (count < 0 || samples < 1)
    return report(fail("--candidates must be >= 0 and --reference-samples >= 1"));
  if (pruneKernels < 0)
    return report(fail("--prune-kernels must be >= 0 (0: every feasible configuration)"));
  if (pathCandidates < 0)
    return report(fail("--path-candidates must be >= 0 (0: every feasible configuration, 1: "
                       "the default only)"));
  auto candidates = feasibleCounts(ctx, dryRun);
  if (!candidates)
    return report(candidates.takeError());
  const std::vector<size_t> *counts = &candidates->counts;
  int n = count > 0 ? count.getValue() : 0; // 0: as many bundles as any kernel needs
  size_t bundles = bundle::rankedBundles(candidates->measured, n).size(), measured = 0;
  for (size_t k = 0; k < counts->size(); ++k) {
    size_t inBundles = candidates->measured[k].size();
    if (n > 0)
      inBundles = std::min(inBundles, size_t(n));
    measured += inBundles + (inBundles < (*counts)[k] && pruneKernels > 0);
  }
  std::vector<std::string> skipped;
  auto layouts = layoutBundles(ctx, dryRun, skipped);
  if (!layouts)
    return report(layouts.takeError());
  size_t applicable = layouts->size();
  if (layoutCount >= 0) { // the first N of each kind
    std::vector<LayoutBundle> kept;
    size_t moved = 0, transposed = 0;
    for (LayoutBundle &l : *layouts)
      if (++(l.candidate.transpose ? transposed : moved) <= size_t(layoutCount.getValue()))
        kept.push_back(std::move(l));
    *layouts = std::move(kept);
  }
  size_t transposes = size_t(llvm::count_if(
      *layouts, [](const LayoutBundle &l) { return l.candidate.transpose; }));
  if (dryRun) {
    outs() << formatv("dmc tune: {0} candidate bundle(s) and the default: {1} kernel "
                      "measurements ({2} of the {3} feasible configurations{4})\n",
                      bundles, measured, measured,
                      std::accumulate(counts->begin(), counts->end(), size_t(0)),
                      pruneKernels > 0 ? "; --prune-kernels " + std::to_string(pruneKernels)
                                       : std::string());
    outs() << formatv("dmc tune: {0} layout candidate bundle(s) ({1} through a transpose) of {2}, "
                      "{3} skipped (rejected when applied)\n",
                      layouts->size(), transposes, applicable, skipped.size());
    outs() << "dmc tune: each path bundle (unfused.dmlib, drawn.dmlib, ...) also gets knob "
              "candidates of the kernels default.dmlib does not have, <path>-k<j>.dmlib ("
           << (pathCandidates == 1 ? std::string("none: --path-candidates 1")
               : pathCandidates == 0
                   ? std::string("every feasible configuration: --path-candidates 0")
                   : "the cost model's " + std::to_string(pathCandidates - 1) +
                         " cheapest others: --path-candidates " +
                         std::to_string(pathCandidates))
           << "), counted when they are written\n";
    return 0;
  }
  for (const std::string &why : skipped)
    errs() << "dmc tune: layout candidate skipped: " << why << "\n";
  std::string dir = emitDir;
  if (dir.empty()) {
    SmallString<128> tmp;
    if (std::error_code ec = sys::fs::createUniqueDirectory("dmc-tune", tmp))
      return report(fail("cannot make a temporary folder: " + ec.message()));
    dir = tmp.str().str();
  }
  if (Error e = emitCandidates(ctx, dir, n, *layouts, *candidates))
    return report(std::move(e));
  if (dbPath.empty())
    return 0;
  std::string self = sys::fs::getMainExecutable(argv0, reinterpret_cast<void *>(&runTune));
  SmallString<256> tool(sys::path::parent_path(self));
  sys::path::append(tool, "dmrt-tune");
  std::vector<std::string> args = {tool.str().str(), dir, dbPath};
  if (timeBudget)
    args.insert(args.end(), {"--time-budget", std::to_string(timeBudget)});
  std::vector<StringRef> refs(args.begin(), args.end());
  std::string error;
  int rc = sys::ExecuteAndWait(tool, refs, std::nullopt, {}, 0, 0, &error);
  if (rc < 0)
    return report(fail("cannot run " + tool + ": " + error));
  if (rc == 77)
    errs() << "dmc tune: no GPU on this machine: the candidates are in " << dir
           << "; on a GPU machine run tuning-db/tune-device.sh " << dir << " " << dbPath
           << ", then dmc compile " << model << " --db " << dbPath << "\n";
  return rc;
}

} // namespace dmc
