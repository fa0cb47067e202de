//===- ElementwiseEvaluation.cpp - reference semantics of pointwise ops ---===//
//
// Arithmetic, activations, dropout (Philox, runtime/format/device/Philox.h)
// and the attention masks: every result element from the operand elements
// at the same point.
//
//===----------------------------------------------------------------------===//
#include "compiler/evaluation/EvaluationModels.h"

using namespace mlir;

namespace dmc::evaluation {
namespace {

void biasAdd(dm::BiasAddOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) { K.biasAdd(e.operand(o.getX()), e.operand(o.getBias()), e.result(o)); });
}
void add(dm::AddOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) { K.add(e.operand(o.getLhs()), e.operand(o.getRhs()), e.result(o)); });
}
void scale(dm::ScaleOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.scale(e.operand(o.getX()), o.getFactor().convertToDouble(), e.result(o));
  });
}
void activation(dm::ActivationOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.activation(e.operand(o.getX()), o.getActivationKind(), e.result(o));
  });
}
void activationGrad(dm::ActivationGradOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.activationGrad(e.operand(o.getDy()), e.operand(o.getX()), o.getActivationKind(),
                     e.result(o));
  });
}
void dropout(dm::DropoutOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.dropout(e.operand(o.getX()), o.getP().convertToDouble(), static_cast<uint32_t>(o.getId()),
              o.getOrder().str(), e.seed(), e.result(o));
  });
}
void dropoutKeepBits(dm::DropoutKeepBitsOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.dropoutKeepBits(e.operand(o.getX()), o.getP().convertToDouble(),
                      static_cast<uint32_t>(o.getId()), o.getOrder().str(), o.getKey()[0],
                      o.getWord()[0], /*masked=*/!o.getUnmasked(), e.seed(), e.result(o));
  });
}
void dropoutApplyBits(dm::DropoutApplyBitsOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.dropoutApplyBits(e.operand(o.getX()), e.operand(o.getBits()), o.getP().convertToDouble(),
                       o.getKey()[0], o.getWord()[0], e.result(o));
  });
}
void causalMask(dm::CausalMaskOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.causalMask(e.operand(o.getX()), o.getQuery()[0], o.getKey()[0],
                 o.getFill().convertToDouble(), e.result(o));
  });
}
void keyPaddingMask(dm::KeyPaddingMaskOp o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) {
    K.keyPaddingMask(e.operand(o.getX()), e.operand(o.getLengths()), o.getKey()[0],
                     o.getFill().convertToDouble(), e.result(o));
  });
}

} // namespace

void attachElementwiseEvaluation(MLIRContext &ctx) {
  attach<dm::BiasAddOp, biasAdd>(ctx);
  attach<dm::AddOp, add>(ctx);
  attach<dm::ScaleOp, scale>(ctx);
  attach<dm::ActivationOp, activation>(ctx);
  attach<dm::ActivationGradOp, activationGrad>(ctx);
  attach<dm::DropoutOp, dropout>(ctx);
  attach<dm::DropoutKeepBitsOp, dropoutKeepBits>(ctx);
  attach<dm::DropoutApplyBitsOp, dropoutApplyBits>(ctx);
  attach<dm::CausalMaskOp, causalMask>(ctx);
  attach<dm::KeyPaddingMaskOp, keyPaddingMask>(ctx);
}

} // namespace dmc::evaluation
