//===- Gradients.cpp - backward rules of the forward dm ops ---------------===//
//
// Each rule receives the gradients of the op's results (null where none
// flows) and appends one gradient per operand (null where the operand is not
// differentiable). Gradients have exactly the type of their forward value.
//
//===----------------------------------------------------------------------===//
#include "ir/DmDialect.h"

#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;

namespace dmc::dm {

LogicalResult ContractOp::buildGradient(OpBuilder &b, GradientContext &ctx,
                                        ArrayRef<Value> dres,
                                        SmallVectorImpl<Value> &dops) {
  // Epilogues are folded in after fusion, on the training graph.
  if (getEpilogueKind() != dmrt::Epilogue::None)
    return emitOpError() << "has no gradient rule with epilogue \"" << getEpilogue() << "\"";
  Value dc = dres[0];
  auto scale = getScaleAttr();
  // dA[A] = scale * sum dC[C] B[B] over the names A lacks; dB alike.
  dops.push_back(b.create<ContractOp>(getLoc(), getLhs().getType(), dc,
                                      ctx.saved(getRhs()), scale).getResult());
  dops.push_back(b.create<ContractOp>(getLoc(), getRhs().getType(),
                                      ctx.saved(getLhs()), dc, scale).getResult());
  return success();
}

LogicalResult BiasAddOp::buildGradient(OpBuilder &b, GradientContext &,
                                       ArrayRef<Value> dres,
                                       SmallVectorImpl<Value> &dops) {
  dops.push_back(dres[0]);
  dops.push_back(b.create<ReduceSumOp>(getLoc(), getBias().getType(), dres[0]));
  return success();
}

LogicalResult AddOp::buildGradient(OpBuilder &, GradientContext &, ArrayRef<Value> dres,
                                   SmallVectorImpl<Value> &dops) {
  dops.append({dres[0], dres[0]});
  return success();
}

LogicalResult ScaleOp::buildGradient(OpBuilder &b, GradientContext &, ArrayRef<Value> dres,
                                     SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<ScaleOp>(getLoc(), dres[0].getType(), dres[0], getFactorAttr()));
  return success();
}

LogicalResult ActivationOp::buildGradient(OpBuilder &b, GradientContext &ctx,
                                          ArrayRef<Value> dres,
                                          SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<ActivationGradOp>(getLoc(), dres[0].getType(), dres[0], ctx.saved(getX()),
                                            getKindAttr()));
  return success();
}

LogicalResult DropoutOp::buildGradient(OpBuilder &b, GradientContext &, ArrayRef<Value> dres,
                                       SmallVectorImpl<Value> &dops) {
  // Same p, id and order: the backward regenerates the forward mask from Philox.
  dops.push_back(b.create<DropoutOp>(getLoc(), dres[0].getType(), dres[0], getPAttr(), getIdAttr(),
                                     getOrderAttr()));
  return success();
}

LogicalResult CausalMaskOp::buildGradient(OpBuilder &b, GradientContext &,
                                          ArrayRef<Value> dres,
                                          SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<CausalMaskOp>(getLoc(), dres[0].getType(), dres[0], getQueryAttr(), getKeyAttr(),
                                        b.getF64FloatAttr(0.0)));
  return success();
}

LogicalResult KeyPaddingMaskOp::buildGradient(OpBuilder &b, GradientContext &ctx,
                                              ArrayRef<Value> dres,
                                              SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<KeyPaddingMaskOp>(getLoc(), dres[0].getType(), dres[0], ctx.saved(getLengths()),
                                            getKeyAttr(), b.getF64FloatAttr(0.0)));
  dops.push_back(nullptr); // lengths are integers
  return success();
}

LogicalResult SoftmaxOp::buildGradient(OpBuilder &b, GradientContext &ctx,
                                       ArrayRef<Value> dres,
                                       SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<SoftmaxGradOp>(getLoc(), dres[0].getType(), ctx.saved(getResult()), dres[0],
                                         getDimAttr()));
  return success();
}

LogicalResult LayerNormOp::buildGradient(OpBuilder &b, GradientContext &ctx,
                                         ArrayRef<Value> dres,
                                         SmallVectorImpl<Value> &dops) {
  if (dres[1] || dres[2])
    return emitOpError() << "gradients through mean or rstd are not supported";
  Value dy = dres[0], x = ctx.saved(getX()), mean = ctx.saved(getMean()),
        rstd = ctx.saved(getRstd());
  dops.push_back(b.create<LayerNormGradInputOp>(getLoc(), dy.getType(), dy, x, mean, rstd,
                                                ctx.saved(getGamma()), getDimsAttr()));
  auto params = b.create<LayerNormGradParamsOp>(getLoc(), getGamma().getType(),
                                                getBeta().getType(), dy, x, mean, rstd);
  dops.append({params.getDgamma(), params.getDbeta()});
  return success();
}

LogicalResult ReduceSumOp::buildGradient(OpBuilder &b, GradientContext &,
                                         ArrayRef<Value> dres,
                                         SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<BroadcastOp>(getLoc(), getX().getType(), dres[0]));
  return success();
}

LogicalResult BroadcastOp::buildGradient(OpBuilder &b, GradientContext &,
                                         ArrayRef<Value> dres,
                                         SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<ReduceSumOp>(getLoc(), getX().getType(), dres[0]));
  return success();
}

LogicalResult TransposeOp::buildGradient(OpBuilder &b, GradientContext &,
                                         ArrayRef<Value> dres,
                                         SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<TransposeOp>(getLoc(), getX().getType(), dres[0]));
  return success();
}

LogicalResult RenameOp::buildGradient(OpBuilder &b, GradientContext &, ArrayRef<Value> dres,
                                      SmallVectorImpl<Value> &dops) {
  dops.push_back(b.create<RenameOp>(getLoc(), getX().getType(), dres[0], getToAttr(),
                                    getFromAttr()));
  return success();
}

LogicalResult StackOp::buildGradient(OpBuilder &b, GradientContext &, ArrayRef<Value> dres,
                                     SmallVectorImpl<Value> &dops) {
  SmallVector<Type> types(getInputs().size(), getInputs()[0].getType());
  auto parts = b.create<UnstackOp>(getLoc(), types, dres[0], getDimAttr());
  dops.append(parts.getOutputs().begin(), parts.getOutputs().end());
  return success();
}

LogicalResult UnstackOp::buildGradient(OpBuilder &b, GradientContext &, ArrayRef<Value> dres,
                                       SmallVectorImpl<Value> &dops) {
  for (auto [n, d] : llvm::enumerate(dres))
    if (!d)
      return emitOpError() << "result " << n << " has no gradient; every slice of an "
                           << "unstack must be used";
  dops.push_back(b.create<StackOp>(getLoc(), getX().getType(), dres, getDimAttr()));
  return success();
}

} // namespace dmc::dm
