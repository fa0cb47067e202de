//===- ConfigTarget.cpp - config.json: codec, then applied to a graph ------===//
//
// The configuration file as `dmc compile --config` reads it: parseConfig, then
// (accepted) writeConfig reads back to the same text, and applyConfiguration
// on the fused training graph of a fixed small model (fixtures/config-model.json,
// whose kernels and contractions the seed corpus names) either applies it,
// leaving IR that verifies and a configuration that extracts, or says why not.
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzTarget.h"

#include "compiler/Driver.h"
#include "compiler/bundle/Configuration.h"
#include "runtime/format/Config.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Error.h"

namespace dmc::fuzz {

namespace {

constexpr char kTarget[] = "config", kName[] = "fuzz-config.json";

/// The fixture's fused training graph, built once per process.
mlir::ModuleOp fixtureGraph(mlir::MLIRContext &ctx) {
  static mlir::OwningOpRef<mlir::ModuleOp> module = [&] {
    auto m = buildGraph(ctx, DMC_FUZZ_FIXTURES "/config-model.json", /*train=*/true,
                        Stage::Fuse);
    if (!m)
      require(false, kTarget, "the fixture does not build: " + llvm::toString(m.takeError()));
    return std::move(*m);
  }();
  return *module;
}

} // namespace

int runConfig(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  dmrt::Configuration config;
  std::string error;
  if (!dmrt::parseConfig(text, kName, config, error)) {
    requireNamed(error, kName, kTarget);
    return 0;
  }
  std::string written = dmrt::writeConfig(config);
  dmrt::Configuration again;
  require(dmrt::parseConfig(written, "written.json", again, error), kTarget,
          "writeConfig's output does not read back: " + error);
  require(dmrt::writeConfig(again) == written, kTarget,
          "writeConfig(parseConfig(writeConfig(c))) differs from writeConfig(c)");

  static mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  mlir::OwningOpRef<mlir::ModuleOp> graph = fixtureGraph(ctx).clone();
  mlir::func::FuncOp f = layerFunction(*graph);
  if (llvm::Error e = bundle::applyConfiguration(f, config, kName)) {
    requireNamed(llvm::toString(std::move(e)), kName, kTarget);
    return 0;
  }
  require(mlir::succeeded(mlir::verify(*graph)), kTarget,
          "an applied configuration leaves IR that does not verify");
  auto extracted = bundle::extractConfiguration(f, "config-model");
  if (!extracted)
    llvm::consumeError(extracted.takeError()); // a contraction without a cuBLASLt form
  return 0;
}

} // namespace dmc::fuzz
