//===- dmc.cpp - the dmc command line -------------------------------------===//
//
//   dmc graph   MODEL.json [--train] [--emit=mlir|summary|cuda] [--stage NAME]
//   dmc eval    MODEL.json [--train] [--inputs IN.safetensors] --out OUT.safetensors
//               [--seed N] [--precision f32|f64|storage]
//   dmc report  MODEL.json [--format text|json|html] [--stage NAME]
//   dmc compile MODEL.json -o OUT.dmlib [--config FILE] [--print-config]
//               [--db DB [--db-device NAME]]
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelEmitter.h"
#include "codegen/KernelSchedule.h"
#include "codegen/target/GpuTarget.h"
#include "compiler/Driver.h"
#include "compiler/bundle/BundleWriter.h"
#include "compiler/bundle/PathSearch.h"
#include "compiler/bundle/DatabaseKnobs.h"
#include "compiler/bundle/KernelModelReport.h"
#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/ConfigPaths.h"
#include "compiler/GraphSummary.h"
#include "compiler/TensorIO.h"
#include "compiler/TuneCommand.h"
#include "compiler/report/Report.h"
#include "compiler/report/TuningReport.h"
#include "passes/SaveDropoutBits.h"

#include "ir/Signature.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

namespace {

cl::OptionCategory dmcCategory("dmc options");
cl::SubCommand graphCmd("graph", "Build a layer's dataflow graph and print it as MLIR or a "
                                 "summary (ops by kind and class, parameters, flop)");
cl::SubCommand reportCmd("report", "Operator classes, fusion groups, flop and bytes moved "
                                   "per kernel, and the data movement fusion saves");
cl::SubCommand compileCmd("compile", "Compile the training layer into a bundle: CUDA kernels "
                                     "(NVRTC cubins), cuBLASLt descriptors and a manifest");
cl::SubCommand evalCmd("eval", "Run a layer on the CPU with the reference interpreter; "
                               "tensors missing from --inputs are generated from --seed "
                               "and written to --out");

cl::opt<std::string> modelPath(cl::Positional, cl::desc("MODEL.json"), cl::Required,
                               cl::sub(graphCmd), cl::sub(evalCmd), cl::sub(reportCmd),
                               cl::sub(compileCmd), cl::cat(dmcCategory));
cl::opt<bool> train("train", cl::desc("Training graph: forward + backward (dm-autodiff)"),
                    cl::sub(graphCmd), cl::sub(evalCmd), cl::cat(dmcCategory));

cl::opt<std::string> stageOpt("stage",
                              cl::desc("Stop after this stage: frontend, stack, autodiff, "
                                       "classify, fuse, config"),
                              cl::init("autodiff"), cl::value_desc("NAME"), cl::sub(graphCmd),
                              cl::sub(evalCmd), cl::cat(dmcCategory));

enum class Format { Text, Json, Html };
cl::opt<Format> format("format", cl::desc("Report format"), cl::init(Format::Text),
                       cl::values(clEnumValN(Format::Text, "text", "tables for people"),
                                  clEnumValN(Format::Json, "json",
                                             "for tools (docs/report-schema.md)"),
                                  clEnumValN(Format::Html, "html",
                                             "one self-contained page with the dataflow "
                                             "graph")),
                       cl::sub(reportCmd), cl::cat(dmcCategory));
cl::opt<std::string> reportOut("o", cl::desc("Write the report to FILE (default: stdout)"),
                               cl::value_desc("FILE"), cl::init("-"), cl::sub(reportCmd),
                               cl::cat(dmcCategory));
cl::opt<std::string> reportStage("stage", cl::desc("Stop after this stage: frontend, stack, "
                                                   "autodiff, classify, fuse, config"),
                                 cl::init("config"), cl::value_desc("NAME"), cl::sub(reportCmd),
                                 cl::cat(dmcCategory));

cl::opt<std::string> bundleOut("o", cl::desc("The bundle directory to write (optional with "
                                             "--print-config)"),
                               cl::value_desc("OUT.dmlib"), cl::sub(compileCmd),
                               cl::cat(dmcCategory));
cl::opt<bool> printConfig("print-config",
                          cl::desc("Print the configuration (config.json: layouts, kernel "
                                   "knobs, cuBLASLt forms, transposes) to stdout"),
                          cl::sub(compileCmd), cl::cat(dmcCategory));
cl::opt<std::string> configFile("config",
                                cl::desc("Use this configuration (docs/config-format.md) "
                                         "instead of the default pass dm-default-layouts"),
                                cl::value_desc("FILE"), cl::sub(compileCmd),
                                cl::cat(dmcCategory));
cl::opt<bool> noEpilogues("no-epilogues",
                          cl::desc("Keep bias adds and bias gradients in their own kernels "
                                   "instead of cuBLASLt epilogues (dm-gemm-epilogues off)"),
                          cl::sub(compileCmd), cl::sub(reportCmd), cl::sub(graphCmd),
                          cl::sub(evalCmd), cl::cat(dmcCategory));
cl::opt<bool> noFusedAttention(
    "no-fused-attention",
    cl::desc("Keep attention as contractions and softmax kernels, saving the probabilities "
             "(dm-fuse-attention off)"),
    cl::sub(compileCmd), cl::sub(reportCmd), cl::sub(graphCmd), cl::sub(evalCmd),
    cl::cat(dmcCategory));
cl::opt<bool> noColumnFusion(
    "no-column-fusion",
    cl::desc("Keep column sums (layer-norm parameter gradients) in kernels of their own "
             "instead of the row kernel reading the same tensors (dm-fuse-column-reductions "
             "off)"),
    cl::sub(compileCmd), cl::sub(reportCmd), cl::sub(graphCmd), cl::sub(evalCmd),
    cl::cat(dmcCategory));
cl::opt<bool> noDropoutBits(
    "no-dropout-bits",
    cl::desc("Have backward kernels draw their dropout masks again instead of reading the keep "
             "bits the forward kernel saved (dm-save-dropout-bits off)"),
    cl::sub(compileCmd), cl::sub(reportCmd), cl::sub(graphCmd), cl::sub(evalCmd),
    cl::cat(dmcCategory));
cl::list<int64_t> drawDropouts(
    "draw-dropout",
    cl::desc("With keep bits saved, have this dropout's backward kernels draw its mask again "
             "all the same (its id as in its tensor dropout<ID>.keep_bits; a list: "
             "1,3); dmc compile --db chooses for every other dropout"),
    cl::value_desc("ID"), cl::CommaSeparated, cl::sub(compileCmd), cl::sub(reportCmd),
    cl::sub(graphCmd), cl::sub(evalCmd), cl::cat(dmcCategory));
cl::opt<bool> stackInPlace(
    "stack-in-place",
    cl::desc("Have the producers of stacked tensors (the Q, K and V gradients) write into the "
             "stacked buffer instead of copying them in a kernel (dm-stack-in-place; with "
             "--db, priced against the copy)"),
    cl::sub(compileCmd), cl::sub(reportCmd), cl::sub(graphCmd), cl::sub(evalCmd),
    cl::cat(dmcCategory));
cl::opt<bool> noGemmAddends(
    "no-gemm-addends",
    cl::desc("Keep a sum of a contraction's result and another tensor in a kernel instead "
             "of cuBLASLt's C with beta 1 (dm-gemm-epilogues' accumulate off); dmc compile "
             "--db prices both and keeps the faster"),
    cl::sub(compileCmd), cl::sub(reportCmd), cl::sub(graphCmd), cl::sub(evalCmd),
    cl::cat(dmcCategory));
cl::opt<std::string> biasGrads(
    "bias-grads",
    cl::desc("Which bias gradients go into their GEMM's cuBLASLt epilogue: saving (default: "
             "where the kernel then moves fewer bytes), all (every one cuBLASLt computes) or "
             "none (column sums in kernels); dmc compile --db prices the three and keeps the "
             "fastest"),
    cl::init("saving"), cl::value_desc("MODE"), cl::sub(compileCmd), cl::sub(reportCmd),
    cl::sub(graphCmd), cl::sub(evalCmd), cl::cat(dmcCategory));

/// cl::desc keeps a StringRef: the text lives as long as the program.
const std::string &targetHelp() {
  static const std::string text = "The GPU to configure kernels for (its SMs and shared "
                                  "memory): " +
                                  dmcgen::targetNames() +
                                  " (default: the first of --arch's, h100 for sm_90a)";
  return text;
}
cl::opt<std::string> target(
    "target", cl::desc(targetHelp()),
    cl::value_desc("NAME"), cl::sub(compileCmd), cl::sub(reportCmd), cl::sub(graphCmd),
    cl::cat(dmcCategory));

/// The optional passes and the target as the command line chose them.
dmc::PipelineOptions pipelineOptions();

cl::opt<std::string> arch("arch", cl::desc("GPU architecture: sm_80, sm_89, sm_90, sm_90a, sm_100"),
                          cl::init("sm_90a"), cl::sub(compileCmd), cl::cat(dmcCategory));
cl::opt<bool> withReference("reference",
                            cl::desc("Also write per-kernel inputs and interpreter outputs "
                                     "(reference/) for validating on a GPU"),
                            cl::sub(compileCmd), cl::cat(dmcCategory));

cl::opt<int64_t> referenceSamples(
    "reference-samples",
    cl::desc("With --reference: store at most N elements of each reference output, every "
             "k-th one (default 262144)"),
    cl::init(1 << 18), cl::value_desc("N"), cl::sub(compileCmd), cl::cat(dmcCategory));

cl::opt<int> configIndex("config-index",
                          cl::desc("Compile each kernel in its N-th feasible configuration "
                                   "instead of the default (for sweeps)"),
                          cl::init(-1), cl::value_desc("N"), cl::sub(compileCmd),
                          cl::cat(dmcCategory));

cl::opt<std::string> dbFile("db",
                            cl::desc("Give each kernel its fastest knobs measured in this tuning "
                                     "database (docs/tuning-db-format.md)"),
                            cl::value_desc("DB.jsonl"), cl::sub(compileCmd), cl::cat(dmcCategory));
cl::opt<std::string> dbReport(
    "db-report",
    cl::desc("With --db: also write an HTML page of each kernel's measured configurations "
             "(violin plots, default and fastest marked)"),
    cl::value_desc("OUT.html"), cl::sub(compileCmd), cl::cat(dmcCategory));
cl::opt<std::string> dbDevice("db-device",
                              cl::desc("With --db: the device whose records to use (default: "
                                       "the database's only device)"),
                              cl::value_desc("NAME"), cl::sub(compileCmd), cl::cat(dmcCategory));

enum class Emit { Mlir, Summary, Cuda, Schedule };
cl::opt<Emit> emit("emit", cl::desc("What to print"), cl::init(Emit::Summary),
                   cl::values(clEnumValN(Emit::Mlir, "mlir", "the dm dialect IR"),
                              clEnumValN(Emit::Summary, "summary",
                                         "op counts by kind and class, parameters, flop"),
                              clEnumValN(Emit::Cuda, "cuda",
                                         "CUDA C++ of every fused kernel (default "
                                         "configuration; needs --stage fuse or config)"),
                              clEnumValN(Emit::Schedule, "schedule",
                                         "every fused kernel's schedule as data: its loop "
                                         "nest, passes, reads, reductions and stores "
                                         "(default configuration; needs --stage fuse or "
                                         "config)")),
                   cl::sub(graphCmd), cl::cat(dmcCategory));

cl::opt<std::string> inputsPath("inputs", cl::desc("safetensors file with inputs, "
                                                   "parameters and upstream gradients"),
                                cl::value_desc("IN.safetensors"), cl::sub(evalCmd),
                                cl::cat(dmcCategory));
cl::opt<std::string> outPath("out", cl::desc("where to write every argument and result"),
                             cl::value_desc("OUT.safetensors"), cl::Required,
                             cl::sub(evalCmd), cl::cat(dmcCategory));
cl::opt<uint64_t> seed("seed", cl::desc("seed of generated tensors and of dropout"),
                       cl::init(0), cl::sub(evalCmd), cl::cat(dmcCategory));
cl::opt<dmc::Precision> precision(
    "precision", cl::desc("arithmetic of the interpreter"), cl::init(dmc::Precision::F32),
    cl::values(clEnumValN(dmc::Precision::F32, "f32", "float"),
               clEnumValN(dmc::Precision::F64, "f64", "double"),
               clEnumValN(dmc::Precision::Storage, "storage",
                          "float, with every tensor stored in memory (arguments, "
                          "kernel and contraction outputs) rounded to the model's "
                          "dtype as the GPU stores it; with --stage fuse, what a "
                          "compiled bundle computes (written as F32)")),
    cl::sub(evalCmd), cl::cat(dmcCategory));

int report(Error err) {
  WithColor::error(errs(), "dmc") << toString(std::move(err)) << "\n";
  return 1;
}

/// The stage named by `name`, or an error listing the valid ones.
Expected<dmc::Stage> stage(StringRef name = stageOpt) {
  if (auto s = dmc::parseStage(name))
    return *s;
  return createStringError(inconvertibleErrorCode(), "unknown stage '" + name +
                                                         "'; expected one of " +
                                                         dmc::stageNames());
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>> build(mlir::MLIRContext &ctx) {
  Expected<dmc::Stage> last = stage();
  if (!last)
    return last.takeError();
  return dmc::buildGraph(ctx, modelPath, train, *last, pipelineOptions());
}

int printCuda(mlir::func::FuncOp f) {
  int n = 0;
  for (auto kernel : f.getOps<dmc::dm::KernelOp>()) {
    auto emitted = dmc::codegen::emitKernel(kernel, dmc::bundle::knobsOf(kernel),
                                            dmc::bundle::kernelName(n++, kernel));
    if (!emitted)
      return report(emitted.takeError());
    outs() << "// ---- grid " << emitted->grid;
    if (emitted->gridY > 1 || emitted->gridZ > 1)
      outs() << "x" << emitted->gridY << "x" << emitted->gridZ;
    outs() << ", block " << emitted->blockX << "x" << emitted->blockY;
    if (emitted->sharedBytes > 0)
      outs() << ", " << emitted->sharedBytes << " bytes of shared memory";
    outs() << "\n" << emitted->source << "\n";
  }
  if (n == 0)
    return report(createStringError(inconvertibleErrorCode(),
                                    "no fused kernels: --emit=cuda needs --stage fuse"));
  return 0;
}

int printSchedules(mlir::func::FuncOp f) {
  int n = 0;
  for (auto kernel : f.getOps<dmc::dm::KernelOp>()) {
    auto text = dmc::codegen::describeKernel(kernel, dmc::bundle::knobsOf(kernel));
    if (!text)
      return report(text.takeError());
    outs() << dmc::bundle::kernelName(n++, kernel) << ": " << *text;
  }
  if (n == 0)
    return report(createStringError(inconvertibleErrorCode(),
                                    "no fused kernels: --emit=schedule needs --stage fuse"));
  return 0;
}

int runGraph(mlir::MLIRContext &ctx) {
  auto module = build(ctx);
  if (!module)
    return report(module.takeError());
  if (emit == Emit::Mlir)
    (*module)->print(outs());
  else if (emit == Emit::Cuda)
    return printCuda(dmc::layerFunction(**module));
  else if (emit == Emit::Schedule)
    return printSchedules(dmc::layerFunction(**module));
  else
    dmc::printSummary(dmc::layerFunction(**module), outs());
  return 0;
}

int runEval(mlir::MLIRContext &ctx) {
  auto module = build(ctx);
  if (!module)
    return report(module.takeError());
  mlir::func::FuncOp f = dmc::layerFunction(**module);
  std::vector<dmc::HostTensor> args(f.getNumArguments());
  std::vector<bool> provided(f.getNumArguments(), false);
  if (!inputsPath.empty())
    if (Error e = dmc::readArguments(f, inputsPath, precision, args, provided))
      return report(std::move(e));
  for (unsigned n = 0; n < f.getNumArguments(); ++n)
    if (!provided[n])
      args[n] = dmc::generateArgument(f, n, seed, precision);
  auto results = dmc::interpret(f, args, {precision, seed});
  if (!results)
    return report(results.takeError());
  std::map<std::string, std::string> metadata = {
      {"model", modelPath},
      {"seed", std::to_string(seed)},
      {"precision", dmc::precisionName(precision)},
      {"graph", train ? "training" : "forward"}};
  if (Error e = dmc::writeValues(f, outPath, args, *results, precision, metadata))
    return report(std::move(e));
  errs() << "dmc eval: wrote " << args.size() + results->size() << " tensors to " << outPath
         << "\n";
  return 0;
}

int runReport(mlir::MLIRContext &ctx) {
  Expected<dmc::Stage> last = stage(reportStage);
  if (!last)
    return report(last.takeError());
  auto analysis = dmc::report::analyzeModel(ctx, modelPath, *last, pipelineOptions());
  if (!analysis)
    return report(analysis.takeError());
  std::error_code ec;
  raw_fd_ostream os(reportOut, ec);
  if (ec)
    return report(createStringError(ec, reportOut + ": cannot write: " + ec.message()));
  if (format == Format::Text)
    dmc::report::printText(*analysis, os);
  else if (format == Format::Json)
    dmc::report::printJson(*analysis, os);
  else
    dmc::report::printHtml(*analysis, os);
  return 0;
}

/// The fused training graph built with `pipeline` and `config` applied
/// (`origin` names it in errors). `checkForms` false: the contractions' forms
/// follow from the layouts (a configuration the database selection moved).
Expected<mlir::OwningOpRef<mlir::ModuleOp>> graphWithConfig(mlir::MLIRContext &ctx,
                                                            const dmrt::Configuration &config,
                                                            const std::string &origin,
                                                            const dmc::PipelineOptions &pipeline,
                                                            bool checkForms = true) {
  auto module = dmc::buildGraph(ctx, modelPath, /*train=*/true, dmc::Stage::Fuse, pipeline);
  if (!module)
    return module.takeError();
  if (Error e = dmc::bundle::applyConfiguration(dmc::layerFunction(**module), config, origin,
                                                checkForms, pipeline.stackInPlace,
                                                pipeline.dropoutBits))
    return e;
  return module;
}

/// The fused training graph built with `pipeline`, configured by `--config
/// FILE`, else by the default pass. A file's `paths` take the place of
/// `pipeline`'s path choices; a path flag given with it must agree.
Expected<mlir::OwningOpRef<mlir::ModuleOp>> configuredGraph(mlir::MLIRContext &ctx,
                                                            const dmc::PipelineOptions &pipeline) {
  if (configFile.empty())
    return dmc::buildGraph(ctx, modelPath, /*train=*/true, dmc::Stage::Config, pipeline);
  if (noEpilogues)
    return createStringError(inconvertibleErrorCode(),
                             "--no-epilogues and --config: the configuration file says which "
                             "contractions run an epilogue (set their \"epilogue\" to \"none\")");
  auto text = MemoryBuffer::getFile(configFile);
  if (!text)
    return createStringError(text.getError(),
                             configFile + ": cannot read: " + text.getError().message());
  dmrt::Configuration config;
  std::string error;
  if (!dmrt::parseConfig((*text)->getBuffer().str(), configFile, config, error))
    return createStringError(inconvertibleErrorCode(), error);
  dmc::PipelineOptions filePipeline = pipeline;
  if (config.hasPaths) {
    const auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
    if (Error e = dmc::bundle::checkPathFlags(
            config.paths, configFile,
            {{"--no-fused-attention", noFusedAttention.getNumOccurrences() > 0,
              "fused_attention", flag(!noFusedAttention)},
             {"--no-column-fusion", noColumnFusion.getNumOccurrences() > 0, "column_fusion",
              flag(!noColumnFusion)},
             {"--bias-grads " + biasGrads, biasGrads.getNumOccurrences() > 0, "bias_grads",
              biasGrads},
             {"--no-gemm-addends", noGemmAddends.getNumOccurrences() > 0, "gemm_addends",
              flag(!noGemmAddends)},
             {"--stack-in-place", stackInPlace.getNumOccurrences() > 0, "stack_in_place",
              flag(stackInPlace)}}))
      return std::move(e);
    dmc::bundle::applyConfigPaths(config.paths, filePipeline);
  }
  return graphWithConfig(ctx, config, configFile, filePipeline);
}

dmc::PipelineOptions pipelineOptions() {
  dmc::PipelineOptions o;
  o.epilogues = !noEpilogues;
  o.fusedAttention = !noFusedAttention;
  o.columnFusion = !noColumnFusion;
  o.gemmAddends = !noGemmAddends;
  o.stackInPlace = stackInPlace;
  o.dropoutBits = !noDropoutBits;
  o.drawnDropouts.assign(drawDropouts.begin(), drawDropouts.end());
  o.biasGrads = biasGrads;
  if (!target.empty())
    o.target = target;
  else if (auto t = dmcgen::defaultTargetFor(arch))
    o.target = t->name;
  o.arch = arch;
  return o;
}

/// --draw-dropout: keep bits saved, no --config (which says which dropouts
/// save them), and ids of dropouts that can save them (SaveDropoutBits.h).
Error checkDrawDropouts(mlir::MLIRContext &ctx) {
  if (noDropoutBits)
    return createStringError(inconvertibleErrorCode(),
                             "--draw-dropout and --no-dropout-bits: every dropout is drawn "
                             "again already");
  if (compileCmd && !configFile.empty())
    return createStringError(inconvertibleErrorCode(),
                             "--draw-dropout and --config: the configuration says which "
                             "dropouts save their keep bits (the dropout<ID>.keep_bits tensors "
                             "it lists)");
  dmc::PipelineOptions all = pipelineOptions();
  all.drawnDropouts.clear();
  auto module = dmc::buildGraph(ctx, modelPath, /*train=*/true, dmc::Stage::Fuse, all);
  if (!module)
    return module.takeError();
  std::set<int64_t> ids = dmc::savableDropouts(dmc::layerFunction(**module));
  for (int64_t id : drawDropouts)
    if (!ids.count(id)) {
      std::string known;
      for (int64_t k : ids)
        known += (known.empty() ? "" : ", ") + std::to_string(k);
      return createStringError(
          inconvertibleErrorCode(),
          "--draw-dropout " + std::to_string(id) + ": " + modelPath.getValue() +
              " has no dropout " + std::to_string(id) +
              " whose keep bits a later kernel could read (" +
              (known.empty() ? "none has" : "those that have: " + known) + ")");
    }
  return Error::success();
}

int runCompile(mlir::MLIRContext &ctx) {
  if (bundleOut.empty() && !printConfig) {
    errs() << "dmc compile: give -o OUT.dmlib (or --print-config)\n";
    return 1;
  }
  dmc::PipelineOptions pipeline = pipelineOptions();
  auto module = configuredGraph(ctx, pipeline);
  if (!module)
    return report(module.takeError());
  const std::string compiledShape = dmc::stepShape(dmc::layerFunction(**module));
  if (printConfig && bundleOut.empty()) {
    auto config = dmc::bundle::extractConfiguration(dmc::layerFunction(**module),
                                                    sys::path::stem(modelPath));
    if (!config)
      return report(config.takeError());
    outs() << dmrt::writeConfig(*config);
    return 0;
  }
  if (!dbFile.empty() && (!configFile.empty() || configIndex >= 0 || bundleOut.empty())) {
    errs() << "dmc compile: --db needs -o OUT.dmlib and chooses the knobs itself (not with "
              "--config or --config-index)\n";
    return 1;
  }
  if (dbFile.empty() && (!dbDevice.empty() || !dbReport.empty())) {
    errs() << "dmc compile: --db-device and --db-report need --db\n";
    return 1;
  }
  dmc::bundle::BundleOptions options;
  options.arch = arch;
  options.reference = withReference;
  if (referenceSamples < 1) {
    errs() << "dmc compile: --reference-samples must be at least 1, got " << referenceSamples
           << "\n";
    return 1;
  }
  options.referenceSamples = referenceSamples;
  options.configIndex = configIndex;
  options.modelName = sys::path::stem(modelPath).str();
  // With --db: the default bundle (without references: they are written once, with
  // the bundle that stays), its kernels looked up in the database, then the chosen one.
  dmc::bundle::BundleOptions first = options;
  first.reference = options.reference && dbFile.empty();
  dmc::bundle::WrittenBundle written;
  if (Error e = dmc::bundle::writeBundle(dmc::layerFunction(**module), bundleOut, first, errs(),
                                         &written))
    return report(std::move(e));
  if (!dbFile.empty()) {
    dmrt::Configuration tuned;
    bool changed = false;
    dmc::bundle::DatabaseView view;
    if (Error e = dmc::bundle::knobsFromDatabase(written, dbFile, dbDevice, tuned, changed,
                                                 errs(), &view))
      return report(std::move(e));
    errs() << dmc::bundle::modelAgainstMeasurements(dmc::layerFunction(**module), view.selection)
                  .describe();
    if (!dbReport.empty()) {
      if (Error e = dmc::report::writeTuningReport(view.selection, view.device,
                                                   sys::path::stem(modelPath).str(), dbFile,
                                                   dbReport))
        return report(std::move(e));
      errs() << "dmc compile: wrote " << dbReport << "\n";
    }
    // Each pass that has an alternative, one after the other (PathSearch.h).
    std::set<int64_t> dropouts;
    for (const dmrt::ConfigTensor &t : written.configuration.tensors)
      if (std::optional<int64_t> id = dmc::keepBitsDropout(t.name))
        if (!llvm::is_contained(pipeline.drawnDropouts, *id))
          dropouts.insert(*id);
    // The whole-step calibration is the default path's default configuration's:
    // the path choices below look other graphs up.
    const double defaultMeasuredUs = view.defaultMeasuredUs,
                 defaultPredictedUs = view.defaultPredictedUs;
    dmc::bundle::PathState path{pipeline, std::move(tuned), std::move(view), compiledShape,
                                changed};
    if (Error e = dmc::bundle::choosePaths(
            [&](const dmc::PipelineOptions &p) { return configuredGraph(ctx, p); }, options,
            dbFile, dbDevice, dropouts, path, errs()))
      return report(std::move(e));
    pipeline = path.pipeline;
    tuned = std::move(path.config);
    view = std::move(path.view);
    changed = path.changed;
    if (changed)
      module = graphWithConfig(ctx, tuned, dbFile, pipeline, /*checkForms=*/false);
    if (!module)
      return report(module.takeError());
    // The chosen path's prediction goes into config.json (dmc-run --bench
    // compares it with the measured step) when every step had a record.
    options.hasPrediction = view.predictedStepUs >= 0;
    if (options.hasPrediction) {
      options.prediction = {view.device, dbFile, view.predictedForwardUs,
                            view.predictedBackwardUs, view.predictedSteps,
                            defaultMeasuredUs, defaultPredictedUs};
      // The path choices above may have moved it from the first "predicted step".
      errs() << formatv("dmc compile: the configuration written predicts {0:F1} us (forward "
                        "{1:F1} + backward {2:F1}; config.json `prediction`)",
                        view.predictedStepUs, view.predictedForwardUs, view.predictedBackwardUs);
      if (options.prediction.calibrated())
        errs() << formatv(", calibrated by the default's whole step x{0:F3}: {1:F1} us",
                          options.prediction.calibration(),
                          options.prediction.calibration() * view.predictedStepUs);
      errs() << "\n";
    }
    if (changed || options.reference) {
      if (Error e = dmc::bundle::writeBundle(dmc::layerFunction(**module), bundleOut, options,
                                             errs()))
        return report(std::move(e));
    } else if (options.hasPrediction) { // the default bundle stays: only config.json changes
      written.configuration.hasPrediction = true;
      written.configuration.prediction = options.prediction;
      if (Error e = dmc::bundle::writeConfigFile(bundleOut, written.configuration))
        return report(std::move(e));
    }
  }
  if (printConfig) { // what the bundle got (with --config-index: the swept knobs)
    auto written = MemoryBuffer::getFile(bundleOut + "/config.json");
    if (!written)
      return report(createStringError(written.getError(),
                                      bundleOut + "/config.json: " + written.getError().message()));
    outs() << (*written)->getBuffer();
  }
  return 0;
}

} // namespace

/// `dmc db ...` is the dmc-db tool next to this binary (tuning-db/tools/dmc-db.cpp),
/// which the MLIR-free GPU build has too.
int runDb(int argc, char **argv) {
  std::string self = sys::fs::getMainExecutable(argv[0], reinterpret_cast<void *>(&runDb));
  SmallString<256> tool(sys::path::parent_path(self));
  sys::path::append(tool, "dmc-db");
  std::vector<StringRef> args = {tool};
  for (int i = 2; i < argc; ++i)
    args.push_back(argv[i]);
  std::string error;
  int rc = sys::ExecuteAndWait(tool, args, std::nullopt, {}, 0, 0, &error);
  if (rc < 0)
    errs() << "dmc db: cannot run " << tool << ": " << error << "\n";
  return rc < 0 ? 1 : rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && StringRef(argv[1]) == "db")
    return runDb(argc, argv);
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(dmcCategory);
  cl::HideUnrelatedOptions(dmcCategory, graphCmd);
  cl::HideUnrelatedOptions(dmcCategory, evalCmd);
  cl::HideUnrelatedOptions(dmcCategory, reportCmd);
  cl::HideUnrelatedOptions(dmcCategory, compileCmd);
  cl::HideUnrelatedOptions(dmc::tuneCategory(), dmc::tuneSubCommand());
  cl::ParseCommandLineOptions(argc, argv,
                              "dmc: dataflow-graph compiler and autotuner for transformer "
                              "layers\n\n  dmc graph MODEL.json [--train] [--emit=...]\n"
                              "  dmc eval MODEL.json [--train] --out OUT.safetensors ...\n"
                              "  dmc tune MODEL.json --dry-run | --emit-candidates DIR | --db DB\n"
                              "  dmc db show|merge|prune|export|import ... (the tuning database; "
                              "dmc db --help)\n\n"
                              "Run 'dmc <command> --help' for a command's options.\n");
  if (biasGrads != "saving" && biasGrads != "all" && biasGrads != "none") {
    errs() << "dmc: --bias-grads is '" << biasGrads << "': expected saving, all or none\n";
    return 2;
  }
  mlir::MLIRContext ctx;
  if (!drawDropouts.empty())
    if (Error e = checkDrawDropouts(ctx))
      return report(std::move(e));
  if (graphCmd)
    return runGraph(ctx);
  if (evalCmd)
    return runEval(ctx);
  if (reportCmd)
    return runReport(ctx);
  if (compileCmd)
    return runCompile(ctx);
  if (dmc::tuneSubCommand())
    return dmc::runTune(ctx, argv[0]);
  errs() << "dmc: no command given; expected 'graph', 'eval', 'report', 'compile', 'tune' or 'db' (see dmc --help)\n";
  return 1;
}
