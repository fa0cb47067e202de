//===- DmOps.cpp - verifiers of dm ops -------------------------------------===//
//
// Size agreement of every dimension name is checked once for all ops by the
// iteration-space interface (verifyConsistentDims); these verifiers check the
// structure each op needs on top of that.
//
//===----------------------------------------------------------------------===//
#include "ir/DmDialect.h"

using namespace mlir;

namespace dmc::dm {
namespace {

TensorType tensorOf(Value v) { return llvm::cast<TensorType>(v.getType()); }
StringRef namesOf(Value v) { return tensorOf(v).getNames(); }

/// The first letter of `sub` missing from `super`, or 0.
char firstMissing(StringRef sub, StringRef super) {
  for (char c : sub)
    if (super.find(c) == StringRef::npos)
      return c;
  return 0;
}

bool samePermutation(StringRef a, StringRef b) {
  return a.size() == b.size() && !firstMissing(a, b);
}

/// `dims` is a non-empty string of distinct letters of `x`.
LogicalResult verifyDimsOf(Operation *op, StringRef attr, StringRef dims, Value x) {
  if (dims.empty())
    return op->emitOpError() << "'" << attr << "' names no dimension";
  for (size_t n = 0; n < dims.size(); ++n)
    if (dims.find(dims[n], n + 1) != StringRef::npos)
      return op->emitOpError() << "'" << attr << "' names dimension '" << dims[n]
                               << "' twice";
  if (char c = firstMissing(dims, namesOf(x)))
    return op->emitOpError() << "'" << attr << "' names dimension '" << c
                             << "', which the input " << x.getType() << " lacks";
  return success();
}

LogicalResult verifyActivationKind(Operation *op, StringRef kind) {
  if (parseActivationKind(kind))
    return success();
  return op->emitOpError() << "unknown activation '" << kind << "'; expected "
                           << kActivationKinds;
}

/// `a` and `b` hold the same element type.
LogicalResult verifySameElementType(Operation *op, Value a, Value b) {
  Type ea = tensorOf(a).getElementType(), eb = tensorOf(b).getElementType();
  if (ea != eb)
    return op->emitOpError() << "mixes element types " << ea << " and " << eb;
  return success();
}

/// x's dims are `dims` (the normalized ones, as `gamma`'s) plus those of `stats`.
LogicalResult verifyNormalized(Operation *op, Value x, StringRef dims, Value gamma,
                               Value stats) {
  if (failed(verifyDimsOf(op, "dims", dims, x)))
    return failure();
  if (!samePermutation(namesOf(gamma), dims))
    return op->emitOpError() << "gamma and beta must have exactly the normalized dimensions '"
                             << dims << "', got " << gamma.getType();
  std::string kept;
  for (char c : namesOf(x))
    if (dims.find(c) == StringRef::npos)
      kept.push_back(c);
  if (!samePermutation(namesOf(stats), kept))
    return op->emitOpError() << "mean and rstd must have the dimensions '" << kept
                             << "' of the input that are not normalized, got "
                             << stats.getType();
  return verifySameElementType(op, x, gamma);
}

} // namespace

LogicalResult ContractOp::verify() {
  StringRef a = namesOf(getLhs()), b = namesOf(getRhs()), r = namesOf(getResult());
  for (auto [n, mine, other] : {std::make_tuple(0, a, b), std::make_tuple(1, b, a)})
    for (char c : mine)
      if (other.find(c) == StringRef::npos && r.find(c) == StringRef::npos)
        return emitOpError() << "dimension '" << c << "' of operand " << n
                             << " appears in neither the other operand nor the result";
  for (char c : r)
    if (a.find(c) == StringRef::npos && b.find(c) == StringRef::npos)
      return emitOpError() << "result dimension '" << c << "' appears in no operand";
  if (failed(verifySameElementType(*this, getLhs(), getRhs())))
    return failure();
  // The result in the operands' type, or in f32 (summed and kept without
  // rounding: attention's Drow, which one fused kernel hands another).
  if (!tensorOf(getResult()).getElementType().isF32() &&
      failed(verifySameElementType(*this, getLhs(), getResult())))
    return failure();
  return verifyEpilogue();
}

dmrt::Epilogue ContractOp::getEpilogueKind() {
  dmrt::Epilogue e = dmrt::Epilogue::None;
  dmrt::parseEpilogue(getEpilogue().str(), e);
  return e;
}

LogicalResult ContractOp::verifyEpilogue() {
  dmrt::Epilogue e;
  if (!dmrt::parseEpilogue(getEpilogue().str(), e) ||
      !llvm::is_contained({dmrt::Epilogue::None, dmrt::Epilogue::Bias, dmrt::Epilogue::BGradA,
                           dmrt::Epilogue::BGradB, dmrt::Epilogue::Accumulate},
                          e))
    return emitOpError() << "epilogue \"" << getEpilogue()
                         << "\" is not one of none, bias, bgrada, bgradb, accumulate";
  bool accumulates = e == dmrt::Epilogue::Accumulate;
  bool reads = e == dmrt::Epilogue::Bias || accumulates;
  bool writes = e != dmrt::Epilogue::None && !reads;
  if (bool(getBias()) != reads)
    return emitOpError() << "epilogue \"" << getEpilogue() << "\" "
                         << (reads ? "needs a" : "takes no") << " bias operand";
  if (bool(getBiasGrad()) != writes)
    return emitOpError() << "epilogue \"" << getEpilogue() << "\" "
                         << (writes ? "needs a" : "has no") << " bias_grad result";
  if (accumulates) {
    // The addend has every dim of the result (in any order: a layout change
    // may reorder one; the cuBLASLt mapping needs the same order).
    auto addend = cast<TensorType>(getBias().getType());
    if (!samePermutation(namesOf(getResult()), namesOf(getBias())))
      return emitOpError() << "the addend of epilogue \"accumulate\" must have the result's "
                              "dimensions '"
                           << getType().getNames() << "', got '" << addend.getNames() << "'";
    // (Sizes: the space verifier checks every operand's against the others.)
  }
  if (reads) {
    if (char c = firstMissing(namesOf(getBias()), namesOf(getResult())))
      return emitOpError() << "bias dimension '" << c << "' is not a dimension of the result";
    return verifySameElementType(*this, getBias(), getResult());
  }
  if (writes) {
    Value summed = e == dmrt::Epilogue::BGradA ? getLhs() : getRhs();
    if (char c = firstMissing(namesOf(getBiasGrad()), namesOf(summed)))
      return emitOpError() << "bias_grad dimension '" << c << "' is not a dimension of "
                           << (e == dmrt::Epilogue::BGradA ? "lhs" : "rhs");
  }
  return success();
}

LogicalResult BiasAddOp::verify() {
  if (char c = firstMissing(namesOf(getBias()), namesOf(getX())))
    return emitOpError() << "bias dimension '" << c << "' is not a dimension of the input";
  return verifySameElementType(*this, getX(), getBias());
}

LogicalResult ActivationOp::verify() { return verifyActivationKind(*this, getKind()); }
LogicalResult ActivationGradOp::verify() { return verifyActivationKind(*this, getKind()); }

/// The attributes dm.dropout and dm.dropout_keep_bits share: p in [0, 1),
/// an id that fits 32 bits, and an order that permutes x's dims.
LogicalResult verifyDropoutDraw(Operation *op, double p, int64_t id, StringRef order, Value x) {
  if (!(p >= 0.0 && p < 1.0))
    return op->emitOpError() << "probability " << p << " is outside [0, 1)";
  if (id < 0 || id > 0xFFFFFFFFll)
    return op->emitOpError() << "id " << id << " is outside [0, 2^32)";
  std::string sorted = order.str(), dims = tensorOf(x).getNames().str();
  llvm::sort(sorted);
  llvm::sort(dims);
  if (sorted != dims)
    return op->emitOpError() << "order '" << order << "' is not a permutation of the dims '"
                             << tensorOf(x).getNames() << "'";
  return success();
}

/// `bits` has x's dims with `key` replaced by `word` (in any layout),
/// ceil(size(key) / 32) words long (dm.dropout_keep_bits and
/// dm.dropout_apply_bits).
LogicalResult verifyKeepBits(Operation *op, Value x, Type bitsType, StringRef key,
                             StringRef word) {
  auto xt = tensorOf(x);
  auto bt = cast<dm::TensorType>(bitsType);
  if (key.size() != 1 || word.size() != 1 || !xt.hasDim(key[0]))
    return op->emitOpError() << "key '" << key << "' must be one dimension of x ('"
                             << xt.getNames() << "') and word '" << word << "' one letter";
  if (xt.hasDim(word[0]))
    return op->emitOpError() << "word '" << word << "' is already a dimension of x ('"
                             << xt.getNames() << "')";
  std::string want = xt.getNames().str(), have = bt.getNames().str();
  want[want.find(key[0])] = word[0];
  std::string sortedWant = want, sortedHave = have;
  llvm::sort(sortedWant);
  llvm::sort(sortedHave);
  if (sortedHave != sortedWant) // any layout of them
    return op->emitOpError() << "keep bits have dims '" << have << "', expected '" << want
                             << "' in some order (x's with the key replaced by the word)";
  int64_t words = (xt.getSize(key[0]) + 31) / 32;
  for (char c : want)
    if (bt.getSize(c) != (c == word[0] ? words : xt.getSize(c)))
      return op->emitOpError() << "keep bits dimension '" << c << "' has size "
                               << bt.getSize(c) << ", expected "
                               << (c == word[0] ? words : xt.getSize(c));
  return success();
}

LogicalResult DropoutOp::verify() {
  return verifyDropoutDraw(*this, getP().convertToDouble(), getIdAttr().getValue().getSExtValue(),
                           getOrder(), getX());
}

LogicalResult DropoutKeepBitsOp::verify() {
  if (failed(verifyDropoutDraw(*this, getP().convertToDouble(),
                               getIdAttr().getValue().getSExtValue(), getOrder(), getX())))
    return failure();
  return verifyKeepBits(*this, getX(), getResult().getType(), getKey(), getWord());
}

LogicalResult DropoutApplyBitsOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError() << "probability " << p << " is outside [0, 1)";
  return verifyKeepBits(*this, getX(), getBits().getType(), getKey(), getWord());
}

