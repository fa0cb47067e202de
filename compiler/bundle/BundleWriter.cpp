//===- BundleWriter.cpp - `dmc compile`: a layer as a loadable bundle -----===//
#include "compiler/bundle/BundleWriter.h"

#include <algorithm>

#include "codegen/KernelEmitter.h"
#include "codegen/gemm/GemmMapping.h"
#include "codegen/nvrtc/NvrtcCompiler.h"
#include "compiler/GraphSummary.h"
#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/MemoryPlan.h"
#include "compiler/bundle/Reference.h"
#include "compiler/bundle/TensorTable.h"
#include "compiler/report/DataMovement.h"
#include "ir/IterationSpace.h"
#include "ir/StorageType.h"
#include "runtime/format/Config.h"
#include "runtime/format/Manifest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <chrono>

// Manifest version 4: cubin checksums, argument initialisation.
#include "compiler/TensorIO.h"
#include "runtime/format/Checksum.h"

using namespace mlir;

namespace dmc::bundle {
namespace {

int64_t bytes(Type t) { return cast<dm::TensorType>(t).getSizeInBytes(); }

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Error writeFile(llvm::StringRef path, llvm::StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fail(path + ": cannot write: " + ec.message());
  os << data;
  return llvm::Error::success();
}

dmcgen::TensorLayout layoutOf(Type t) {
  auto tt = cast<dm::TensorType>(t);
  return {tt.getNames().str(), std::vector<int64_t>(tt.getShape().begin(), tt.getShape().end())};
}

std::vector<int64_t> ids(const TensorTable &table, ValueRange values) {
  std::vector<int64_t> out;
  for (Value v : values)
    out.push_back(table.idOf(v));
  return out;
}

} // namespace

llvm::Error writeBundle(func::FuncOp f, llvm::StringRef dir, const BundleOptions &options,
                        llvm::raw_ostream &log) {
  auto table = TensorTable::build(f);
  if (!table)
    return table.takeError();
  // The configuration (config.json): layouts, knobs, cuBLASLt forms.
  auto configuration = extractConfiguration(f, options.modelName);
  if (!configuration)
    return configuration.takeError();
  for (const char *sub : {"kernels", "reference"})
    if (std::error_code ec = llvm::sys::fs::create_directories(llvm::Twine(dir) + "/" + sub))
      return fail(dir + ": cannot create the bundle directory: " + ec.message());
  llvm::DenseSet<Operation *> bwd = backwardOps(f);
  report::GraphCost cost = report::costOf(f);
  auto phase = [&](Operation *op) { return bwd.contains(op) ? "backward" : "forward"; };

  // Kernels: emit all, then compile in parallel.
  std::vector<dm::KernelOp> kernels;
  std::vector<codegen::EmittedKernel> emitted;
  std::vector<dmcgen::CompileJob> jobs;
  std::vector<codegen::KernelConfig> configs;
  for (auto kernel : f.getOps<dm::KernelOp>()) {
    int n = kernels.size();
    auto config = knobsOf(kernel); // what configuration->kernels[n] says
    if (options.configIndex >= 0) {
      auto all = codegen::enumerateConfigs(codegen::spaceOf(kernel));
      config = all[options.configIndex % all.size()];
      dmrt::ConfigKernel &knobs = configuration->kernels[n];
      knobs.laneDim = config.laneDim ? std::string(1, config.laneDim) : "";
      knobs.tx = config.tx;
      knobs.ty = config.ty;
      knobs.perThread = config.perThread;
      knobs.vec = config.vec;
      knobs.split = config.split;
      knobs.describe = config.describe();
    }
    configs.push_back(config);
    auto k = codegen::emitKernel(kernel, config,
                                 "k" + std::to_string(n) + "_" + kernel.getName().str());
    if (!k)
      return k.takeError();
    jobs.push_back({k->entry, k->source});
    kernels.push_back(kernel);
    emitted.push_back(std::move(*k));
  }
  dmcgen::CompileOptions nvrtc;
  nvrtc.arch = options.arch;
  nvrtc.cacheDir = dmcgen::defaultCacheDir();
  log << "dmc compile: " << jobs.size() << " kernels through NVRTC " << dmcgen::nvrtcVersion()
      << " for " << options.arch << "\n";
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors;
  auto cubins = dmcgen::compileAll(jobs, nvrtc, options.threads, errors);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string &e : errors)
    if (!e.empty())
      return fail(e);
  int cached = 0;
  for (const auto &c : cubins)
    cached += c.fromCache;
  std::vector<double> each;
  for (const auto &c : cubins)
    each.push_back(c.seconds);
  std::sort(each.begin(), each.end());
  double median = each.empty() ? 0
                  : each.size() % 2 ? each[each.size() / 2]
                                    : (each[each.size() / 2 - 1] + each[each.size() / 2]) / 2;
  log << llvm::formatv("dmc compile: compiled in {0:f2} s ({1} from the cache); per kernel: "
                       "median {2:f3} s, slowest {3:f3} s\n",
                       seconds, cached, median, each.empty() ? 0.0 : each.back());

