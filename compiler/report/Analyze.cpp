//===- Analyze.cpp - build the three graphs of a report and cost them -----===//
#include "compiler/report/Report.h"

#include "compiler/Driver.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace dmc::report {

llvm::Expected<DataMovementReport> analyzeModel(MLIRContext &ctx, llvm::StringRef modelPath,
                                                Stage last) {
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

  auto fused = buildGraph(ctx, modelPath, /*train=*/true, last);
  if (!fused)
    return fused.takeError();
  report.fused = costOf(layerFunction(**fused));
  if (last >= Stage::Fuse) {
    auto memory = memoryOf(layerFunction(**fused));
    if (!memory)
      return memory.takeError();
    report.memory = *memory;
  }
  if (last >= Stage::Config) {
    auto before = buildGraph(ctx, modelPath, /*train=*/true, Stage::Fuse);
    if (!before)
      return before.takeError();
    auto layouts = layoutsOf(layerFunction(**before), layerFunction(**fused));
    if (!layouts)
      return layouts.takeError();
    report.layouts = *layouts;
  }
  return report;
}

} // namespace dmc::report
