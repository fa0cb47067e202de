//===- Evaluation.cpp - attaching the ops' evaluation models --------------===//
#include "compiler/evaluation/EvaluationModels.h"

namespace dmc::evaluation {

void attachEvaluationModels(mlir::MLIRContext &ctx) {
  ctx.getOrLoadDialect<dm::DmDialect>();
  // Once per context: the interpreter asks on every run.
  if (mlir::RegisteredOperationName::lookup(dm::AddOp::getOperationName(), &ctx)
          ->hasInterface<dm::EvaluableOpInterface>())
    return;
  attachElementwiseEvaluation(ctx);
  attachNormalizationEvaluation(ctx);
  attachStructureEvaluation(ctx);
}

} // namespace dmc::evaluation
