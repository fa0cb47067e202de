//===- StackInPlace.cpp - dm-stack-in-place: producers write into a stack -===//
//
// A kernel that stacks tensors (the Q, K and V gradients of stacked
// projections: dm.stack, then a transpose to the layout dm-default-layouts
// chose) copies each slice once more after its producer wrote it. When every
// slice comes from a kernel that addresses its results through per-dim
// strides, the stack moves out of the kernel as a view (`dm.in_place`,
// ir/InPlaceStack.h): the producers write straight into the stacked buffer
// and the copy disappears. Whatever else the kernel computed from the
// stacked tensor (a bias gradient's column sum) stays in it, reading the
// stacked buffer instead of the slices; dm-gemm-epilogues may then fold that
// into a GEMM.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/InPlaceStack.h"
#include "ir/IterationSpace.h"
#include "passes/KernelBody.h"
#include "passes/StackInPlace.h"
#include "passes/TensorNames.h"

#include "mlir/IR/Builders.h"

namespace dmc {
#define GEN_PASS_DEF_DMSTACKINPLACE
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

/// Kernels whose code addresses each result through per-dim element strides
/// (codegen/attention: AttentionStrides), so a result may be a strided slice
/// of a larger buffer. Loop-nest kernels address results by their own dense
/// layout and may not.
bool writesThroughStrides(Operation *op) {
  auto k = dyn_cast_or_null<dm::KernelOp>(op);
  return k && k->hasAttr(dm::kFusedAttr);
}

/// `v` back through single-use renames to the result that computes it, when
/// that result can be written in place (one reader chain, a strided writer).
bool writableInPlace(Value v, std::string &why) {
  while (auto rename = v.getDefiningOp<dm::RenameOp>()) {
    if (!v.hasOneUse()) {
      why = "a rename of a slice has other readers";
      return false;
    }
    v = rename.getX();
  }
  if (!v.hasOneUse()) {
    why = "a slice has readers besides the stack";
    return false;
  }
  if (!writesThroughStrides(v.getDefiningOp())) {
    why = "a slice is not the result of a kernel addressing its results by strides";
    return false;
  }
  return true;
}

/// The stack in `k` that can move out, the result yielding it, and why not.
dm::StackOp movableStack(dm::KernelOp k, unsigned &result, std::string &why) {
  Block &body = k.getBody().front();
  auto yield = cast<dm::YieldOp>(body.getTerminator());
  for (Operation &op : body.without_terminator()) {
    auto stack = dyn_cast<dm::StackOp>(op);
    if (!stack)
      continue;
    llvm::SmallPtrSet<Value, 4> seen;
    bool slicesOk = true;
    for (Value in : stack.getInputs()) {
      auto arg = dyn_cast<BlockArgument>(in);
      slicesOk &= arg && in.hasOneUse() && seen.insert(in).second &&
                  writableInPlace(k.getInputs()[arg.getArgNumber()], why);
    }
    if (!slicesOk) {
      if (why.empty())
        why = "a slice is no kernel input of its own read only by the stack";
      continue;
    }
    // The kernel writes the stacked tensor out (in the layout chosen for it).
    for (auto [n, v] : llvm::enumerate(yield.getValues())) {
      Value w = v;
      while (auto t = w.getDefiningOp<dm::TransposeOp>())
        w = t.getX();
      if (w == stack.getResult()) {
        result = n;
        return stack;
      }
    }
    why = "the stacked tensor is not a result of the kernel";
  }
  return {};
}

} // namespace

void moveStacksInPlace(func::FuncOp f, bool remarks) {
  SmallVector<dm::KernelOp> kernels;
  for (auto k : f.getBody().front().getOps<dm::KernelOp>())
    if (!k->hasAttr(dm::kFusedAttr))
      kernels.push_back(k);
  bool stamped = false;
  for (dm::KernelOp k : kernels) {
    unsigned r = 0;
    std::string why;
    dm::StackOp inner = movableStack(k, r, why);
    if (!inner) {
      if (remarks && !why.empty())
        k.emitRemark() << "stack copied, not in place: " << why;
      continue;
    }
    if (!stamped) { // names stay those of the graph before the move
      names::stampTensorNames(f);
      stamped = true;
    }
    Block &body = k.getBody().front();
    SmallVector<Value> slices;
    for (Value in : inner.getInputs())
      slices.push_back(k.getInputs()[cast<BlockArgument>(in).getArgNumber()]);
    // The view, typed as the kernel wrote the stacked tensor.
    OpBuilder b(k);
    Type stacked = k->getResult(r).getType();
    auto view = b.create<dm::StackOp>(inner.getLoc(), stacked, slices, inner.getDimAttr());
    for (NamedAttribute a : inner->getDiscardableAttrs())
      view->setAttr(a.getName(), a.getValue());
    view->setAttr(dm::kInPlaceAttr, b.getUnitAttr());
    if (auto stamp = k->getAttrOfType<ArrayAttr>(names::kNamesAttr))
      view->setAttr(names::kNamesAttr, b.getArrayAttr({stamp[r]}));
    // The kernel's other members read the stacked buffer.
    k.getInputsMutable().append(view.getResult());
    BlockArgument arg = body.addArgument(stacked, inner.getLoc());
    OpBuilder in = OpBuilder::atBlockBegin(&body);
    Value read = arg;
    if (stacked != inner.getType())
      read = in.create<dm::TransposeOp>(inner.getLoc(), inner.getType(), arg);
    inner.getResult().replaceAllUsesWith(read);
    inner.erase();
    llvm::DenseMap<unsigned, Value> replaced;
    replaced[r] = view.getResult();
    pruneKernel(k, replaced);
  }
}

namespace {

struct DmStackInPlacePass : impl::DmStackInPlaceBase<DmStackInPlacePass> {
  using DmStackInPlaceBase::DmStackInPlaceBase;
  void runOnOperation() override { moveStacksInPlace(getOperation(), remarks); }
};

} // namespace
} // namespace dmc
