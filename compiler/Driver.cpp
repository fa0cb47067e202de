//===- Driver.cpp - model description -> forward or training graph --------===//
#include "compiler/Driver.h"
#include "compiler/bundle/ConfigPaths.h"

#include "codegen/target/GpuTarget.h"
#include "ir/IterationSpace.h"

#include "compiler/LayerBuilder.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace dmc {

void loadDmcDialects(MLIRContext &ctx) { ctx.loadDialect<dm::DmDialect, func::FuncDialect>(); }

func::FuncOp layerFunction(ModuleOp module) {
  auto funcs = module.getOps<func::FuncOp>();
  return funcs.empty() ? func::FuncOp() : *funcs.begin();
}

size_t stepCount(func::FuncOp layer) {
  return size_t(llvm::range_size(layer.getOps<dm::KernelOp>())) +
         size_t(llvm::range_size(layer.getOps<dm::ContractOp>()));
}

std::string stepShape(func::FuncOp layer) {
  std::string key;
  for (Operation &op : layer.getBody().front()) {
    if (auto k = dyn_cast<dm::KernelOp>(op)) // its tensors too: saved keep bits add some
      key += "k " + k.getName().str() + " " + std::to_string(k.getInputs().size()) + "->" +
             std::to_string(k->getNumResults()) + ";";
    else if (auto c = dyn_cast<dm::ContractOp>(op))
      key += "c " + c.getEpilogue().str() + ";";
  }
  return key;
}

llvm::Expected<OwningOpRef<ModuleOp>> buildGraph(MLIRContext &ctx, llvm::StringRef modelPath,
                                                 bool train, Stage last,
                                                 PipelineOptions options) {
  llvm::Expected<ModelConfig> config = loadModelConfig(modelPath);
  if (!config)
    return config.takeError();
  return buildGraph(ctx, *config, modelPath, train, last, options);
}

llvm::Expected<OwningOpRef<ModuleOp>> buildGraph(MLIRContext &ctx, const ModelConfig &config,
                                                 llvm::StringRef modelPath, bool train,
                                                 Stage last, PipelineOptions options) {
  loadDmcDialects(ctx);
  OwningOpRef<ModuleOp> module = buildForwardGraph(ctx, config);

  // Collect diagnostics into the error instead of printing them.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  if (failed(mlir::verify(*module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   modelPath + ": internal error, the built graph does not "
                                               "verify:\n" + diagnostics);
  if (!dmcgen::targetByName(options.target))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--target: unknown GPU '" + options.target +
                                       "' (known: " + dmcgen::targetNames() + ")");
  (*module)->setAttr(dm::kTargetAttr, StringAttr::get(&ctx, options.target));
  if (!options.arch.empty())
    (*module)->setAttr(dm::kArchAttr, StringAttr::get(&ctx, options.arch));
  bundle::setPathsAttr(*module, bundle::configPaths(options));
  PassManager pm(&ctx);
  buildPipeline(pm, last, train, options);
  if (failed(pm.run(*module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   modelPath + ": compilation failed:\n" + diagnostics);
  return module;
}

} // namespace dmc