LogicalResult CausalMaskOp::verify() {
  if (getQuery().size() != 1 || getKey().size() != 1 || getQuery() == getKey())
    return emitOpError() << "query and key must be two different single dimensions";
  if (failed(verifyDimsOf(*this, "query", getQuery(), getX())) ||
      failed(verifyDimsOf(*this, "key", getKey(), getX())))
    return failure();
  if (tensorOf(getX()).getSize(getQuery()[0]) != tensorOf(getX()).getSize(getKey()[0]))
    return emitOpError() << "query and key dimensions differ in size";
  return success();
}

LogicalResult KeyPaddingMaskOp::verify() {
  TensorType lengths = tensorOf(getLengths());
  if (lengths.getRank() != 1 || !lengths.getElementType().isInteger(32))
    return emitOpError() << "lengths must be a 1-d i32 tensor, got " << lengths;
  if (failed(verifyDimsOf(*this, "lengths", lengths.getNames(), getX())))
    return failure();
  if (getKey().size() != 1 || getKey() == lengths.getNames())
    return emitOpError() << "key must be one dimension other than the lengths' one";
  return verifyDimsOf(*this, "key", getKey(), getX());
}

LogicalResult SoftmaxOp::verify() { return verifyDimsOf(*this, "dim", getDim(), getX()); }
LogicalResult SoftmaxGradOp::verify() { return verifyDimsOf(*this, "dim", getDim(), getY()); }

