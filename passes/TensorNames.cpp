//===- TensorNames.cpp - stable names of a fused graph's intermediates ----===//
#include "passes/TensorNames.h"

#include "passes/LayoutRewrite.h"

#include "mlir/IR/Builders.h"

#include <set>

using namespace mlir;

namespace dmc::names {
namespace {

/// Whether `f` was stamped (a unit attribute on the function).
constexpr llvm::StringLiteral kStampedAttr = "dm.tensor_names_stamped";

} // namespace

llvm::DenseMap<Value, std::string> intermediateNames(func::FuncOp f) {
  llvm::DenseMap<Value, std::string> names;
  Block &block = f.getBody().front();
  std::set<std::string> taken;
  std::vector<Value> unnamed;
  int64_t next = block.getNumArguments();
  for (Operation &op : block.without_terminator()) {
    if (op.hasAttr(layout::kInsertedAttr))
      continue;
    auto stamp = op.getAttrOfType<ArrayAttr>(kNamesAttr);
    for (OpResult r : op.getResults()) {
      std::string name;
      if (stamp && r.getResultNumber() < stamp.size())
        name = cast<StringAttr>(stamp[r.getResultNumber()]).getValue().str();
      else if (!stamp)
        name = "t" + std::to_string(next++);
      if (name.empty()) {
        unnamed.push_back(r);
        continue;
      }
      names[r] = name;
      taken.insert(name);
    }
  }
  for (Value r : unnamed) { // created after the stamps: the next free numbers
    std::string name;
    do
      name = "t" + std::to_string(next++);
    while (taken.count(name));
    names[r] = name;
  }
  return names;
}

void stampTensorNames(func::FuncOp f) {
  if (f->hasAttr(kStampedAttr))
    return;
  llvm::DenseMap<Value, std::string> names = intermediateNames(f);
  Builder b(f);
  for (Operation &op : f.getBody().front().without_terminator()) {
    if (op.getNumResults() == 0 || op.hasAttr(layout::kInsertedAttr))
      continue;
    SmallVector<Attribute> stamp;
    for (OpResult r : op.getResults())
      stamp.push_back(b.getStringAttr(names.lookup(r)));
    op.setAttr(kNamesAttr, b.getArrayAttr(stamp));
  }
  f->setAttr(kStampedAttr, b.getUnitAttr());
}

} // namespace dmc::names
