//===- BundleWriter.cpp - `dmc compile`: a layer as a loadable bundle -----===//
#include "compiler/bundle/BundleWriter.h"

#include <algorithm>

#include "codegen/KernelEmitter.h"
#include "codegen/gemm/GemmMapping.h"
#include "codegen/nvrtc/NvrtcCompiler.h"
#include "compiler/GraphSummary.h"
#include "compiler/bundle/Reference.h"
#include "compiler/bundle/TensorTable.h"
#include "compiler/report/DataMovement.h"
#include "ir/IterationSpace.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
namespace json = llvm::json;

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

std::string dtypeOf(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << cast<dm::TensorType>(t).getElementType();
  return s;
}

dmcgen::TensorLayout layoutOf(Type t) {
  auto tt = cast<dm::TensorType>(t);
  return {tt.getNames().str(), std::vector<int64_t>(tt.getShape().begin(), tt.getShape().end())};
}

json::Object matrixJson(const dmcgen::MatrixLayout &m) {
  return json::Object{{"rows", m.rows}, {"cols", m.cols}, {"ld", m.ld},
                      {"batch_stride", m.batchStride}};
}

/// The descriptor as runtime/Bundle.cpp reads it (C is D; alpha, beta and the
/// epilogue are the contraction's).
json::Value gemmJson(const dmcgen::GemmDescriptor &g) {
  return json::Object{
      {"swap", g.swapOperands},
      {"transa", g.transA == CUBLAS_OP_T ? "T" : "N"},
      {"transb", g.transB == CUBLAS_OP_T ? "T" : "N"},
      {"m", g.m},
      {"n", g.n},
      {"k", g.k},
      {"batch", g.batchCount},
      {"a", matrixJson(g.a)},
      {"b", matrixJson(g.b)},
      {"d", matrixJson(g.d)},
      {"describe", g.describe()},
  };
}

json::Array ids(const TensorTable &table, ValueRange values) {
  json::Array a;
  for (Value v : values)
    a.push_back(table.idOf(v));
  return a;
}

} // namespace

llvm::Error writeBundle(func::FuncOp f, llvm::StringRef dir, const BundleOptions &options,
                        llvm::raw_ostream &log) {
  auto table = TensorTable::build(f);
  if (!table)
    return table.takeError();
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
    auto space = codegen::spaceOf(kernel);
    auto config = codegen::defaultConfig(space);
    if (options.configIndex >= 0) {
      auto all = codegen::enumerateConfigs(space);
      config = all[options.configIndex % all.size()];
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

  json::Array kernelsJson;
  for (size_t n = 0; n < kernels.size(); ++n) {
    std::string base = (dir + "/kernels/k" + std::to_string(n)).str();
    if (llvm::Error e = writeFile(base + ".cu", emitted[n].source))
      return e;
    if (llvm::Error e = writeFile(base + ".cubin", llvm::StringRef(cubins[n].cubin.data(),
                                                                  cubins[n].cubin.size())))
      return e;
    const codegen::EmittedKernel &k = emitted[n];
    kernelsJson.push_back(json::Object{
        {"id", int64_t(n)},
        {"name", kernels[n].getName()},
        {"entry", k.entry},
        {"cubin", "kernels/k" + std::to_string(n) + ".cubin"},
        {"source", "kernels/k" + std::to_string(n) + ".cu"},
        {"grid", json::Array{k.grid, k.gridY, 1}},
        {"block", json::Array{k.blockX, k.blockY, 1}},
        {"shared_bytes", k.sharedBytes},
        {"workspace_bytes", k.workspaceBytes},
        {"config", configs[n].describe()},
        {"phase", phase(kernels[n])},
        {"inputs", ids(*table, kernels[n].getInputs())},
        {"outputs", ids(*table, kernels[n].getResults())},
    });
  }
  // Kernel flop and bytes, from the analysis (same order of appearance).
  {
    size_t n = 0;
    for (const auto &w : cost.items)
      if (w.opClass != "contraction" && n < kernelsJson.size()) {
        json::Object &o = *kernelsJson[n++].getAsObject();
        o["flop"] = w.flop;
        o["bytes"] = w.ioLowerBound;
      }
  }

  json::Array contractionsJson;
  std::vector<dm::ContractOp> contractions;
  for (auto c : f.getOps<dm::ContractOp>()) {
    dmcgen::Contraction spec;
    spec.a = layoutOf(c.getLhs().getType());
    spec.b = layoutOf(c.getRhs().getType());
    spec.d = layoutOf(c.getType());
    spec.alpha = c.getScale().convertToDouble();
    dmcgen::GemmDescriptor g;
    std::string reason;
    bool mapped = dmcgen::mapContraction(spec, g, reason);
    std::string equation = spec.a.dims + "," + spec.b.dims + "->" + spec.d.dims;
    contractionsJson.push_back(json::Object{
        {"id", int64_t(contractions.size())},
        {"equation", equation},
        {"phase", phase(c)},
        {"a", table->idOf(c.getLhs())},
        {"b", table->idOf(c.getRhs())},
        {"d", table->idOf(c.getResult())},
        {"alpha", spec.alpha},
        {"beta", 0.0},
        {"epilogue", "none"},
        {"flop", dm::analyticFlop(cast<dm::IterationSpaceOpInterface>(c.getOperation()))},
        {"bytes", bytes(c.getLhs().getType()) + bytes(c.getRhs().getType()) +
                      bytes(c.getType())},
        {"gemm", mapped ? gemmJson(g) : json::Value(nullptr)},
        {"unmappable", mapped ? json::Value(nullptr) : json::Value(reason)},
    });
    if (!mapped)
      log << "dmc compile: warning: contraction " << equation << " has no cuBLASLt form: "
          << reason << "\n";
    contractions.push_back(c);
  }

  json::Array tensorsJson;
  for (const TensorInfo &t : table->tensors()) {
    auto tt = cast<dm::TensorType>(t.value.getType());
    json::Value alias = nullptr;
    if (t.aliasOf >= 0)
      alias = json::Object{{"of", t.aliasOf}, {"offset", t.aliasOffset}};
    tensorsJson.push_back(json::Object{
        {"id", t.id},
        {"name", t.name},
        {"role", t.role},
        {"dims", tt.getNames()},
        {"shape", json::Array(tt.getShape())},
        {"dtype", dtypeOf(tt)},
        {"bytes", bytes(tt)},
        {"alias", std::move(alias)},
    });
  }

  json::Array steps;
  {
    size_t k = 0, c = 0;
    for (Operation &op : f.getBody().front().without_terminator()) {
      if (isa<dm::KernelOp>(op))
        steps.push_back(json::Object{{"kind", "kernel"}, {"id", int64_t(k++)}});
      else if (isa<dm::ContractOp>(op))
        steps.push_back(json::Object{{"kind", "contraction"}, {"id", int64_t(c++)}});
    }
  }

  json::Object manifest{
      {"format", "dmc-bundle"},
      {"version", 2},
      {"model", options.modelName},
      {"arch", options.arch},
      {"nvrtc", dmcgen::nvrtcVersion()},
      {"tensors", std::move(tensorsJson)},
      {"kernels", std::move(kernelsJson)},
      {"contractions", std::move(contractionsJson)},
      {"steps", std::move(steps)},
  };
  std::string text;
  llvm::raw_string_ostream(text) << llvm::formatv("{0:2}", json::Value(std::move(manifest)));
  if (llvm::Error e = writeFile((dir + "/manifest.json").str(), text + "\n"))
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
