//===- Autodiff.cpp - dm-autodiff: forward graph -> training graph --------===//
#include "passes/Passes.h"

#include "ir/Signature.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dm-autodiff"

namespace dmc {
#define GEN_PASS_DEF_DMAUTODIFF
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

/// Routes forward results read by the backward through one dm.save each,
/// placed right after the producer so the forward part stays contiguous.
class SavingContext : public dm::GradientContext {
public:
  Value saved(Value forward) override {
    Operation *def = forward.getDefiningOp();
    if (!def)
      return forward;
    auto [it, inserted] = saves.try_emplace(forward, nullptr);
    if (inserted) {
      OpBuilder b(def->getContext());
      b.setInsertionPointAfter(def);
      it->second = b.create<dm::SaveOp>(def->getLoc(), forward.getType(), forward);
    }
    return it->second;
  }

private:
  llvm::DenseMap<Value, Value> saves;
};

class GradientMap {
public:
  explicit GradientMap(OpBuilder &b) : b(b) {}
  Value get(Value v) const { return grads.lookup(v); }
  /// Adds `g` to the gradient of `v` (a dm.add where there already is one).
  void accumulate(Value v, Value g) {
    Value &slot = grads[v];
    slot = slot ? b.create<dm::AddOp>(g.getLoc(), g.getType(), slot, g).getResult() : g;
  }

private:
  OpBuilder &b;
  llvm::DenseMap<Value, Value> grads;
};

struct DmAutodiffPass : impl::DmAutodiffBase<DmAutodiffPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (failed(differentiate(f)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp f) {
    if (f->hasAttr(dm::kTrainingAttr))
      return f.emitError("function is already a training graph");
    if (!f.getBody().hasOneBlock())
      return f.emitError("dm-autodiff needs a single-block function");
    Block &body = f.getBody().front();
    Operation *ret = body.getTerminator();
    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);

    OpBuilder b(ret);
    GradientMap grads(b);
    SmallVector<Value> results(ret->getOperands());
    SmallVector<std::string> names;
    SmallVector<dmrt::TensorRole> roles;
    for (auto [n, y] : llvm::enumerate(results)) {
      std::string name = dm::resultName(f, n).str();
      if (name.empty())
        name = "result" + std::to_string(n);
      BlockArgument dy = dm::addArgument(f, y.getType(), "d" + name, dmrt::TensorRole::GradOutput);
      grads.accumulate(y, dy);
      names.push_back(name);
      roles.push_back(dmrt::TensorRole::Output);
    }

    SavingContext ctx;
    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> dres;
      bool any = false;
      for (Value r : op->getResults()) {
        dres.push_back(grads.get(r));
        any |= static_cast<bool>(dres.back());
      }
      if (!any)
        continue;
      auto rule = dyn_cast<dm::GradientOpInterface>(op);
      if (!rule)
        return op->emitOpError("has no gradient rule");
      SmallVector<Value> dops;
      if (failed(rule.buildGradient(b, ctx, dres, dops)))
        return failure();
      assert(dops.size() == op->getNumOperands() && "one gradient per operand");
      for (auto [v, g] : llvm::zip(op->getOperands(), dops))
        if (g)
          grads.accumulate(v, g);
    }

    unsigned numInputs = f.getNumArguments() - results.size();
    for (unsigned n = 0; n < numInputs; ++n) {
      BlockArgument arg = f.getArgument(n);
      auto type = dyn_cast<dm::TensorType>(arg.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      std::string name = dm::argName(f, n).str();
      if (name.empty())
        name = "arg" + std::to_string(n);
      Value g = grads.get(arg);
      if (!g)
        return f.emitError() << "argument '" << name << "' receives no gradient (is it used?)";
      results.push_back(g);
      names.push_back(name + ".grad");
      roles.push_back(dmrt::TensorRole::Grad);
    }
    dm::setResults(f, results, names, roles);
    f->setAttr(dm::kTrainingAttr, UnitAttr::get(f.getContext()));
    return success();
  }
};

} // namespace
} // namespace dmc
