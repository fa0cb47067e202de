//===- KernelBuild.cpp - `dmc compile` stage: emit and compile kernels ----===//
#include "compiler/bundle/KernelBuild.h"

#include "compiler/bundle/Configuration.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>

using namespace mlir;

namespace dmc::bundle {
namespace {

/// Knobs of the `index`-th feasible configuration of `kernel`, recorded in
/// `knobs` (config.json) as they are.
codegen::KernelConfig sweptKnobs(dm::KernelOp kernel, int index, dmrt::ConfigKernel &knobs) {
  auto all = codegen::isFusedKernel(kernel) ? codegen::enumerateFusedConfigs(kernel)
                                            : codegen::enumerateConfigs(codegen::spaceOf(kernel));
  codegen::KernelConfig config = all[index % all.size()];
  knobs = toConfigKernel(knobs.name, config);
  return config;
}

/// "compiled in 1.23 s (4 from the cache); per kernel: median ..., slowest ..."
void logTimes(const std::vector<dmcgen::CompiledKernel> &cubins, double seconds,
              llvm::raw_ostream &log) {
  int cached = 0;
  std::vector<double> each;
  for (const auto &c : cubins) {
    cached += c.fromCache;
    each.push_back(c.seconds);
  }
  std::sort(each.begin(), each.end());
  size_t n = each.size();
  double median = n == 0 ? 0 : n % 2 ? each[n / 2] : (each[n / 2 - 1] + each[n / 2]) / 2;
  log << llvm::formatv("dmc compile: compiled in {0:f2} s ({1} from the cache); per kernel: "
                       "median {2:f3} s, slowest {3:f3} s\n",
                       seconds, cached, median, n ? each.back() : 0.0);
}

} // namespace

llvm::Expected<std::vector<BuiltKernel>> buildKernels(func::FuncOp f,
                                                      dmrt::Configuration &configuration,
                                                      const BundleOptions &options,
                                                      llvm::raw_ostream &log) {
  std::vector<BuiltKernel> built;
  std::vector<dmcgen::CompileJob> jobs;
  for (auto kernel : f.getOps<dm::KernelOp>()) {
    size_t n = built.size();
    BuiltKernel b;
    b.op = kernel;
    auto own = options.kernelConfigs.find(n);
    b.config = own != options.kernelConfigs.end()
                   ? sweptKnobs(kernel, own->second, configuration.kernels[n])
               : options.configIndex >= 0
                   ? sweptKnobs(kernel, options.configIndex, configuration.kernels[n])
                   : knobsOf(kernel); // what configuration.kernels[n] says
    auto emitted = codegen::emitKernel(kernel, b.config, kernelName(n, kernel));
    if (!emitted)
      return emitted.takeError();
    b.emitted = std::move(*emitted);
    jobs.push_back({b.emitted.entry, b.emitted.source});
    built.push_back(std::move(b));
  }
  dmcgen::CompileOptions nvrtc;
  nvrtc.arch = options.arch;
  nvrtc.cacheDir = dmcgen::defaultCacheDir();
  log << "dmc compile: " << jobs.size() << " kernels through NVRTC " << dmcgen::nvrtcVersion()
      << " for " << options.arch << "\n";
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors;
  std::vector<dmcgen::CompiledKernel> cubins =
      dmcgen::compileAll(jobs, nvrtc, options.threads, errors);
  for (const std::string &e : errors)
    if (!e.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), e);
  logTimes(cubins, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
           log);
  for (size_t n = 0; n < built.size(); ++n)
    built[n].compiled = std::move(cubins[n]);
  return built;
}

} // namespace dmc::bundle
