//===- Driver.h - model description -> forward or training graph ----------===//
#ifndef DMC_COMPILER_DRIVER_H
#define DMC_COMPILER_DRIVER_H

#include "compiler/ModelConfig.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

namespace dmc {

/// Loads the dialects dmc uses into `ctx`.
void loadDmcDialects(mlir::MLIRContext &ctx);

/// Reads a model description, builds its forward graph and runs the passes
/// up to `last` (dm-autodiff only with `train`; optional passes as `options`
/// says). Errors name the file and the problem.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildGraph(mlir::MLIRContext &ctx, llvm::StringRef modelPath, bool train,
           Stage last = Stage::Autodiff, PipelineOptions options = {});
/// The same for a description already parsed (`modelPath` names it in errors).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildGraph(mlir::MLIRContext &ctx, const ModelConfig &config, llvm::StringRef modelPath,
           bool train, Stage last = Stage::Autodiff, PipelineOptions options = {});

/// The one layer function of a module built by buildGraph.
mlir::func::FuncOp layerFunction(mlir::ModuleOp module);

/// Its steps: fused kernels plus contractions. A graph built with and
/// without fused attention has as many exactly when dm-fuse-attention found
/// nothing to fuse.
size_t stepCount(mlir::func::FuncOp layer);
/// The layer's steps as a comparable key: each kernel's name and numbers of
/// inputs and outputs, and each contraction's epilogue, in order. Two graphs
/// of one layer with equal keys run the same steps (a pass that changed
/// nothing).
std::string stepShape(mlir::func::FuncOp layer);

} // namespace dmc

#endif // DMC_COMPILER_DRIVER_H
