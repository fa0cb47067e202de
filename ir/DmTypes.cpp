//===- DmTypes.cpp - the named-dimension tensor type ----------------------===//
#include "ir/DmDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace dmc::dm {

int TensorType::indexOf(char name) const {
  size_t pos = getNames().find(name);
  return pos == llvm::StringRef::npos ? -1 : static_cast<int>(pos);
}

int64_t TensorType::getSize(char name) const {
  int pos = indexOf(name);
  assert(pos >= 0 && "dimension not in tensor type");
  return getShape()[pos];
}

int64_t TensorType::getNumElements() const {
  int64_t n = 1;
  for (int64_t s : getShape())
    n *= s;
  return n;
}

int64_t TensorType::getSizeInBytes() const {
  return getNumElements() * ((getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

TensorType TensorType::withDims(llvm::StringRef names,
                                llvm::ArrayRef<int64_t> shape) const {
  return TensorType::get(getContext(), names, shape, getElementType());
}

TensorType TensorType::restrictedTo(llvm::StringRef names) const {
  llvm::SmallVector<int64_t> shape;
  for (char c : names)
    shape.push_back(getSize(c));
  return withDims(names, shape);
}

LogicalResult TensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 llvm::StringRef names, llvm::ArrayRef<int64_t> shape,
                                 Type elementType) {
  if (names.size() != shape.size())
    return emitError() << "tensor type has " << names.size() << " names but "
                       << shape.size() << " sizes";
  for (size_t n = 0; n < names.size(); ++n) {
    char c = names[n];
    if (!llvm::isAlpha(c))
      return emitError() << "dimension name '" << c << "' is not a letter";
    if (names.find(c, n + 1) != llvm::StringRef::npos)
      return emitError() << "dimension '" << c << "' appears twice in a tensor type";
    if (shape[n] <= 0)
      return emitError() << "dimension '" << c << "' has size " << shape[n]
                         << "; sizes must be positive";
  }
  if (!llvm::isa<FloatType, IntegerType>(elementType))
    return emitError() << "element type " << elementType
                       << " is neither a float nor an integer type";
  return success();
}

/// `<[b=8, j=512, i=1024], bf16>`
Type TensorType::parse(AsmParser &parser) {
  llvm::SmallString<8> names;
  llvm::SmallVector<int64_t> shape;
  Type elementType;
  auto parseDim = [&]() -> ParseResult {
    StringRef name;
    int64_t size;
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseOptionalKeyword(&name))
      return parser.emitError(loc, "expected a dimension name (one letter)");
    if (name.size() != 1)
      return parser.emitError(loc, "dimension names are single letters, got '")
             << name << "'";
    if (parser.parseEqual() || parser.parseInteger(size))
      return failure();
    names.push_back(name[0]);
    shape.push_back(size);
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseComma() || parser.parseType(elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<TensorType>(parser.getContext(), names.str(), llvm::ArrayRef<int64_t>(shape),
                                       elementType);
}

void TensorType::print(AsmPrinter &printer) const {
  printer << "<[";
  for (unsigned n = 0; n < getRank(); ++n) {
    if (n)
      printer << ", ";
    printer << getNames()[n] << "=" << getShape()[n];
  }
  printer << "], " << getElementType() << ">";
}

} // namespace dmc::dm
