//===- LayoutRewrite.cpp - changing the layout of tensors in a fused graph ===//
#include "passes/LayoutRewrite.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace dmc::layout {

namespace {

dm::TensorType tensorOf(Value v) { return cast<dm::TensorType>(v.getType()); }

/// Retypes kernel input `n` to `type`; its body reads it through a transpose
/// back to the layout the body was built for (or drops one that undid it).
void retypeKernelInput(dm::KernelOp kernel, unsigned n, dm::TensorType type) {
  Block &body = kernel.getBody().front();
  BlockArgument arg = body.getArgument(n);
  auto old = cast<dm::TensorType>(arg.getType());
  if (old == type)
    return;
  arg.setType(type);
  SmallVector<OpOperand *> others;
  for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
    auto t = dyn_cast<dm::TransposeOp>(use.getOwner());
    if (t && t.getType() == type) {
      t.getResult().replaceAllUsesWith(arg);
      t.erase();
    } else if (!t) {
      others.push_back(&use);
    }
  }
  if (others.empty())
    return;
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Value back = b.create<dm::TransposeOp>(kernel.getLoc(), old, arg);
  for (OpOperand *use : others)
    use->set(back);
}

/// Kernel output `n` becomes `type`: the body yields through a transpose.
void retypeKernelOutput(dm::KernelOp kernel, unsigned n, dm::TensorType type) {
  Operation *yield = kernel.getBody().front().getTerminator();
  Value v = yield->getOperand(n);
  auto t = v.getDefiningOp<dm::TransposeOp>();
  if (t && v.hasOneUse()) {
    if (t.getX().getType() == type) {
      yield->setOperand(n, t.getX());
      t.erase();
    } else {
      t.getResult().setType(type);
    }
  } else {
    OpBuilder b(yield);
    yield->setOperand(n, b.create<dm::TransposeOp>(kernel.getLoc(), type, v));
  }
  kernel.getResult(n).setType(type);
}

/// After `v` changed type: retype its views and the kernels reading it.
void propagate(Value v) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : v.getUses())
    uses.push_back(&use);
  for (OpOperand *use : uses) {
    Operation *user = use->getOwner();
    if (isViewOp(user)) {
      std::string in = tensorOf(v).getNames().str();
      for (Value r : user->getResults()) {
        auto type = tensorOf(r);
        r.setType(type.permutedTo(viewLayout(user, in)));
        propagate(r);
      }
    } else if (auto kernel = dyn_cast<dm::KernelOp>(user)) {
      retypeKernelInput(kernel, use->getOperandNumber(), tensorOf(v));
    }
  }
}

/// `dm.kernel "transpose"(x) -> type` at `b`, marked as inserted for `kind`.
dm::KernelOp buildTransposeKernel(OpBuilder &b, Value x, dm::TensorType type,
                                  llvm::StringRef kind) {
  Location loc = x.getLoc();
  auto kernel = b.create<dm::KernelOp>(loc, TypeRange{type}, ValueRange{x},
                                       b.getStringAttr("transpose"));
  kernel->setAttr(kInsertedAttr, b.getStringAttr(kind));
  Block *body = new Block();
  kernel.getBody().push_back(body);
  Value arg = body->addArgument(x.getType(), loc);
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  Value t = inner.create<dm::TransposeOp>(loc, type, arg);
  inner.create<dm::YieldOp>(loc, ValueRange{t});
  return kernel;
}

} // namespace

bool isViewOp(Operation *op) { return isa_and_nonnull<dm::RenameOp, dm::SaveOp, dm::UnstackOp>(op); }

std::string viewLayout(Operation *op, llvm::StringRef in) {
  std::string out = in.str();
  if (auto rename = dyn_cast<dm::RenameOp>(op)) {
    for (char &c : out)
      if (size_t pos = rename.getFrom().find(c); pos != llvm::StringRef::npos)
        c = rename.getTo()[pos];
  } else if (auto unstack = dyn_cast<dm::UnstackOp>(op)) {
    out.erase(out.find(unstack.getDim()[0]), 1);
  }
  return out;
}

bool isPermutation(llvm::StringRef names, llvm::StringRef of) {
  if (names.size() != of.size())
    return false;
  for (size_t n = 0; n < names.size(); ++n)
    if (of.find(names[n]) == llvm::StringRef::npos || names.find(names[n]) != n)
      return false;
  return true;
}

