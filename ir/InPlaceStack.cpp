//===- InPlaceStack.cpp - tensors written straight into a stacked buffer -===//
#include "ir/InPlaceStack.h"

using namespace mlir;

namespace dmc::dm {

int64_t rowMajorStride(TensorType t, char letter) {
  int pos = t.indexOf(letter);
  if (pos < 0)
    return 0;
  int64_t s = 1;
  for (unsigned n = pos + 1; n < t.getRank(); ++n)
    s *= t.getShape()[n];
  return s;
}

std::optional<InPlaceSlice> inPlaceSliceOf(Value v) {
  auto type = dyn_cast<TensorType>(v.getType());
  if (!type)
    return std::nullopt;
  // Each of v's letters as the stack's result names it (renames on the way).
  std::string letters = type.getNames().str();
  Value cur = v;
  while (cur.hasOneUse()) {
    OpOperand &use = *cur.use_begin();
    Operation *user = use.getOwner();
    if (auto rename = dyn_cast<RenameOp>(user)) {
      for (char &c : letters)
        if (size_t pos = rename.getFrom().find(c); pos != llvm::StringRef::npos)
          c = rename.getTo()[pos];
      cur = rename.getResult();
      continue;
    }
    auto stack = dyn_cast<StackOp>(user);
    if (!stack || !stack->hasAttr(kInPlaceAttr))
      return std::nullopt;
    auto whole = cast<TensorType>(stack.getType());
    InPlaceSlice s;
    s.stack = stack;
    s.offset = int64_t(use.getOperandNumber()) * rowMajorStride(whole, stack.getDim()[0]);
    for (char c : letters)
      s.strides.push_back(rowMajorStride(whole, c));
    return s;
  }
  return std::nullopt;
}

} // namespace dmc::dm
