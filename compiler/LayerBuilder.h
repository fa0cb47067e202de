//===- LayerBuilder.h - model description -> forward dm graph -------------===//
#ifndef DMC_COMPILER_LAYERBUILDER_H
#define DMC_COMPILER_LAYERBUILDER_H

#include "compiler/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace dmc {

/// Builds a module holding one `func.func` (named after the model): the
/// forward graph of the layer. Argument and result names and roles follow
/// ir/Signature.h; the dimension letters are b batch, j query position,
/// k key position (self-attention), m memory position, i hidden, h heads,
/// p head dim, u FFN. Parameter names and layouts are listed in
/// examples/README.md.
mlir::OwningOpRef<mlir::ModuleOp> buildForwardGraph(mlir::MLIRContext &ctx,
                                                    const ModelConfig &config);

} // namespace dmc

#endif // DMC_COMPILER_LAYERBUILDER_H