StorageClass storageClassOf(Value v) {
  StorageClass cls;
  while (isViewOp(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  cls.root = v;
  Operation *def = v.getDefiningOp();
  if (!def)
    cls.fixed = "a function argument (the caller's layout)";
  else if (isa<dm::ContractOp>(def))
    cls.contractions.push_back(def);
  else if (!isa<dm::KernelOp>(def))
    cls.fixed = ("written by " + def->getName().getStringRef()).str();
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value m = work.pop_back_val();
    cls.members.push_back(m);
    for (Operation *user : m.getUsers()) {
      if (isViewOp(user)) {
        for (Value r : user->getResults())
          work.push_back(r);
      } else if (isa<dm::ContractOp>(user)) {
        if (!llvm::is_contained(cls.contractions, user))
          cls.contractions.push_back(user);
      } else if (isa<func::ReturnOp>(user)) {
        if (cls.fixed.empty())
          cls.fixed = "returned by the layer (the caller's layout)";
      } else if (!isa<dm::KernelOp>(user) && cls.fixed.empty()) {
        cls.fixed = ("read by " + user->getName().getStringRef()).str();
      }
    }
  }
  return cls;
}

std::string rootLayoutFor(Value v, llvm::StringRef dims) {
  std::string layout = dims.str();
  while (Operation *op = v.getDefiningOp()) {
    if (auto rename = dyn_cast<dm::RenameOp>(op)) {
      for (char &c : layout)
        if (size_t pos = rename.getTo().find(c); pos != llvm::StringRef::npos)
          c = rename.getFrom()[pos];
    } else if (auto unstack = dyn_cast<dm::UnstackOp>(op)) {
      // Slices alias the stacked tensor: its stack dim stays outermost.
      char dim = unstack.getDim()[0];
      if (tensorOf(unstack.getX()).indexOf(dim) != 0)
        return "";
      layout.insert(layout.begin(), dim);
    } else if (!isa<dm::SaveOp>(op)) {
      break;
    }
    v = op->getOperand(0);
  }
  return layout;
}

void relayout(Value root, llvm::StringRef dims) {
  auto type = tensorOf(root).permutedTo(dims);
  if (type == root.getType())
    return;
  if (auto kernel = root.getDefiningOp<dm::KernelOp>())
    retypeKernelOutput(kernel, cast<OpResult>(root).getResultNumber(), type);
  else
    root.setType(type);
  propagate(root);
}

Value insertTransposeKernel(OpOperand &use, llvm::StringRef dims) {
  Value x = use.get();
  Operation *user = use.getOwner();
  auto type = tensorOf(x).permutedTo(dims);
  for (Operation *other : x.getUsers())
    if (auto k = dyn_cast<dm::KernelOp>(other);
        k && k->getAttrOfType<StringAttr>(kInsertedAttr) &&
        k->getAttrOfType<StringAttr>(kInsertedAttr).getValue() == kInsertedForOperand &&
        k.getResult(0).getType() == type && k->getBlock() == user->getBlock()) {
      if (!k->isBeforeInBlock(user))
        k->moveBefore(user);
      use.set(k.getResult(0));
      return k.getResult(0);
    }
  OpBuilder b(user);
  dm::KernelOp kernel = buildTransposeKernel(b, x, type, kInsertedForOperand);
  use.set(kernel.getResult(0));
  return kernel.getResult(0);
}

void insertTransposeAfter(dm::ContractOp c, llvm::StringRef dims) {
  Value d = c.getResult();
  auto old = tensorOf(d);
  d.setType(old.permutedTo(dims));
  OpBuilder b(c->getContext());
  b.setInsertionPointAfter(c);
  dm::KernelOp kernel = buildTransposeKernel(b, d, old, kInsertedForResult);
  d.replaceAllUsesExcept(kernel.getResult(0), kernel);
}

dmcgen::Contraction contractionOf(dm::ContractOp c) {
  auto layoutOf = [](Value v) {
    auto t = tensorOf(v);
    return dmcgen::TensorLayout{t.getNames().str(),
                                std::vector<int64_t>(t.getShape().begin(), t.getShape().end())};
  };
  dmcgen::Contraction spec;
  spec.a = layoutOf(c.getLhs());
  spec.b = layoutOf(c.getRhs());
  spec.d = layoutOf(c.getResult());
  spec.alpha = c.getScale().convertToDouble();
  spec.epilogue = c.getEpilogueKind();
  if (Value v = c.getBias() ? c.getBias() : c.getBiasGrad())
    spec.biasDims = tensorOf(v).getNames().str();
  return spec;
}

bool isMappable(dm::ContractOp c, std::string *why) {
  dmrt::GemmDescriptor g;
  std::string reason;
  bool ok = dmcgen::mapContraction(contractionOf(c), g, reason);
  if (why)
    *why = reason;
  return ok;
}

} // namespace dmc::layout
