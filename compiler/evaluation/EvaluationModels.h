//===- EvaluationModels.h - building EvaluableOpInterface models ----------===//
//
// Private to compiler/evaluation/: a model per op wraps a function
// `void f(OpT, dm::Evaluation &)`; withKernels runs host kernels in the
// evaluation's compute type.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_EVALUATION_EVALUATIONMODELS_H
#define DMC_COMPILER_EVALUATION_EVALUATIONMODELS_H

#include "compiler/HostKernels.h"
#include "compiler/evaluation/Evaluation.h"

namespace dmc::evaluation {

/// Calls `f(HostKernels<T>{})` with T = double for an fp64 evaluation, float
/// otherwise (the kernels' functions are static).
template <class F> void withKernels(dm::Evaluation &e, F &&f) {
  if (e.inDouble())
    f(HostKernels<double>{});
  else
    f(HostKernels<float>{});
}

template <class OpT, void (*Evaluate)(OpT, dm::Evaluation &)>
struct EvaluableModel
    : dm::EvaluableOpInterface::ExternalModel<EvaluableModel<OpT, Evaluate>, OpT> {
  void evaluate(mlir::Operation *op, dm::Evaluation &e) const {
    Evaluate(mlir::cast<OpT>(op), e);
  }
};

/// OpT evaluates with `Evaluate`.
template <class OpT, void (*Evaluate)(OpT, dm::Evaluation &)>
void attach(mlir::MLIRContext &ctx) {
  OpT::template attachInterface<EvaluableModel<OpT, Evaluate>>(ctx);
}

void attachElementwiseEvaluation(mlir::MLIRContext &ctx);
void attachNormalizationEvaluation(mlir::MLIRContext &ctx);
void attachStructureEvaluation(mlir::MLIRContext &ctx);

} // namespace dmc::evaluation

#endif // DMC_COMPILER_EVALUATION_EVALUATIONMODELS_H
