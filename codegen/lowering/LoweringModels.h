//===- LoweringModels.h - building PointwiseLoweringOpInterface models ----===//
//
// Private to codegen/lowering/: a model per op wraps a function
// `LogicalResult f(OpT, dm::PointwiseLowering &)`.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_LOWERING_LOWERINGMODELS_H
#define DMC_CODEGEN_LOWERING_LOWERINGMODELS_H

#include "codegen/lowering/PointwiseLowering.h"

namespace dmc::codegen {

template <class OpT, mlir::LogicalResult (*Lower)(OpT, dm::PointwiseLowering &)>
struct LoweringModel
    : dm::PointwiseLoweringOpInterface::ExternalModel<LoweringModel<OpT, Lower>, OpT> {
  mlir::LogicalResult lowerToNodes(mlir::Operation *op, dm::PointwiseLowering &l) const {
    return Lower(mlir::cast<OpT>(op), l);
  }
};

/// OpT lowers with `Lower`.
template <class OpT, mlir::LogicalResult (*Lower)(OpT, dm::PointwiseLowering &)>
void attach(mlir::MLIRContext &ctx) {
  OpT::template attachInterface<LoweringModel<OpT, Lower>>(ctx);
}

void attachElementwiseLowering(mlir::MLIRContext &ctx);
void attachNormalizationLowering(mlir::MLIRContext &ctx);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_LOWERING_LOWERINGMODELS_H
