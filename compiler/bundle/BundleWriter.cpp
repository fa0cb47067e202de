//===- BundleWriter.cpp - `dmc compile`: a layer as a loadable bundle -----===//
//
// The stages after the pass pipeline, each with one job: the configuration
// read off the configured graph (Configuration.h), kernel emission and NVRTC
// (KernelBuild.h), the manifest from the IR (ManifestBuild.h), the static
// memory plan (MemoryPlan.h); then this file writes the files and, when
// asked, the interpreter's references (Reference.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/bundle/BundleWriter.h"

#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/KernelBuild.h"
#include "compiler/bundle/ManifestBuild.h"
#include "compiler/bundle/MemoryPlan.h"
#include "compiler/bundle/Reference.h"
#include "compiler/bundle/TensorTable.h"
#include "runtime/format/Config.h"
#include "runtime/format/Manifest.h"

#include "llvm/Support/FileSystem.h"

using namespace mlir;

namespace dmc::bundle {
namespace {

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

} // namespace

llvm::Error writeConfigFile(llvm::StringRef dir, const dmrt::Configuration &c) {
  return writeFile((dir + "/config.json").str(), dmrt::writeConfig(c));
}

llvm::Error writeBundle(func::FuncOp f, llvm::StringRef dir, const BundleOptions &options,
                        llvm::raw_ostream &log, WrittenBundle *written) {
  auto table = TensorTable::build(f);
  if (!table)
    return table.takeError();
  // The configuration (config.json): layouts, knobs, cuBLASLt forms.
  auto configuration = extractConfiguration(f, *table, options.modelName);
  if (!configuration)
    return configuration.takeError();
  configuration->hasPrediction = options.hasPrediction;
  configuration->prediction = options.prediction;
  for (const char *sub : {"kernels", "reference"})
    if (std::error_code ec = llvm::sys::fs::create_directories(llvm::Twine(dir) + "/" + sub))
      return fail(dir + ": cannot create the bundle directory: " + ec.message());

  auto built = buildKernels(f, *configuration, options, log);
  if (!built)
    return built.takeError();
  auto manifest = buildManifest(f, *table, *built, options, log);
  if (!manifest)
    return manifest.takeError();
  planMemory(*manifest); // arena offsets by lifetime (MemoryPlan.h)

  for (size_t n = 0; n < built->size(); ++n) {
    const BuiltKernel &k = (*built)[n];
    std::string stem = (dir + "/" + kernelFileStem(n)).str();
    if (llvm::Error e = writeFile(stem + ".cu", k.emitted.source))
      return e;
    if (llvm::Error e = writeFile(stem + ".cubin", llvm::StringRef(k.compiled.cubin.data(),
                                                                  k.compiled.cubin.size())))
      return e;
  }
  if (llvm::Error e = writeConfigFile(dir, *configuration))
    return e;
  if (llvm::Error e = writeFile((dir + "/manifest.json").str(), dmrt::writeManifest(*manifest)))
    return e;

  if (options.reference) {
    std::vector<dm::KernelOp> kernels;
    for (const BuiltKernel &k : *built)
      kernels.push_back(k.op);
    std::vector<dm::ContractOp> contractions(f.getOps<dm::ContractOp>().begin(),
                                             f.getOps<dm::ContractOp>().end());
    ReferenceOptions ref{options.referenceSeed, options.referenceFlopLimit,
                         options.referenceSamples, options.referenceSteps,
                         options.referenceCache};
    if (llvm::Error e = writeReferences(kernels, contractions, dir, ref, log))
      return e;
  }
  log << "dmc compile: wrote " << dir << " (" << built->size() << " kernels, "
      << manifest->contractions.size() << " contractions, " << table->tensors().size()
      << " tensors)\n";
  if (written)
    *written = {std::move(*manifest), std::move(*configuration)};
  return llvm::Error::success();
}

} // namespace dmc::bundle
