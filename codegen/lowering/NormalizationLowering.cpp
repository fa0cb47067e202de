//===- NormalizationLowering.cpp - reducing ops as kernel nodes -----------===//
//
// Softmax, layer norm and their gradients reduce over exactly the kernel's
// rows (anything else is an error saying which dims); sums go over the rows
// or, inside a row kernel with column sums, over the outer points.
//
//===----------------------------------------------------------------------===//
#include "codegen/lowering/LoweringModels.h"

using namespace mlir;

namespace dmc::codegen {
namespace {

using L = dm::PointwiseLowering;
using E = PointExpr;
constexpr const char *kNegInf = "__int_as_float(0xff800000)";

const E x0 = E::operand(0), x1 = E::operand(1), x2 = E::operand(2), x3 = E::operand(3),
        x4 = E::operand(4);
const E zero = E::literal("0.f"), one = E::literal("1.f");

LogicalResult softmax(dm::SoftmaxOp o, L &l) {
  if (failed(l.rows(o, o.getDim())))
    return failure();
  int in = l.operand(o, 0);
  int mx = l.reduce("DmcMax", kNegInf, in);
  int e = l.map(E::select(x1.equals(E::literal(kNegInf)), zero, E::call("dmcExp", {x0 - x1})),
                {in, mx});
  int sum = l.reduce("DmcSum", "0.f", e);
  int inv = l.map(E::select(x0.greater(zero), one / x0, zero), {sum});
  l.set(o, l.map(x0 * x1, {e, inv}));
  return success();
}
LogicalResult softmaxGrad(dm::SoftmaxGradOp o, L &l) {
  if (failed(l.rows(o, o.getDim())))
    return failure();
  int y = l.operand(o, 0), dy = l.operand(o, 1);
  int dot = l.reduce("DmcSum", "0.f", l.map(x0 * x1, {y, dy}));
  l.set(o, l.map(x0 * (x1 - x2), {y, dy, dot}));
  return success();
}
LogicalResult layerNorm(dm::LayerNormOp o, L &l) {
  if (failed(l.rows(o, o.getDims())))
    return failure();
  E count = l.rowCount();
  int in = l.operand(o, 0), g = l.operand(o, 1), b = l.operand(o, 2);
  int mu = l.map(x0 / count, {l.reduce("DmcSum", "0.f", in)});
  int c = l.map(x0 - x1, {in, mu});
  int var = l.reduce("DmcSum", "0.f", l.map(x0 * x0, {c}));
  int rs = l.map(one / E::call("sqrtf", {x0 / count + E::constant(o.getEps().convertToDouble())}),
                 {var});
  l.set(o.getY(), l.map(x0 * x1 * x2 + x3, {c, rs, g, b}));
  l.set(o.getMean(), mu);
  l.set(o.getRstd(), rs);
  return success();
}
LogicalResult layerNormGradInput(dm::LayerNormGradInputOp o, L &l) {
  if (failed(l.rows(o, o.getDims())))
    return failure();
  E count = l.rowCount();
  int dy = l.operand(o, 0), in = l.operand(o, 1), mean = l.operand(o, 2),
      rstd = l.operand(o, 3), g = l.operand(o, 4);
  int gg = l.map(x0 * x1, {dy, g});
  int xh = l.map((x0 - x1) * x2, {in, mean, rstd});
  int sg = l.reduce("DmcSum", "0.f", gg);
  int sgx = l.reduce("DmcSum", "0.f", l.map(x0 * x1, {gg, xh}));
  l.set(o, l.map(x0 * (x1 - x2 / count - x3 * (x4 / count)), {rstd, gg, sg, xh, sgx}));
  return success();
}
LogicalResult layerNormGradParams(dm::LayerNormGradParamsOp o, L &l) {
  int dy = l.operand(o, 0), in = l.operand(o, 1), mean = l.operand(o, 2),
      rstd = l.operand(o, 3);
  l.set(o.getDgamma(), l.sum(o, l.map(x0 * (x1 - x2) * x3, {dy, in, mean, rstd})));
  l.set(o.getDbeta(), l.sum(o, dy));
  return success();
}
LogicalResult reduceSum(dm::ReduceSumOp o, L &l) {
  l.set(o, l.sum(o, l.operand(o, 0)));
  return success();
}

} // namespace

void attachNormalizationLowering(MLIRContext &ctx) {
  attach<dm::SoftmaxOp, softmax>(ctx);
  attach<dm::SoftmaxGradOp, softmaxGrad>(ctx);
  attach<dm::LayerNormOp, layerNorm>(ctx);
  attach<dm::LayerNormGradInputOp, layerNormGradInput>(ctx);
  attach<dm::LayerNormGradParamsOp, layerNormGradParams>(ctx);
  attach<dm::ReduceSumOp, reduceSum>(ctx);
}

} // namespace dmc::codegen
