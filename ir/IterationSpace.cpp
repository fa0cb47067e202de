//===- IterationSpace.cpp - iteration spaces of dm ops --------------------===//
#include "ir/IterationSpace.h"
#include "ir/InPlaceStack.h"

using namespace mlir;

namespace dmc::dm {

namespace {
/// Appends the names of `t` not yet in `names`.
void addNames(std::string &names, Type t) {
  if (auto tt = llvm::dyn_cast<TensorType>(t))
    for (char c : tt.getNames())
      if (names.find(c) == std::string::npos)
        names.push_back(c);
}
} // namespace

std::string iterationDims(Operation *op) {
  std::string names;
  for (Type t : op->getResultTypes())
    addNames(names, t);
  for (Type t : op->getOperandTypes())
    addNames(names, t);
  if (auto space = llvm::dyn_cast<IterationSpaceOpInterface>(op))
    for (char c : space.getPackedDims())
      if (size_t at = names.find(c); at != std::string::npos)
        names.erase(at, 1);
  return names;
}

int64_t dimSize(Operation *op, char name) {
  for (auto range : {TypeRange(op->getResultTypes()), TypeRange(op->getOperandTypes())})
    for (Type t : range)
      if (auto tt = llvm::dyn_cast<TensorType>(t))
        if (tt.hasDim(name))
          return tt.getSize(name);
  return 0;
}

OperandRange spaceOperands(Operation *op) {
  auto space = llvm::dyn_cast<IterationSpaceOpInterface>(op);
  return op->getOperands().take_front(space ? space.getNumSpaceOperands()
                                            : op->getNumOperands());
}

std::string privateDims(Operation *op, unsigned index) {
  auto mine = llvm::cast<TensorType>(op->getOperand(index).getType());
  std::string result;
  for (char c : mine.getNames()) {
    bool shared = false;
    for (auto [n, v] : llvm::enumerate(spaceOperands(op)))
      if (n != index)
        if (auto tt = llvm::dyn_cast<TensorType>(v.getType()))
          shared |= tt.hasDim(c);
    if (!shared)
      result.push_back(c);
  }
  return result;
}

std::string kernelNameOf(llvm::ArrayRef<Operation *> members) {
  std::string name, last;
  for (Operation *op : members) {
    auto space = llvm::dyn_cast<IterationSpaceOpInterface>(op);
    if (!space)
      continue;
    std::string part = space.getShortName();
    if (part == last)
      continue;
    name += (name.empty() ? "" : "_") + part;
    last = part;
  }
  return name;
}

std::vector<RegionReduction> regionReductions(mlir::Region &region) {
  std::vector<RegionReduction> out;
  region.walk([&](IterationSpaceOpInterface op) {
    std::string r = op.getReductionDims();
    if (r.empty())
      return;
    llvm::sort(r);
    RegionReduction red{r, true};
    for (Value v : op->getResults())
      red.final &= llvm::none_of(r, [&](char c) {
                     return llvm::cast<TensorType>(v.getType()).hasDim(c);
                   }) && llvm::all_of(v.getUsers(), [](Operation *u) {
                     return llvm::isa<YieldOp>(u);
                   });
    out.push_back(red);
  });
  return out;
}

int64_t iterationPoints(Operation *op) {
  int64_t points = 1;
  for (char c : iterationDims(op))
    points *= dimSize(op, c);
  return points;
}

double analyticFlop(IterationSpaceOpInterface op) {
  return static_cast<double>(iterationPoints(op)) * op.getFlopPerPoint();
}

const char *opClassName(OpClass c) {
  switch (c) {
  case OpClass::Contraction:
    return "contraction";
  case OpClass::Normalization:
    return "normalization";
  case OpClass::Elementwise:
    return "elementwise";
  }
  return "?";
}

OpClass classify(IterationSpaceOpInterface op) {
  std::string reduced = op.getReductionDims();
  if (reduced.empty())
    return OpClass::Elementwise;
  Operation *o = op.getOperation();
  unsigned withPrivate = 0;
  OperandRange operands = spaceOperands(o);
  for (unsigned n = 0; n < operands.size(); ++n)
    if (llvm::isa<TensorType>(operands[n].getType()) && !privateDims(o, n).empty())
      ++withPrivate;
  // A reduction dim shared by two operands is contracted.
  bool contracted = false;
  for (char c : reduced) {
    unsigned holders = 0;
    for (Type t : operands.getTypes())
      if (auto tt = llvm::dyn_cast<TensorType>(t))
        holders += tt.hasDim(c);
    contracted |= holders >= 2;
  }
  return withPrivate >= 2 && contracted ? OpClass::Contraction : OpClass::Normalization;
}

std::string defaultReductionDims(Operation *op) {
  if (op->getNumResults() == 0)
    return {};
  auto result = llvm::dyn_cast<TensorType>(op->getResult(0).getType());
  std::string reduced;
  for (Type t : op->getOperandTypes())
    if (auto tt = llvm::dyn_cast<TensorType>(t))
      for (char c : tt.getNames())
        if ((!result || !result.hasDim(c)) && reduced.find(c) == std::string::npos)
          reduced.push_back(c);
  return reduced;
}

LogicalResult verifyConsistentDims(Operation *op) {
  // Ops that rename dimensions relate operand and result letters themselves.
  bool shared = cast<IterationSpaceOpInterface>(op).sharesDimNames();
  llvm::SmallDenseMap<char, std::pair<int64_t, std::string>> seen;
  auto check = [&](Type t, const std::string &where) -> LogicalResult {
    auto tt = llvm::dyn_cast<TensorType>(t);
    if (!tt)
      return success();
    for (unsigned n = 0; n < tt.getRank(); ++n) {
      char c = tt.getNames()[n];
      auto [it, inserted] = seen.try_emplace(c, tt.getShape()[n], where);
      if (!inserted && it->second.first != tt.getShape()[n])
        return op->emitOpError() << "dimension '" << c << "' has size "
                                 << it->second.first << " in " << it->second.second
                                 << " but " << tt.getShape()[n] << " in " << where;
    }
    return success();
  };
  for (auto [n, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand " + std::to_string(n))))
      return failure();
  if (!shared)
    seen.clear();
  for (auto [n, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result " + std::to_string(n))))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Per-op overrides: reductions that the result type does not show, and flop.
//===----------------------------------------------------------------------===//

double ContractOp::getFlopPerPoint() { return 2.0; } // multiply + add
unsigned ContractOp::getNumSpaceOperands() { return 2; } // lhs, rhs; not the bias

double ActivationOp::getFlopPerPoint() {
  return getActivationKind() == ActivationKind::Relu ? 1.0 : 8.0;
}
double ActivationGradOp::getFlopPerPoint() {
  return getActivationKind() == ActivationKind::Relu ? 1.0 : 12.0;
}

std::string SoftmaxOp::getReductionDims() { return getDim().str(); }
double SoftmaxOp::getFlopPerPoint() { return 5.0; } // max, sub, exp, sum, div
std::string SoftmaxGradOp::getReductionDims() { return getDim().str(); }
double SoftmaxGradOp::getFlopPerPoint() { return 4.0; }

std::string LogSumExpOp::getReductionDims() { return getDim().str(); }
double LogSumExpOp::getFlopPerPoint() { return 4.0; } // max, sub, exp, sum
double SoftmaxLseOp::getFlopPerPoint() { return 2.0; } // sub, exp
double SoftmaxGradRowsumOp::getFlopPerPoint() { return 2.0; } // sub, mul
std::string LogSumExpOp::getShortName() { return "lse"; }
std::string SoftmaxLseOp::getShortName() { return "softmax"; }
std::string SoftmaxGradRowsumOp::getShortName() { return "softmax_dx"; }

std::string LayerNormOp::getReductionDims() { return getDims().str(); }
double LayerNormOp::getFlopPerPoint() { return 8.0; }
std::string LayerNormGradInputOp::getReductionDims() { return getDims().str(); }
double LayerNormGradInputOp::getFlopPerPoint() { return 10.0; }
double LayerNormGradParamsOp::getFlopPerPoint() { return 4.0; }

std::string ActivationOp::getShortName() { return getKind().str(); }
std::string ActivationGradOp::getShortName() { return "d" + getKind().str(); }
std::string BiasAddOp::getShortName() { return "bias"; }
std::string SoftmaxGradOp::getShortName() { return "softmax_dx"; }
std::string LayerNormGradInputOp::getShortName() { return "layernorm_dx"; }
std::string LayerNormGradParamsOp::getShortName() { return "layernorm_dparams"; }
bool DropoutOp::readsElementIndex() { return true; }
// Packing keep bits is bit operations, not flop; applying them scales each
// kept point, as the dropout it stands for does (one flop per point).
bool DropoutKeepBitsOp::readsElementIndex() { return true; }
double DropoutKeepBitsOp::getFlopPerPoint() { return 0.0; }
unsigned DropoutApplyBitsOp::getNumSpaceOperands() { return 1; }
// Packing keys into words (or reading them back) reduces nothing: each key
// is one bit of its word.
std::string DropoutKeepBitsOp::getPackedDims() { return getWord().str(); }
std::string DropoutApplyBitsOp::getPackedDims() { return getWord().str(); }
std::string DropoutKeepBitsOp::getReductionDims() { return std::string(); }
std::string DropoutApplyBitsOp::getReductionDims() { return std::string(); }
std::string DropoutKeepBitsOp::getShortName() { return "dropout_bits"; }
std::string DropoutApplyBitsOp::getShortName() { return "dropout"; }
bool RenameOp::isView() { return true; }
bool SaveOp::isView() { return true; }
bool UnstackOp::isView() { return true; }
/// Stacked parameters are allocated as one buffer by the runtime (the bundle
/// records which), so stacking function arguments copies nothing; nor does an
/// in-place stack, whose inputs' producers write into its buffer
/// (ir/InPlaceStack.h).
bool StackOp::isView() {
  return (*this)->hasAttr(kInPlaceAttr) ||
         llvm::all_of(getInputs(), [](Value v) { return llvm::isa<BlockArgument>(v); });
}

// Data movement only: no arithmetic, and renaming or slicing reduces nothing.
double TransposeOp::getFlopPerPoint() { return 0.0; }
double BroadcastOp::getFlopPerPoint() { return 0.0; }
double SaveOp::getFlopPerPoint() { return 0.0; }
double StackOp::getFlopPerPoint() { return 0.0; }
std::string RenameOp::getReductionDims() { return {}; }
bool RenameOp::sharesDimNames() { return false; }
double RenameOp::getFlopPerPoint() { return 0.0; }
std::string UnstackOp::getReductionDims() { return {}; }
double UnstackOp::getFlopPerPoint() { return 0.0; }

} // namespace dmc::dm