LogicalResult LogSumExpOp::verify() {
  if (failed(verifyDimsOf(*this, "dim", getDim(), getX())))
    return failure();
  if (!tensorOf(getResult()).getElementType().isF32())
    return emitOpError() << "result must be f32, got " << getResult().getType();
  std::string expected;
  for (char c : namesOf(getX()))
    if (getDim().find(c) == StringRef::npos)
      expected.push_back(c);
  StringRef names = namesOf(getResult());
  if (!samePermutation(names, expected))
    return emitOpError() << "result dims '" << names << "' must be the input's without '"
                         << getDim() << "' ('" << expected << "')";
  return success();
}

/// `row` (lse, rowsum) must carry a subset of the dims of `x`.
static LogicalResult verifyRowOperand(Operation *op, StringRef what, Value row, Value x) {
  if (char c = firstMissing(namesOf(row), namesOf(x)))
    return op->emitOpError() << what << " dimension '" << c << "' is not a dimension of "
                             << namesOf(x);
  return success();
}

LogicalResult SoftmaxLseOp::verify() { return verifyRowOperand(*this, "lse", getLse(), getX()); }
LogicalResult SoftmaxGradRowsumOp::verify() {
  return verifyRowOperand(*this, "rowsum", getRowsum(), getY());
}

LogicalResult LayerNormOp::verify() {
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "eps must be positive, got " << getEps().convertToDouble();
  return verifyNormalized(*this, getX(), getDims(), getGamma(), getMean());
}

LogicalResult LayerNormGradInputOp::verify() {
  return verifyNormalized(*this, getX(), getDims(), getGamma(), getMean());
}

