//===- Analyze.cpp - build the three graphs of a report and cost them -----===//
#include "compiler/report/Report.h"

#include "compiler/Driver.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace dmc::report {

llvm::Expected<DataMovementReport> analyzeModel(MLIRContext &ctx, llvm::StringRef modelPath,
                                                Stage last, PipelineOptions options) {
  DataMovementReport report;
  report.model = modelPath.str();
  report.stage = stageName(last);
  // As built: autodiff straight on the frontend's graph, each op one kernel.
  // Stages before autodiff compare forward graphs.
  bool training = last >= Stage::Autodiff;
  auto plain = buildGraph(ctx, modelPath, /*train=*/false, Stage::Frontend);
  if (!plain)
    return plain.takeError();
  PassManager pm(&ctx);
  if (training)
    pm.addNestedPass<func::FuncOp>(createDmAutodiff());
  if (failed(pm.run(**plain)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   modelPath + ": dm-autodiff failed");
  report.unfused = costOf(layerFunction(**plain));

  auto stacked = buildGraph(ctx, modelPath, /*train=*/true,
                            last < Stage::Classify ? last : Stage::Classify);
  if (!stacked)
    return stacked.takeError();
  report.stacked = costOf(layerFunction(**stacked));

  // The config stage runs on a copy of the fused graph, which the layouts
  // section compares it with.
  auto fused =
      buildGraph(ctx, modelPath, /*train=*/true, std::min(last, Stage::Fuse), options);
  if (!fused)
    return fused.takeError();
  if (last < Stage::Config) {
    report.fused = costOf(layerFunction(**fused));
    if (last == Stage::Fuse) {
      auto memory = memoryOf(layerFunction(**fused));
      if (!memory)
        return memory.takeError();
      report.memory = *memory;
    }
    return report;
  }
  OwningOpRef<ModuleOp> configured = (*fused)->clone();
  PassManager config(&ctx);
  addConfigPasses(config.nest<func::FuncOp>(), options);
  if (failed(config.run(*configured)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   modelPath + ": the config stage failed");
  report.fused = costOf(layerFunction(*configured));
  auto memory = memoryOf(layerFunction(*configured));
  if (!memory)
    return memory.takeError();
  report.memory = *memory;
  auto layouts = layoutsOf(layerFunction(**fused), layerFunction(*configured));
  if (!layouts)
    return layouts.takeError();
  report.layouts = *layouts;
  for (const WorkItem &w : report.fused.items)
    report.attention.kernels += w.fused;
  if (report.attention.kernels > 0) {
    // What fused attention saves: the same graph without it.
    PipelineOptions plain = options;
    plain.fusedAttention = false;
    auto unfused = buildGraph(ctx, modelPath, /*train=*/true, Stage::Config, plain);
    if (!unfused)
      return unfused.takeError();
    report.attention.unfusedBytes = costOf(layerFunction(**unfused)).bytes;
    auto unfusedMemory = memoryOf(layerFunction(**unfused));
    if (!unfusedMemory)
      return unfusedMemory.takeError();
    report.attention.unfusedMemory = *unfusedMemory;
  }
  return report;
}

} // namespace dmc::report
