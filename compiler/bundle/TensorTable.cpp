//===- TensorTable.cpp - every tensor of a compiled layer, with its memory ===//
#include "compiler/bundle/TensorTable.h"

#include "ir/DmDialect.h"
#include "ir/InPlaceStack.h"
#include "ir/Signature.h"
#include "passes/LayoutRewrite.h"
#include "passes/TensorNames.h"

using namespace mlir;

namespace dmc::bundle {

int TensorTable::add(Value v, std::string name, dmrt::TensorRole role) {
  TensorInfo t;
  t.id = infos.size();
  t.name = name.empty() ? "t" + std::to_string(t.id) : std::move(name);
  t.role = role;
  t.value = v;
  ids[v] = t.id;
  infos.push_back(std::move(t));
  return infos.back().id;
}

static llvm::Error unsupported(Operation *op, const llvm::Twine &why) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName() << " at " << op->getLoc() << ": " << why;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), s);
}

llvm::Expected<TensorTable> TensorTable::build(func::FuncOp f) {
  TensorTable table;
  auto roleOf = [&](std::optional<dmrt::TensorRole> role, llvm::StringRef text,
                    dmrt::TensorRole &out) -> llvm::Error {
    if (role) {
      out = *role;
      return llvm::Error::success();
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "@" + f.getName() + ": unknown dm.role \"" + text +
                                       "\" (the bundle knows input, param, grad_output, "
                                       "output, grad)");
  };
  for (auto [n, arg] : llvm::enumerate(f.getArguments())) {
    dmrt::TensorRole role;
    if (llvm::Error e = roleOf(dm::argRole(f, n), dm::argRoleText(f, n), role))
      return e;
    table.add(arg, dm::argName(f, n).str(), role);
  }
  // Intermediates are t<n>, named so that a tensor keeps its name from the
  // fuse stage to the config stage (passes/TensorNames.h).
  llvm::DenseMap<Value, std::string> names = names::intermediateNames(f);
  for (Operation &op : f.getBody().front().without_terminator())
    for (Value r : op.getResults())
      table.add(r, op.hasAttr(layout::kInsertedAttr) ? "?" : names.lookup(r),
                dmrt::TensorRole::Intermediate);

  // Views alias what they view.
  for (Operation &op : f.getBody().front().without_terminator()) {
    auto aliasTo = [&](Value view, Value of, int64_t offset) {
      TensorInfo &t = table.infos[table.idOf(view)];
      t.aliasOf = table.idOf(of);
      t.aliasOffset = offset;
    };
    if (isa<dm::RenameOp, dm::SaveOp>(op)) {
      aliasTo(op.getResult(0), op.getOperand(0), 0);
    } else if (auto unstack = dyn_cast<dm::UnstackOp>(op)) {
      auto whole = cast<dm::TensorType>(unstack.getX().getType());
      if (whole.indexOf(unstack.getDim()[0]) != 0)
        return unsupported(&op, "slices along a dimension that is not outermost are not "
                                "contiguous; the bundle needs the stack dimension first");
      int64_t slice = whole.getNumElements() / whole.getShape()[0];
      for (auto [n, part] : llvm::enumerate(unstack.getOutputs()))
        aliasTo(part, unstack.getX(), int64_t(n) * slice);
    } else if (auto stack = dyn_cast<dm::StackOp>(op);
               stack && stack->hasAttr(dm::kInPlaceAttr)) {
      // Each slice, its producer's result and the renames between: a view of
      // the stacked buffer, strided unless the stack dim is outermost.
      for (Value part : stack.getInputs()) {
        for (Value v = part;;) {
          std::optional<dm::InPlaceSlice> slice = dm::inPlaceSliceOf(v);
          if (!slice)
            return unsupported(&op, "an in-place slice is not written where the stack keeps it");
          aliasTo(v, stack.getResult(), slice->offset);
          TensorInfo &t = table.infos[table.idOf(v)];
          auto dense = cast<dm::TensorType>(v.getType());
          bool isDense = true;
          for (unsigned d = 0; d < dense.getRank(); ++d)
            isDense &= slice->strides[d] == dm::rowMajorStride(dense, dense.getNames()[d]);
          t.aliasStrides.clear();
          if (!isDense)
            t.aliasStrides.assign(slice->strides.begin(), slice->strides.end());
          auto rename = v.getDefiningOp<dm::RenameOp>();
          if (!rename)
            break;
          v = rename.getX();
        }
      }
    } else if (auto stack = dyn_cast<dm::StackOp>(op); stack && stack.isView()) {
      // Parameters stored as one stacked buffer: each is a slice of it.
      auto whole = cast<dm::TensorType>(stack.getType());
      if (whole.indexOf(stack.getDim()[0]) != 0)
        return unsupported(&op, "parameters can only be stacked along the outermost dimension");
      int64_t slice = whole.getNumElements() / whole.getShape()[0];
      for (auto [n, part] : llvm::enumerate(stack.getInputs())) {
        if (table.infos[table.idOf(part)].aliasOf >= 0)
          return unsupported(&op, "a parameter stacked twice cannot live in two buffers");
        aliasTo(part, stack.getResult(), int64_t(n) * slice);
      }
    }
  }
  // Results of the layer keep their names and roles.
  Operation *ret = f.getBody().front().getTerminator();
  for (auto [n, v] : llvm::enumerate(ret->getOperands())) {
    TensorInfo &t = table.infos[table.idOf(v)];
    if (t.role == dmrt::TensorRole::Intermediate) {
      t.name = dm::resultName(f, n).str();
      if (llvm::Error e = roleOf(dm::resultRole(f, n), dm::resultRoleText(f, n), t.role))
        return e;
    }
  }
  // An inserted transpose's result: "<its input>@<layout>".
  for (Operation &op : f.getBody().front().without_terminator())
    if (op.hasAttr(layout::kInsertedAttr))
      table.infos[table.idOf(op.getResult(0))].name =
          table.infos[table.idOf(op.getOperand(0))].name + "@" +
          cast<dm::TensorType>(op.getResult(0).getType()).getNames().str();
  return table;
}

} // namespace dmc::bundle