LogicalResult LayerNormGradParamsOp::verify() {
  std::string dims;
  for (char c : namesOf(getX()))
    if (!tensorOf(getMean()).hasDim(c))
      dims.push_back(c);
  if (char c = firstMissing(namesOf(getMean()), namesOf(getX())))
    return emitOpError() << "mean dimension '" << c << "' is not an input dimension";
  return verifyNormalized(*this, getX(), dims, getDgamma(), getMean());
}

LogicalResult ReduceSumOp::verify() {
  if (char c = firstMissing(namesOf(getResult()), namesOf(getX())))
    return emitOpError() << "result dimension '" << c << "' is not an input dimension";
  return verifySameElementType(*this, getX(), getResult());
}

LogicalResult BroadcastOp::verify() {
  if (char c = firstMissing(namesOf(getX()), namesOf(getResult())))
    return emitOpError() << "input dimension '" << c << "' is not a result dimension";
  return verifySameElementType(*this, getX(), getResult());
}

LogicalResult TransposeOp::verify() {
  if (!samePermutation(namesOf(getX()), namesOf(getResult())))
    return emitOpError() << "result " << getResult().getType()
                         << " is not a permutation of the input " << getX().getType();
  return verifySameElementType(*this, getX(), getResult());
}

LogicalResult RenameOp::verify() {
  StringRef from = getFrom(), to = getTo(), in = namesOf(getX()), out = namesOf(getResult());
  if (from.size() != to.size() || from.empty())
    return emitOpError() << "'from' and 'to' must be non-empty and of equal length";
  if (failed(verifyDimsOf(*this, "from", from, getX())))
    return failure();
  if (in.size() != out.size())
    return emitOpError() << "renaming cannot change the rank";
  for (size_t n = 0; n < in.size(); ++n) {
    size_t pos = from.find(in[n]);
    char expected = pos == StringRef::npos ? in[n] : to[pos];
    if (out[n] != expected)
      return emitOpError() << "result dimension " << n << " is '" << out[n]
                           << "', expected '" << expected << "'";
    if (tensorOf(getX()).getShape()[n] != tensorOf(getResult()).getShape()[n])
      return emitOpError() << "renaming cannot change sizes";
  }
  return verifySameElementType(*this, getX(), getResult());
}

/// Stacked type = element type as `part`, dims of `part` plus `dim` of size `count`.
static LogicalResult verifyStacked(Operation *op, TensorType part, TensorType whole,
                                   StringRef dim, size_t count) {
  if (dim.size() != 1 || part.hasDim(dim[0]))
    return op->emitOpError() << "'dim' must be one dimension that the slices lack, got '"
                             << dim << "'";
  if (!whole.hasDim(dim[0]) || whole.getSize(dim[0]) != static_cast<int64_t>(count))
    return op->emitOpError() << "the stacked tensor needs dimension '" << dim
                             << "' of size " << count;
  std::string rest;
  for (char c : whole.getNames())
    if (c != dim[0])
      rest.push_back(c);
  if (rest != part.getNames() || part.getElementType() != whole.getElementType())
    return op->emitOpError() << "stacked tensor " << whole << " does not extend " << part;
  return success();
}

LogicalResult StackOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  for (Value v : getInputs())
    if (v.getType() != getInputs()[0].getType())
      return emitOpError() << "inputs must all have one type";
  return verifyStacked(*this, tensorOf(getInputs()[0]), tensorOf(getResult()), getDim(),
                       getInputs().size());
}

LogicalResult UnstackOp::verify() {
  if (getOutputs().empty())
    return emitOpError() << "needs at least one output";
  for (Value v : getOutputs())
    if (v.getType() != getOutputs()[0].getType())
      return emitOpError() << "outputs must all have one type";
  return verifyStacked(*this, tensorOf(getOutputs()[0]), tensorOf(getX()), getDim(),
                       getOutputs().size());
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size() << " inputs but its body takes "
                         << body.getNumArguments() << " arguments";
  for (auto [n, in, arg] : llvm::enumerate(getInputs(), body.getArguments()))
    if (in.getType() != arg.getType())
      return emitOpError() << "input " << n << " has type " << in.getType()
                           << " but body argument " << n << " has type " << arg.getType();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end in dm.yield";
  if (yield.getValues().getTypes() != getOutputs().getTypes())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values whose types differ from the kernel's outputs";
  return success();
}

} // namespace dmc::dm
