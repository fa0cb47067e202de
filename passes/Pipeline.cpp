//===- Pipeline.cpp - the order of dmc's passes ----------------------------===//
#include "passes/Pipeline.h"

#include "passes/Passes.h"

namespace dmc {

namespace {
constexpr std::pair<Stage, const char *> kStages[] = {
    {Stage::Frontend, "frontend"}, {Stage::Stack, "stack"},  {Stage::Autodiff, "autodiff"},
    {Stage::Classify, "classify"}, {Stage::Fuse, "fuse"},       {Stage::Config, "config"}};
} // namespace

const char *stageName(Stage stage) {
  for (auto [s, name] : kStages)
    if (s == stage)
      return name;
  return "?";
}

std::optional<Stage> parseStage(llvm::StringRef name) {
  for (auto [s, n] : kStages)
    if (name == n)
      return s;
  return std::nullopt;
}

std::string stageNames() {
  std::string names;
  for (auto [s, n] : kStages)
    names += (names.empty() ? "" : ", ") + std::string(n);
  return names;
}

void buildPipeline(mlir::OpPassManager &pm, Stage last, bool train, PipelineOptions options) {
  mlir::OpPassManager &f = pm.nest<mlir::func::FuncOp>();
  if (last >= Stage::Stack)
    f.addPass(createDmStackContractions());
  if (last >= Stage::Autodiff && train)
    f.addPass(createDmAutodiff());
  if (last >= Stage::Classify)
    f.addPass(createDmClassify());
  if (last >= Stage::Fuse && options.fusedAttention)
    f.addPass(createDmFuseAttention());
  if (last >= Stage::Fuse)
    f.addPass(createDmFuse());
  if (last >= Stage::Fuse && options.columnFusion) {
    DmFuseColumnReductionsOptions columns;
    columns.biasGradsInKernels = options.epilogues && options.biasGrads == "none";
    f.addPass(createDmFuseColumnReductions(columns));
  }
  if (last >= Stage::Config)
    addConfigPasses(f, options);
}

void addConfigPasses(mlir::OpPassManager &f, const PipelineOptions &options) {
  f.addPass(createDmDefaultLayouts());
  if (options.stackInPlace)
    f.addPass(createDmStackInPlace());
  if (options.epilogues) {
    DmGemmEpiloguesOptions epilogues;
    epilogues.biasGrads = options.biasGrads;
    epilogues.addends = options.gemmAddends;
    f.addPass(createDmGemmEpilogues(epilogues));
  }
  // Last: it adds tensors, which are named after the stamps above
  // (passes/TensorNames.h), so no earlier name moves.
  if (options.dropoutBits) {
    DmSaveDropoutBitsOptions bits;
    bits.drawn = options.drawnDropouts;
    f.addPass(createDmSaveDropoutBits(bits));
  }
}

} // namespace dmc
