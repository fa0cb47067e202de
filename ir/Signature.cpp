//===- Signature.cpp - names and roles of a layer function's values -------===//
#include "ir/Signature.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace dmc::dm {

static StringRef stringAttr(DictionaryAttr dict, StringRef key) {
  if (!dict)
    return {};
  if (auto s = dict.getAs<StringAttr>(key))
    return s.getValue();
  return {};
}

StringRef argName(func::FuncOp f, unsigned index) {
  return stringAttr(f.getArgAttrDict(index), kNameAttr);
}
StringRef argRoleText(func::FuncOp f, unsigned index) {
  return stringAttr(f.getArgAttrDict(index), kRoleAttr);
}
StringRef resultName(func::FuncOp f, unsigned index) {
  return stringAttr(f.getResultAttrDict(index), kNameAttr);
}
StringRef resultRoleText(func::FuncOp f, unsigned index) {
  return stringAttr(f.getResultAttrDict(index), kRoleAttr);
}

static std::optional<dmrt::TensorRole> parsed(StringRef text) {
  dmrt::TensorRole role;
  if (!dmrt::parseTensorRole(text.str(), role))
    return std::nullopt;
  return role;
}
std::optional<dmrt::TensorRole> argRole(func::FuncOp f, unsigned index) {
  return parsed(argRoleText(f, index));
}
std::optional<dmrt::TensorRole> resultRole(func::FuncOp f, unsigned index) {
  return parsed(resultRoleText(f, index));
}

BlockArgument addArgument(func::FuncOp f, Type type, StringRef name, dmrt::TensorRole role) {
  Builder b(f.getContext());
  unsigned index = f.getNumArguments();
  auto attrs = b.getDictionaryAttr({b.getNamedAttr(kNameAttr, b.getStringAttr(name)),
                                    b.getNamedAttr(kRoleAttr,
                                                   b.getStringAttr(dmrt::tensorRoleName(role)))});
  f.insertArgument(index, type, attrs, f.getLoc());
  return f.getArgument(index);
}

void setResults(func::FuncOp f, ValueRange values, ArrayRef<std::string> names,
                ArrayRef<dmrt::TensorRole> roles) {
  Builder b(f.getContext());
  Operation *ret = f.getBody().back().getTerminator();
  ret->setOperands(values);
  f.setType(b.getFunctionType(f.getArgumentTypes(), values.getTypes()));
  SmallVector<DictionaryAttr> attrs;
  for (size_t n = 0; n < values.size(); ++n)
    attrs.push_back(
        b.getDictionaryAttr({b.getNamedAttr(kNameAttr, b.getStringAttr(names[n])),
                             b.getNamedAttr(kRoleAttr,
                                            b.getStringAttr(dmrt::tensorRoleName(roles[n])))}));
  f.setAllResultAttrs(attrs);
}

} // namespace dmc::dm
