//===- ElementwiseLowering.cpp - pointwise ops as kernel nodes ------------===//
//
// Arithmetic, activations, dropout (the interpreter's Philox counters), the
// attention masks, copies and stacks: one map node per op (activation
// gradients: two), reading the point's indices where the op does.
//
//===----------------------------------------------------------------------===//
#include "codegen/lowering/LoweringModels.h"

#include "runtime/format/device/Philox.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace dmc::codegen {
namespace {

using L = dm::PointwiseLowering;

LogicalResult biasAdd(dm::BiasAddOp o, L &l) {
  l.set(o, l.map("$0 + $1", {l.operand(o, 0), l.operand(o, 1)}));
  return success();
}
LogicalResult add(dm::AddOp o, L &l) {
  l.set(o, l.map("$0 + $1", {l.operand(o, 0), l.operand(o, 1)}));
  return success();
}
LogicalResult scale(dm::ScaleOp o, L &l) {
  l.set(o, l.map("$0 * " + L::floatLiteral(o.getFactor().convertToDouble()), {l.operand(o, 0)}));
  return success();
}
LogicalResult activation(dm::ActivationOp o, L &l) {
  const char *code = nullptr;
  switch (o.getActivationKind()) {
  case dm::ActivationKind::Relu:
    code = "$0 > 0.f ? $0 : 0.f";
    break;
  case dm::ActivationKind::Gelu:
    code = "0.5f * $0 * (1.f + dmcErf($0 * 7.0710678118654752e-01f))";
    break;
  case dm::ActivationKind::GeluTanh:
    code = "0.5f * $0 * (1.f + tanhf(7.9788456080286536e-01f * ($0 + 4.4715e-02f * $0 * "
           "$0 * $0)))";
    break;
  }
  l.set(o, l.map(code, {l.operand(o, 0)}));
  return success();
}
LogicalResult activationGrad(dm::ActivationGradOp o, L &l) {
  int dy = l.operand(o, 0), v = l.operand(o, 1);
  int d = -1;
  switch (o.getActivationKind()) {
  case dm::ActivationKind::Relu:
    d = l.map("$0 > 0.f ? 1.f : 0.f", {v});
    break;
  case dm::ActivationKind::Gelu:
    d = l.map("0.5f * (1.f + dmcErf($0 * 7.0710678118654752e-01f)) + $0 * "
              "3.9894228040143268e-01f * dmcExp(-0.5f * $0 * $0)",
              {v});
    break;
  case dm::ActivationKind::GeluTanh: {
    int t = l.map("tanhf(7.9788456080286536e-01f * ($0 + 4.4715e-02f * $0 * $0 * $0))", {v});
    d = l.map("0.5f * (1.f + $1) + 0.5f * $0 * (1.f - $1 * $1) * 7.9788456080286536e-01f * "
              "(1.f + 1.34145e-01f * $0 * $0)",
              {v, t});
    break;
  }
  }
  l.set(o, l.map("$0 * $1", {dy, d}));
  return success();
}
LogicalResult dropout(dm::DropoutOp o, L &l) {
  double p = o.getP().convertToDouble();
  NodeGraph &g = l.graph();
  int k = static_cast<int>(g.draws.size());
  g.draws.push_back({static_cast<int64_t>(o.getId()), o.getOrder().str()});
  std::string keep =
      llvm::formatv("{0} >= {1}u", NodeGraph::wordName(k), dmrt::dropoutThreshold(p));
  l.set(o, l.map(keep + " ? $0 * " + L::floatLiteral(1.0 / (1.0 - p)) + " : 0.f",
                 {l.operand(o, 0)}, /*pointwise=*/true));
  return success();
}
LogicalResult causalMask(dm::CausalMaskOp o, L &l) {
  std::string cond = std::string("i_") + o.getKey().str() + " > i_" + o.getQuery().str();
  l.set(o, l.map(cond + " ? " + L::floatLiteral(o.getFill().convertToDouble()) + " : $0",
                 {l.operand(o, 0)}, true));
  return success();
}
LogicalResult keyPaddingMask(dm::KeyPaddingMaskOp o, L &l) {
  std::string cond = "(float)i_" + o.getKey().str() + " >= $1";
  l.set(o, l.map(cond + " ? " + L::floatLiteral(o.getFill().convertToDouble()) + " : $0",
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
  // Select the slice first: each point loads only its own input.
  NodeGraph &g = l.graph();
  std::string dim = o.getDim().str();
  std::vector<int> parts;
  std::vector<unsigned> loads;
  std::string code = "0.f";
  for (size_t n = o.getInputs().size(); n-- > 0;) {
    std::string part;
    std::string cond = "i_" + dim + " == " + std::to_string(n);
    if (auto arg = dyn_cast<BlockArgument>(o.getInputs()[n])) {
      part = L::loadToken(arg.getArgNumber());
      loads.push_back(arg.getArgNumber());
      auto [it, fresh] = g.loadGuards.insert({arg.getArgNumber(), cond});
      if (!fresh && it->second != cond)
        g.unguardedLoads.insert(arg.getArgNumber());
    } else {
      part = "$" + std::to_string(parts.size());
      parts.push_back(l.operand(o, n));
    }
    code = cond + " ? " + part + " : " + code;
  }
  int node = l.map(code, parts, true);
  g.nodes[node].loads = std::move(loads);
  l.set(o, node);
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
  attach<dm::CausalMaskOp, causalMask>(ctx);
  attach<dm::KeyPaddingMaskOp, keyPaddingMask>(ctx);
  attach<dm::BroadcastOp, copy<dm::BroadcastOp>>(ctx);
  attach<dm::TransposeOp, copy<dm::TransposeOp>>(ctx);
  attach<dm::StackOp, stack>(ctx);
}

} // namespace dmc::codegen