  dmrt::Manifest manifest;
  manifest.model = options.modelName;
  manifest.arch = options.arch;
  manifest.nvrtc = dmcgen::nvrtcVersion();
  for (size_t n = 0; n < kernels.size(); ++n) {
    std::string base = (dir + "/kernels/k" + std::to_string(n)).str();
    if (llvm::Error e = writeFile(base + ".cu", emitted[n].source))
      return e;
    if (llvm::Error e = writeFile(base + ".cubin", llvm::StringRef(cubins[n].cubin.data(),
                                                                  cubins[n].cubin.size())))
      return e;
    const codegen::EmittedKernel &k = emitted[n];
    dmrt::BundleKernel bk;
    bk.id = int64_t(n);
    bk.name = kernels[n].getName().str();
    bk.entry = k.entry;
    bk.cubin = "kernels/k" + std::to_string(n) + ".cubin";
    bk.source = "kernels/k" + std::to_string(n) + ".cu";
    bk.grid[0] = k.grid;
    bk.grid[1] = k.gridY;
    bk.block[0] = k.blockX;
    bk.block[1] = k.blockY;
    bk.sharedBytes = k.sharedBytes;
    bk.cubinBytes = int64_t(cubins[n].cubin.size());
    bk.cubinChecksum = dmrt::fnv1a64(cubins[n].cubin.data(), cubins[n].cubin.size());
    bk.workspaceBytes = k.workspaceBytes;
    bk.config = configs[n].describe();
    bk.phase = phase(kernels[n]);
    bk.inputs = ids(*table, kernels[n].getInputs());
    bk.outputs = ids(*table, kernels[n].getResults());
    manifest.kernels.push_back(std::move(bk));
  }
  // Kernel flop and bytes, from the analysis of each kernel op.
  {
    llvm::DenseMap<Operation *, const report::WorkItem *> unitOf;
    for (const report::WorkItem &w : cost.items)
      unitOf[w.op] = &w;
    for (size_t n = 0; n < kernels.size(); ++n)
      if (const report::WorkItem *w = unitOf.lookup(kernels[n].getOperation())) {
        manifest.kernels[n].flop = w->flop;
        manifest.kernels[n].bytes = w->ioLowerBound;
      }
  }

  std::vector<dm::ContractOp> contractions;
  for (auto c : f.getOps<dm::ContractOp>()) {
    dmcgen::Contraction spec;
    spec.a = layoutOf(c.getLhs().getType());
    spec.b = layoutOf(c.getRhs().getType());
    spec.d = layoutOf(c.getType());
    spec.alpha = c.getScale().convertToDouble();
    dmrt::BundleContraction bc;
    bc.mappable = dmcgen::mapContraction(spec, bc.gemm, bc.unmappable);
    if (bc.mappable)
      bc.gemmDescription = bc.gemm.describe();
    else
      bc.gemm = {};
    bc.id = int64_t(contractions.size());
    bc.equation = spec.a.dims + "," + spec.b.dims + "->" + spec.d.dims;
    bc.phase = phase(c);
    bc.a = table->idOf(c.getLhs());
    bc.b = table->idOf(c.getRhs());
    bc.d = table->idOf(c.getResult());
    bc.alpha = spec.alpha;
    bc.flop = dm::analyticFlop(cast<dm::IterationSpaceOpInterface>(c.getOperation()));
    bc.bytes = bytes(c.getLhs().getType()) + bytes(c.getRhs().getType()) + bytes(c.getType());
    if (!bc.mappable)
      log << "dmc compile: warning: contraction " << bc.equation
          << " has no cuBLASLt form: " << bc.unmappable << "\n";
    manifest.contractions.push_back(std::move(bc));
    contractions.push_back(c);
  }

  for (const TensorInfo &t : table->tensors()) {
    auto tt = cast<dm::TensorType>(t.value.getType());
    std::optional<dmrt::DType> dtype = dm::storageDType(tt);
    if (!dtype || *dtype == dmrt::DType::F64)
      return fail("tensor " + t.name + ": element type " +
                  llvm::formatv("{0}", tt.getElementType()) +
                  " has no bundle dtype (bf16, f16, f32, i32)");
    dmrt::BundleTensor bt;
    bt.id = t.id;
    bt.name = t.name;
    bt.role = t.role;
    bt.dims = tt.getNames().str();
    bt.shape.assign(tt.getShape().begin(), tt.getShape().end());
    bt.dtype = *dtype;
    bt.bytes = bytes(tt);
    bt.isAlias = t.aliasOf >= 0;
    bt.aliasOf = t.aliasOf;
    bt.aliasOffset = t.aliasOffset;
    if (auto arg = dyn_cast<BlockArgument>(t.value); arg && dmrt::isArgumentRole(t.role)) {
      ArgumentInit init = argumentInit(f, arg.getArgNumber()); // how dmc eval draws it
      bt.hasInit = true;
      std::tie(bt.initMean, bt.initRange, bt.initMax) = std::tie(init.mean, init.range, init.max);
    }
    manifest.tensors.push_back(std::move(bt));
  }

  {
    int64_t k = 0, c = 0;
    for (Operation &op : f.getBody().front().without_terminator()) {
      if (isa<dm::KernelOp>(op))
        manifest.steps.push_back({dmrt::BundleStep::Kernel, k++});
      else if (isa<dm::ContractOp>(op))
        manifest.steps.push_back({dmrt::BundleStep::Contraction, c++});
    }
  }

  planMemory(manifest); // arena offsets by lifetime (MemoryPlan.h)
  if (llvm::Error e = writeFile((dir + "/config.json").str(), dmrt::writeConfig(*configuration)))
    return e;
  if (llvm::Error e = writeFile((dir + "/manifest.json").str(), dmrt::writeManifest(manifest)))
    return e;

  if (options.reference) {
    ReferenceOptions ref{options.referenceSeed, options.referenceFlopLimit,
                         options.referenceSamples};
    if (llvm::Error e = writeReferences(kernels, contractions, dir, ref, log))
      return e;
  }
  log << "dmc compile: wrote " << dir << " (" << kernels.size() << " kernels, "
      << contractions.size() << " contractions, " << table->tensors().size() << " tensors)\n";
  return llvm::Error::success();
}

} // namespace dmc::bundle
