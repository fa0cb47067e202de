//===- EpilogueRewrite.cpp - folding neighbours into a contraction's GEMM --===//
#include "passes/EpilogueRewrite.h"

#include "passes/KernelBody.h"

#include "ir/IterationSpace.h"
#include "passes/LayoutRewrite.h"
#include "passes/TensorNames.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace dmc::epilogue {
namespace {

int64_t bytesOf(Value v) { return cast<dm::TensorType>(v.getType()).getSizeInBytes(); }

/// Every byte `k` reads and writes (each input once, each output once).
int64_t trafficOf(dm::KernelOp k) {
  int64_t total = 0;
  for (Value v : k.getInputs())
    total += bytesOf(v);
  for (Value v : k.getResults())
    total += bytesOf(v);
  return total;
}

Block &bodyOf(dm::KernelOp k) { return k.getBody().front(); }
dm::YieldOp yieldOf(dm::KernelOp k) { return cast<dm::YieldOp>(bodyOf(k).getTerminator()); }

/// `v` before any dm.transpose a layout change put in the kernel.
Value throughTransposes(Value v) {
  while (auto t = v.getDefiningOp<dm::TransposeOp>())
    v = t.getX();
  return v;
}

/// Whether every read of `v` ends in `op`, directly or through transposes.
bool feedsOnly(Value v, Operation *op) {
  return llvm::all_of(v.getUsers(), [&](Operation *u) {
    return u == op || (isa<dm::TransposeOp>(u) && feedsOnly(u->getResult(0), op));
  });
}

/// The op reached from `v` through transposes when that is its only reader.
Operation *soleReader(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *u = *v.getUsers().begin();
  return isa<dm::TransposeOp>(u) ? soleReader(u->getResult(0)) : u;
}

/// The kernel input `v` is (through transposes), or null.
BlockArgument kernelInput(dm::KernelOp k, Value v) {
  auto arg = dyn_cast<BlockArgument>(throughTransposes(v));
  return arg && arg.getOwner() == &bodyOf(k) ? arg : BlockArgument();
}

/// Whether `user` (anywhere in the function) runs after `c`.
bool runsAfter(Operation *user, dm::ContractOp c) {
  Operation *top = c->getBlock()->findAncestorOpInBlock(*user);
  return top && c->isBeforeInBlock(top);
}

/// A view op (no data moves: an unstack, a rename) in `c`'s block.
bool isViewIn(Operation *op, dm::ContractOp c) {
  auto space = dyn_cast<dm::IterationSpaceOpInterface>(op);
  return space && space.isView() && op->getBlock() == c->getBlock();
}

/// Whether `reader` runs after `c`, or is a view whose readers all do
/// (it can move after `c`: moveViewsAfter).
bool readsAfter(Operation *reader, dm::ContractOp c) {
  if (runsAfter(reader, c))
    return true;
  if (!isViewIn(reader, c))
    return false;
  for (Value r : reader->getResults())
    for (Operation *u : r.getUsers())
      if (!readsAfter(u, c))
        return false;
  return true;
}

/// Moves the views reading `v` that sit before `c` (and the views reading
/// those) to just after `c`, in order, so they may read what `c` computes.
void moveViewsAfter(Value v, dm::ContractOp c) {
  SmallVector<Operation *> views;
  for (Operation *u : v.getUsers())
    if (isViewIn(u, c) && !runsAfter(u, c))
      views.push_back(u);
  llvm::sort(views, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *after = c;
  for (Operation *view : views) {
    view->moveAfter(after);
    after = view;
    for (Value r : view->getResults())
      moveViewsAfter(r, c);
  }
}

/// The traffic `k` stops moving when `op` leaves it: the outputs that yield
/// `op`'s result go (`gone`), inputs only `op` read go, and the kernel goes
/// when no output is left. `stays` (a bias_add's x or an add's operand from
/// the contraction, when other members read the op's result) stays read:
/// they read it instead.
int64_t trafficDropped(dm::KernelOp k, Operation *op, Value stays) {
  dm::YieldOp yield = yieldOf(k);
  int64_t dropped = 0;
  unsigned left = 0;
  for (auto [n, v] : llvm::enumerate(yield.getValues())) {
    if (v.getDefiningOp() == op)
      dropped += bytesOf(k.getResult(n));
    else
      ++left;
  }
  if (left == 0)
    return trafficOf(k);
  for (Value in : op->getOperands()) {
    BlockArgument arg = kernelInput(k, in);
    if (!arg)
      continue;
    if (feedsOnly(arg, op) && in != stays)
      dropped += bytesOf(k.getInputs()[arg.getArgNumber()]);
  }
  return dropped;
}

/// Whether `v` is available just before `c`: an argument, written before
/// it, or a view of such values (a stack of parameters) that can move there.
bool availableAt(Value v, dm::ContractOp c) {
  Operation *def = v.getDefiningOp();
  if (!def || def->isBeforeInBlock(c))
    return true;
  auto view = dyn_cast<dm::IterationSpaceOpInterface>(def);
  if (!view || !view.isView() || def->getBlock() != c->getBlock() ||
      !llvm::all_of(def->getOperands(), [&](Value in) {
        Operation *d = in.getDefiningOp();
        return !d || d->isBeforeInBlock(c);
      }))
    return false;
  return true;
}

bool mapsWith(dm::ContractOp c, dmrt::Epilogue kind, Value vector, std::string &why) {
  dmcgen::Contraction spec = layout::contractionOf(c);
  spec.epilogue = kind;
  spec.biasDims = cast<dm::TensorType>(vector.getType()).getNames().str();
  dmrt::GemmDescriptor g;
  std::string reason;
  if (dmcgen::mapContraction(spec, g, reason))
    return true;
  why = "cuBLASLt cannot run it in these layouts: " + reason;
  return false;
}

/// Whether members of its kernel (not only the yield) read `op`'s result.
bool readInside(Operation *op) {
  return llvm::any_of(op->getUsers(), [](Operation *u) { return !isa<dm::YieldOp>(u); });
}

/// The block argument through which the one kernel reading `c`'s result
/// reads it (that kernel into `k`); null with `why` otherwise.
BlockArgument resultInKernel(dm::ContractOp c, dm::KernelOp &k, std::string &why) {
  Value r = c.getResult();
  if (!r.hasOneUse())
    return why = "the result has several readers", BlockArgument();
  OpOperand &use = *r.getUses().begin();
  k = dyn_cast<dm::KernelOp>(use.getOwner());
  if (!k)
    return why = "the result's reader is not a fused kernel", BlockArgument();
  return bodyOf(k).getArgument(use.getOperandNumber());
}

bool findBias(dm::ContractOp c, Rules rules, Candidate &out, std::string &why) {
  dm::KernelOp k;
  BlockArgument a = resultInKernel(c, k, why);
  if (!a)
    return false;
  auto add = dyn_cast_or_null<dm::BiasAddOp>(soleReader(a));
  if (!add || throughTransposes(add.getX()) != a)
    return why = "the kernel reading the result does not only add a bias to it", false;
  BlockArgument biasArg = kernelInput(k, add.getBias());
  if (!biasArg)
    return why = "the bias is computed inside the kernel", false;
  Value bias = k.getInputs()[biasArg.getArgNumber()];
  if (!availableAt(bias, c))
    return why = "the bias is written after the contraction", false;
  if (rules.mustMap && !mapsWith(c, dmrt::Epilogue::Bias, bias, why))
    return false;
  Value stays = readInside(add) ? add.getX() : Value();
  int64_t dropped = trafficDropped(k, add, stays);
  out = {dmrt::Epilogue::Bias, c, k, add.getOperation(), dropped - bytesOf(bias),
         dropped == trafficOf(k)};
  return true;
}

/// "accumulate": the kernel reading the result adds another of its inputs,
/// of the result's type, to it (a residual, a second gradient contribution).
bool findAccumulate(dm::ContractOp c, Rules rules, Candidate &out, std::string &why) {
  dm::KernelOp k;
  BlockArgument a = resultInKernel(c, k, why);
  if (!a)
    return false;
  auto add = a.hasOneUse() ? dyn_cast<dm::AddOp>(*a.getUsers().begin()) : dm::AddOp();
  if (!add || add.getLhs() == add.getRhs())
    return why = "the kernel reading the result does not only add another tensor to it", false;
  Value other = add.getLhs() == a ? add.getRhs() : add.getLhs();
  auto otherArg = dyn_cast<BlockArgument>(other);
  if (!otherArg || otherArg.getOwner() != &bodyOf(k))
    return why = "the addend is computed inside the kernel", false;
  Value addend = k.getInputs()[otherArg.getArgNumber()];
  if (addend.getType() != c.getResult().getType())
    return why = "the addend is not laid out as the result", false;
  if (!availableAt(addend, c))
    return why = "the addend is written after the contraction", false;
  if (rules.mustMap && !mapsWith(c, dmrt::Epilogue::Accumulate, addend, why))
    return false;
  int64_t dropped = trafficDropped(k, add, readInside(add) ? Value(a) : Value());
  out = {dmrt::Epilogue::Accumulate, c, k, add.getOperation(), dropped - bytesOf(addend),
         dropped == trafficOf(k)};
  return true;
}

bool findBiasGrad(dm::ContractOp c, dmrt::Epilogue kind, Rules rules, Candidate &out,
                  std::string &why) {
  Value operand = c->getOperand(kind == dmrt::Epilogue::BGradA ? 0 : 1);
  auto operandType = cast<dm::TensorType>(operand.getType());
  std::string kept; // the operand's dims the result keeps: the sum runs over the rest
  for (char d : operandType.getNames())
    if (c.getType().hasDim(d))
      kept.push_back(d);
  why = "no fused kernel sums the operand down to '" + kept + "'";
  // The sum of the operand inside a kernel: one reading it (the value is
  // that kernel's input `a`) or the one writing it (the value it yields).
  auto tryKernel = [&](dm::KernelOp k, Value inside) {
    SmallVector<dm::ReduceSumOp> sums;
    bodyOf(k).walk([&](dm::ReduceSumOp sum) {
      if (throughTransposes(sum.getX()) == throughTransposes(inside))
        sums.push_back(sum);
    });
    for (dm::ReduceSumOp sum : sums) {
      if (!layout::isPermutation(sum.getType().getNames(), kept))
        continue;
      if (!llvm::all_of(sum->getUsers(), [](Operation *u) { return isa<dm::YieldOp>(u); })) {
        why = "the bias gradient is used inside its kernel";
        continue;
      }
      bool late = true;
      for (auto [n, v] : llvm::enumerate(yieldOf(k).getValues()))
        if (v == sum.getResult())
          for (Operation *reader : k.getResult(n).getUsers())
            late &= readsAfter(reader, c);
      if (!late) {
        why = "the bias gradient is read before the contraction runs";
        continue;
      }
      if (rules.mustMap && !mapsWith(c, kind, sum.getResult(), why))
        continue;
      int64_t dropped = trafficDropped(k, sum, Value());
      out = {kind, c, k, sum.getOperation(), dropped - bytesOf(sum.getResult()),
             dropped == trafficOf(k)};
      return true;
    }
    return false;
  };
  for (OpOperand &use : operand.getUses())
    if (auto k = dyn_cast<dm::KernelOp>(use.getOwner()))
      if (tryKernel(k, bodyOf(k).getArgument(use.getOperandNumber())))
        return true;
  if (auto k = operand.getDefiningOp<dm::KernelOp>())
    if (tryKernel(k, yieldOf(k).getValues()[cast<OpResult>(operand).getResultNumber()]))
      return true;
  return false;
}

} // namespace

bool findCandidate(dm::ContractOp c, dmrt::Epilogue kind, Candidate &out, std::string &why,
                   Rules rules) {
  if (c.getEpilogueKind() != dmrt::Epilogue::None)
    return why = "it already has epilogue \"" + c.getEpilogue().str() + "\"", false;
  bool found = false;
  if (kind == dmrt::Epilogue::Bias)
    found = findBias(c, rules, out, why);
  else if (kind == dmrt::Epilogue::Accumulate)
    found = findAccumulate(c, rules, out, why);
  else if (kind == dmrt::Epilogue::BGradA || kind == dmrt::Epilogue::BGradB)
    found = findBiasGrad(c, kind, rules, out, why);
  else
    why = "dmc folds only bias, bgrada, bgradb and accumulate into a contraction";
  if (found && rules.mustSave && out.bytesSaved <= 0) {
    why = "it would move the kernel's bytes into the GEMM without saving any";
    return false;
  }
  return found;
}

bool bestCandidate(dm::ContractOp c, Candidate &out, BiasGrads biasGrads, bool addends) {
  bool any = false;
  for (dmrt::Epilogue kind : kEpilogueKinds) {
    bool grad = kind == dmrt::Epilogue::BGradA || kind == dmrt::Epilogue::BGradB;
    if ((grad && biasGrads == BiasGrads::None) || (kind == dmrt::Epilogue::Accumulate && !addends))
      continue;
    Candidate cand;
    std::string why;
    Rules rules;
    rules.mustSave = biasGrads != BiasGrads::All || !grad;
    if (findCandidate(c, kind, cand, why, rules) && (!any || cand.bytesSaved > out.bytesSaved)) {
      out = cand;
      any = true;
    }
  }
  return any;
}

dm::ContractOp apply(const Candidate &cand) {
  dm::ContractOp c = cand.contraction;
  dm::KernelOp k = cand.kernel;
  names::stampTensorNames(c->getParentOfType<func::FuncOp>()); // folding removes tensors
  OpBuilder b(c);
  StringAttr name = b.getStringAttr(dmrt::epilogueManifestName(cand.kind));
  dm::ContractOp folded;
  llvm::DenseMap<unsigned, Value> replaced;
  // The bias gradient keeps the name of the kernel output it replaces (a
  // layer result's is the function's; an unstacked one's its stamp).
  Attribute gradName = b.getStringAttr("");
  if (isa<dm::BiasAddOp, dm::AddOp>(cand.op)) {
    // The operand from the contraction takes the sum's place in the kernel.
    unsigned xArg = unsigned(llvm::find(k.getInputs(), c.getResult()) - k.getInputs().begin());
    unsigned inside = throughTransposes(cand.op->getOperand(0)) == bodyOf(k).getArgument(xArg)
                          ? 0 : 1;
    Value bias = k.getInputs()[kernelInput(k, cand.op->getOperand(1 - inside)).getArgNumber()];
    if (Operation *def = bias.getDefiningOp(); def && !def->isBeforeInBlock(c))
      def->moveBefore(c); // a view of arguments (availableAt)
    folded = b.create<dm::ContractOp>(c.getLoc(), c.getType(), Type(), c.getLhs(), c.getRhs(),
                                      bias, c.getScaleAttr(), name);
    cand.op->getResult(0).replaceAllUsesWith(cand.op->getOperand(inside));
    cand.op->erase();
  } else {
    auto sum = cast<dm::ReduceSumOp>(cand.op);
    folded = b.create<dm::ContractOp>(c.getLoc(), c.getType(), sum.getType(), c.getLhs(),
                                      c.getRhs(), Value(), c.getScaleAttr(), name);
    for (auto [n, v] : llvm::enumerate(yieldOf(k).getValues()))
      if (v == sum.getResult()) {
        replaced[n] = folded.getBiasGrad();
        if (auto stamp = k->getAttrOfType<ArrayAttr>(names::kNamesAttr))
          gradName = stamp[n];
        moveViewsAfter(k.getResult(n), c); // e.g. an unstack of the gradients
      }
  }
  for (NamedAttribute attr : c->getDiscardableAttrs())
    folded->setAttr(attr.getName(), attr.getValue());
  folded->setAttr(kSavedAttr, b.getI64IntegerAttr(cand.bytesSaved));
  if (auto stamp = c->getAttrOfType<ArrayAttr>(names::kNamesAttr); stamp && folded.getBiasGrad()) {
    SmallVector<Attribute> more(stamp.begin(), stamp.end());
    more.push_back(gradName);
    folded->setAttr(names::kNamesAttr, b.getArrayAttr(more));
  }
  c.getResult().replaceAllUsesWith(folded.getResult());
  c.erase();
  pruneKernel(k, replaced);
  return folded;
}

} // namespace dmc::epilogue
