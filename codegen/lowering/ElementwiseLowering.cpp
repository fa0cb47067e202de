//===- ElementwiseLowering.cpp - pointwise ops as kernel nodes ------------===//
//
// Arithmetic, activations, dropout (the interpreter's Philox counters), the
// attention masks, copies and stacks: one map node per op (activation
// gradients: two), reading the point's indices where the op does.
//
//===----------------------------------------------------------------------===//
#include "codegen/lowering/LoweringModels.h"

#include "runtime/format/device/Philox.h"

#include <optional>

using namespace mlir;

namespace dmc::codegen {
namespace {

using L = dm::PointwiseLowering;
using E = PointExpr;

/// The node's operands, in the order its deps list them.
const E x0 = E::operand(0), x1 = E::operand(1);
const E zero = E::literal("0.f"), one = E::literal("1.f"), half = E::literal("0.5f");
/// The constants of the GELU forms (erf: 1/sqrt(2), 1/sqrt(2 pi); tanh:
/// sqrt(2/pi), 0.044715 and 3 * 0.044715), as written since the first kernels.
const E sqrt2OverPi = E::literal("7.9788456080286536e-01f");
const E tanhCubic = E::literal("4.4715e-02f"), tanhCubicGrad = E::literal("1.34145e-01f");

/// tanh(sqrt(2/pi) (x + 0.044715 x^3)) of x.
E geluTanhInner(const E &x) {
  return E::call("tanhf", {sqrt2OverPi * (x + tanhCubic * x * x * x)});
}

LogicalResult biasAdd(dm::BiasAddOp o, L &l) {
  l.set(o, l.map(x0 + x1, {l.operand(o, 0), l.operand(o, 1)}));
  return success();
}
LogicalResult add(dm::AddOp o, L &l) {
  l.set(o, l.map(x0 + x1, {l.operand(o, 0), l.operand(o, 1)}));
  return success();
}
LogicalResult scale(dm::ScaleOp o, L &l) {
  l.set(o, l.map(x0 * E::constant(o.getFactor().convertToDouble()), {l.operand(o, 0)}));
  return success();
}
LogicalResult activation(dm::ActivationOp o, L &l) {
  std::optional<E> y;
  switch (o.getActivationKind()) {
  case dm::ActivationKind::Relu:
    y = E::select(x0.greater(zero), x0, zero);
    break;
  case dm::ActivationKind::Gelu:
    y = E::call("dmcGelu", {x0});
    break;
  case dm::ActivationKind::GeluTanh:
    y = half * x0 * (one + geluTanhInner(x0));
    break;
  }
  l.set(o, l.map(*y, {l.operand(o, 0)}));
  return success();
}
LogicalResult activationGrad(dm::ActivationGradOp o, L &l) {
  int dy = l.operand(o, 0), v = l.operand(o, 1);
  int d = -1;
  switch (o.getActivationKind()) {
  case dm::ActivationKind::Relu:
    d = l.map(E::select(x0.greater(zero), one, zero), {v});
    break;
  case dm::ActivationKind::Gelu:
    d = l.map(E::call("dmcGeluGrad", {x0}), {v});
    break;
  case dm::ActivationKind::GeluTanh: {
    int t = l.map(geluTanhInner(x0), {v});
    d = l.map(half * (one + x1) + half * x0 * (one - x1 * x1) * sqrt2OverPi *
                                      (one + tanhCubicGrad * x0 * x0),
              {v, t});
    break;
  }
  }
  l.set(o, l.map(x0 * x1, {dy, d}));
  return success();
}
LogicalResult dropout(dm::DropoutOp o, L &l) {
  double p = o.getP().convertToDouble();
  NodeGraph &g = l.graph();
  int k = static_cast<int>(g.draws.size());
  g.draws.push_back({static_cast<int64_t>(o.getId()), o.getOrder().str()});
  E keep = E::draw(k).greaterEqual(E::literal(std::to_string(dmrt::dropoutThreshold(p)) + "u"));
  l.set(o, l.map(E::select(keep, x0 * E::constant(1.0 / (1.0 - p)), zero), {l.operand(o, 0)},
                 /*pointwise=*/true));
  return success();
}
/// The packed layout of keep bits `t` (Draw::bitsDims, bitsShape).
void setBitsTensor(codegen::Draw &d, dm::TensorType t, char word) {
  d.bitsDims = t.getNames().str();
  d.bitsShape.assign(t.getShape().begin(), t.getShape().end());
  d.word = word;
}
/// Keep bits of a dropout drawn in this kernel (dm-save-dropout-bits): its
/// draw packs them into the output the value is yielded as.
LogicalResult dropoutKeepBits(dm::DropoutKeepBitsOp o, L &l) {
  NodeGraph &g = l.graph();
  if (!o.getUnmasked())
    return l.fail("keep bits of masked scores belong to a fused attention kernel");
  if (o.getKey() != o.getOrder().take_back(1))
    return l.fail("keep bits are packed along the dropout's innermost counter dim '" +
                  o.getOrder().take_back(1) + "', not '" + o.getKey() + "'");
  auto t = cast<dm::TensorType>(o.getX().getType());
  if (t.getSize(o.getKey()[0]) % 32)
    return l.fail("keep bits need whole words: '" + o.getKey() + "' has " +
                  std::to_string(t.getSize(o.getKey()[0])) + " elements");
  for (auto [k, d] : llvm::enumerate(g.draws))
    if (d.opId == o.getId() && d.order == o.getOrder() && d.bitsInput < 0) {
      d.threshold = dmrt::dropoutThreshold(o.getP().convertToDouble());
      setBitsTensor(d, cast<dm::TensorType>(o.getResult().getType()), o.getWord()[0]);
      l.setPacked(o.getResult(), int(k));
      return success();
    }
  return l.fail("keep bits of dropout " + std::to_string(o.getId()) +
                ", which the kernel does not draw");
}
/// The dropout applied with keep bits read from a kernel input: the draw's
/// word is the bit.
LogicalResult dropoutApplyBits(dm::DropoutApplyBitsOp o, L &l) {
  auto arg = dyn_cast<BlockArgument>(o.getBits());
  if (!arg)
    return l.fail("keep bits must be an input of the kernel");
  auto t = cast<dm::TensorType>(o.getX().getType());
  // The counter order only places the key innermost: the bits are indexed by
  // the point's own indices.
  std::string order;
  for (char c : t.getNames())
    if (c != o.getKey()[0])
      order.push_back(c);
  order += o.getKey().str();
  NodeGraph &g = l.graph();
  int k = static_cast<int>(g.draws.size());
  codegen::Draw d{-1, order};
  d.bitsInput = int(arg.getArgNumber());
  setBitsTensor(d, cast<dm::TensorType>(arg.getType()), o.getWord()[0]);
  g.draws.push_back(std::move(d));
  double p = o.getP().convertToDouble();
  E keep = E::draw(k).equals(E::literal("1u"));
  l.set(o, l.map(E::select(keep, x0 * E::constant(1.0 / (1.0 - p)), zero), {l.operand(o, 0)},
                 /*pointwise=*/true));
  return success();
}
LogicalResult causalMask(dm::CausalMaskOp o, L &l) {
  E masked = E::index(o.getKey()[0]).greater(E::index(o.getQuery()[0]));
  l.set(o, l.map(E::select(masked, E::constant(o.getFill().convertToDouble()), x0),
                 {l.operand(o, 0)}, true));
  return success();
}
LogicalResult keyPaddingMask(dm::KeyPaddingMaskOp o, L &l) {
  E masked = E::cast("float", E::index(o.getKey()[0])).greaterEqual(x1);
  l.set(o, l.map(E::select(masked, E::constant(o.getFill().convertToDouble()), x0),
                 {l.operand(o, 0), l.operand(o, 1)}, true));
  return success();
}
/// Broadcasts and transposes only change which point reads which element:
/// the node is the operand's.
template <class OpT> LogicalResult copy(OpT o, L &l) {
  l.set(o, l.operand(o, 0));
  return success();
}
LogicalResult stack(dm::StackOp o, L &l) {
  // Select the slice first: each point loads only its own input. Built from
  // the last slice out, so slice 0's test is outermost and the operands are
  // numbered from the last slice down.
  NodeGraph &g = l.graph();
  char dim = o.getDim()[0];
  std::vector<int> parts;
  E y = zero;
  for (size_t n = o.getInputs().size(); n-- > 0;) {
    codegen::LoadGuard guard{dim, int64_t(n)};
    E cond = guard.expr();
    E part = E::operand(unsigned(parts.size()));
    if (auto arg = dyn_cast<BlockArgument>(o.getInputs()[n])) {
      auto [it, fresh] = g.loadGuards.insert({arg.getArgNumber(), guard});
      if (!fresh && !(it->second == guard))
        g.unguardedLoads.insert(arg.getArgNumber());
      part = E::load(arg.getArgNumber());
    } else {
      parts.push_back(l.operand(o, unsigned(n)));
    }
    y = E::select(cond, part, y);
  }
  l.set(o, l.map(y, parts, true));
  return success();
}

} // namespace

void attachElementwiseLowering(MLIRContext &ctx) {
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
  attach<dm::BroadcastOp, copy<dm::BroadcastOp>>(ctx);
  attach<dm::TransposeOp, copy<dm::TransposeOp>>(ctx);
  attach<dm::StackOp, stack>(ctx);
}

} // namespace dmc::codegen
