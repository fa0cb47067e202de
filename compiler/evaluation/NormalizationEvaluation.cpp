//===- NormalizationEvaluation.cpp - reference semantics of reductions ----===//
//
// Softmax and its gradients, log-sum-exp, layer norm and its gradients, and
// sums: ops that reduce over some of their dims.
//
//===----------------------------------------------------------------------===//
#include "compiler/evaluation/EvaluationModels.h"

using namespace mlir;

namespace dmc::evaluation {
namespace {

void softmax(dm::SoftmaxOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) { K.softmax(e.operand(o.getX()), o.getDim(), e.result(o)); });
}
void softmaxGrad(dm::SoftmaxGradOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.softmaxGrad(e.operand(o.getY()), e.operand(o.getDy()), o.getDim(), e.result(o));
  });
}
void logSumExp(dm::LogSumExpOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) { K.logSumExp(e.operand(o.getX()), o.getDim(), e.result(o)); });
}
void softmaxLse(dm::SoftmaxLseOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.softmaxLse(e.operand(o.getX()), e.operand(o.getLse()), e.result(o));
  });
}
void softmaxGradRowsum(dm::SoftmaxGradRowsumOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.softmaxGradRowsum(e.operand(o.getY()), e.operand(o.getDy()), e.operand(o.getRowsum()),
                        e.result(o));
  });
}
void layerNorm(dm::LayerNormOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    HostTensor &y = e.result(o, 0), &mean = e.result(o, 1), &rstd = e.result(o, 2);
    K.layernorm(e.operand(o.getX()), e.operand(o.getGamma()), e.operand(o.getBeta()),
                o.getDims(), o.getEps().convertToDouble(), y, mean, rstd);
  });
}
void layerNormGradInput(dm::LayerNormGradInputOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.layernormGradInput(e.operand(o.getDy()), e.operand(o.getX()), e.operand(o.getMean()),
                         e.operand(o.getRstd()), e.operand(o.getGamma()), o.getDims(),
                         e.result(o));
  });
}
void layerNormGradParams(dm::LayerNormGradParamsOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    HostTensor &dg = e.result(o, 0), &db = e.result(o, 1);
    K.layernormGradParams(e.operand(o.getDy()), e.operand(o.getX()), e.operand(o.getMean()),
                          e.operand(o.getRstd()), dg, db);
  });
}
void reduceSum(dm::ReduceSumOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) { K.reduceSum(e.operand(o.getX()), e.result(o)); });
}

} // namespace

void attachNormalizationEvaluation(MLIRContext &ctx) {
  attach<dm::SoftmaxOp, softmax>(ctx);
  attach<dm::SoftmaxGradOp, softmaxGrad>(ctx);
  attach<dm::LogSumExpOp, logSumExp>(ctx);
  attach<dm::SoftmaxLseOp, softmaxLse>(ctx);
  attach<dm::SoftmaxGradRowsumOp, softmaxGradRowsum>(ctx);
  attach<dm::LayerNormOp, layerNorm>(ctx);
  attach<dm::LayerNormGradInputOp, layerNormGradInput>(ctx);
  attach<dm::LayerNormGradParamsOp, layerNormGradParams>(ctx);
  attach<dm::ReduceSumOp, reduceSum>(ctx);
}

} // namespace dmc::evaluation
