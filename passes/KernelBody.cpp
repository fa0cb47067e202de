//===- KernelBody.cpp - building a dm.kernel and its region ---------------===//
#include "passes/KernelBody.h"

#include "ir/IterationSpace.h"
#include "passes/TensorNames.h"

#include "llvm/ADT/BitVector.h"

using namespace mlir;

namespace dmc {

dm::KernelOp buildKernelOp(
    OpBuilder &b, Location loc, StringRef name, ValueRange inputs, TypeRange results,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, IRMapping &)> body) {
  auto kernel = b.create<dm::KernelOp>(loc, results, inputs, b.getStringAttr(name));
  Block *block = new Block();
  kernel.getBody().push_back(block);
  IRMapping map;
  for (Value v : inputs)
    map.map(v, block->addArgument(v.getType(), v.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  SmallVector<Value> yielded = body(inner, map);
  inner.create<dm::YieldOp>(loc, yielded);
  return kernel;
}

void pruneKernel(dm::KernelOp k, const llvm::DenseMap<unsigned, Value> &replaced) {
  Block &body = k.getBody().front();
  dm::YieldOp yield = cast<dm::YieldOp>(k.getBody().front().getTerminator());
  SmallVector<Value> keptValues;
  SmallVector<OpResult> keptResults;
  for (auto [n, v] : llvm::enumerate(yield.getValues())) {
    OpResult res = k->getResult(n);
    if (auto it = replaced.find(n); it != replaced.end())
      res.replaceAllUsesWith(it->second);
    else if (auto arg = dyn_cast<BlockArgument>(v))
      res.replaceAllUsesWith(k.getInputs()[arg.getArgNumber()]);
    else {
      keptValues.push_back(v);
      keptResults.push_back(res);
    }
  }
  yield->setOperands(keptValues);
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) // readers first, so chains die whole
    if (op->use_empty())
      op->erase();
  if (keptValues.empty()) {
    k.erase();
    return;
  }
  llvm::BitVector unused(body.getNumArguments());
  SmallVector<Value> inputs;
  for (BlockArgument arg : body.getArguments()) {
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
    else
      inputs.push_back(k.getInputs()[arg.getArgNumber()]);
  }
  SmallVector<Operation *> members;
  for (Operation &op : body.without_terminator())
    if (!isa<dm::TransposeOp>(op)) // layouts' transposes are not in fused names
      members.push_back(&op);
  std::string name = dm::kernelNameOf(members);
  OpBuilder b(k);
  auto rebuilt = b.create<dm::KernelOp>(k.getLoc(), ValueRange(keptValues).getTypes(), inputs,
                                        b.getStringAttr(name.empty() ? k.getName() : name));
  for (NamedAttribute attr : k->getDiscardableAttrs())
    rebuilt->setAttr(attr.getName(), attr.getValue());
  if (auto stamp = k->getAttrOfType<ArrayAttr>(names::kNamesAttr)) {
    SmallVector<Attribute> kept;
    for (OpResult res : keptResults)
      kept.push_back(stamp[res.getResultNumber()]);
    rebuilt->setAttr(names::kNamesAttr, b.getArrayAttr(kept));
  }
  rebuilt.getBody().takeBody(k.getBody());
  rebuilt.getBody().front().eraseArguments(unused);
  for (auto [old, now] : llvm::zip(keptResults, rebuilt.getResults()))
    old.replaceAllUsesWith(now);
  k.erase();
}


char unusedDimLetter(func::FuncOp func) {
  std::string free = unusedDimLetters(func);
  return free.empty() ? 0 : free.front();
}

std::string unusedDimLetters(func::FuncOp func) {
  std::string used;
  func.walk([&](Operation *op) {
    for (auto range : {TypeRange(op->getResultTypes()), TypeRange(op->getOperandTypes())})
      for (Type t : range)
        if (auto tt = dyn_cast<dm::TensorType>(t))
          used += tt.getNames().str();
  });
  std::string free;
  for (char c : llvm::StringRef("wxyzvutrqonmlgfedcaWXYZ"))
    if (used.find(c) == std::string::npos)
      free += c;
  return free;
}

} // namespace dmc
