//===- Pipeline.h - the order of dmc's passes ------------------------------===//
#ifndef DMC_PASSES_PIPELINE_H
#define DMC_PASSES_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>
#include <vector>

namespace dmc {

/// Where compilation may stop, in pipeline order. Stacking runs on the
/// forward graph so that dm-autodiff derives the stacked backward from it.
enum class Stage { Frontend, Stack, Autodiff, Classify, Fuse, Config };

/// Stage names as the command line spells them: frontend, stack, autodiff,
/// classify, fuse, config (dm-default-layouts: every contraction mappable;
/// dm-gemm-epilogues: bias adds and bias gradients folded into them).
const char *stageName(Stage stage);
std::optional<Stage> parseStage(llvm::StringRef name);
/// "frontend, stack, autodiff, classify, fuse, config"
std::string stageNames();

/// What the pipeline may leave out (both on by default).
struct PipelineOptions {
  bool epilogues = true;      ///< dm-gemm-epilogues at the config stage
  bool fusedAttention = true; ///< dm-fuse-attention at the fuse stage
  /// dm-fuse-column-reductions at the fuse stage (column sums, such as the
  /// layer-norm parameter gradients, inside the row kernel reading the same
  /// tensors).
  bool columnFusion = true;
  /// Which bias gradients dm-gemm-epilogues folds into cuBLASLt
  /// (bias-grads): "saving" (where its kernel then moves fewer bytes), "all"
  /// (every one cuBLASLt can compute: the column sum leaves its kernel) or
  /// "none" (each stays a column sum in a kernel).
  std::string biasGrads = "saving";
  /// Whether dm-gemm-epilogues folds a kernel's sum of a contraction's
  /// result and another tensor into the GEMM (accumulate: C, beta 1).
  bool gemmAddends = true;
  /// dm-stack-in-place at the config stage: producers that address their
  /// results by strides write a stack's slices in place. Off by default:
  /// measured no faster (docs/fused-attention.md, "dQ, dK, dV in place").
  bool stackInPlace = false;
  /// dm-save-dropout-bits at the end of the config stage: a dropout's
  /// backward kernels read the keep bits its forward kernel saved instead of
  /// drawing the mask again.
  bool dropoutBits = true;
  /// With dropoutBits: the ids of the dropouts whose masks the backward
  /// draws again all the same (`dmc compile --db` chooses per dropout).
  std::vector<int64_t> drawnDropouts;
  /// The GPU the graph is compiled for (codegen/target/GpuTarget.h): set on
  /// the module as `dm.target`, read by codegen's configurations.
  std::string target = "h100";
  /// The architecture the kernels are compiled for (`dmc compile --arch`),
  /// set on the module as `dm.arch`; empty: the target's. Code for sm_90
  /// runs on an H100 without its sm_90a instructions (wgmma).
  std::string arch;
};

/// Adds the passes up to and including `last` (dm-autodiff only with `train`;
/// dm-fuse-attention and dm-gemm-epilogues as `options` say).
void buildPipeline(mlir::OpPassManager &pm, Stage last, bool train,
                   PipelineOptions options = {});
/// The config stage alone, on a function pass manager: dm-default-layouts,
/// dm-stack-in-place (stackInPlace), dm-gemm-epilogues as `options` say
/// (epilogues, biasGrads), then dm-save-dropout-bits (dropoutBits).
void addConfigPasses(mlir::OpPassManager &funcPm, const PipelineOptions &options);

} // namespace dmc

#endif // DMC_PASSES_PIPELINE_H
