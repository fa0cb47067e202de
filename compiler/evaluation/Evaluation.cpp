//===- Evaluation.cpp - attaching the ops' evaluation models --------------===//
#include "compiler/evaluation/EvaluationModels.h"

namespace dmc::evaluation {

void attachEvaluationModels(mlir::MLIRContext &ctx) {
  ctx.getOrLoadDialect<dm::DmDialect>();
  attachElementwiseEvaluation(ctx);
  attachNormalizationEvaluation(ctx);
  attachStructureEvaluation(ctx);
}

} // namespace dmc::evaluation
