//===- StackContractions.cpp - dm-stack-contractions ----------------------===//
//
// Contractions sharing an operand become one contraction over a stacked
// operand; then ops applied alike to every slice of the result move onto the
// stacked tensor. Everything is decided from types and operands, never from
// what a contraction means in a model.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#define DEBUG_TYPE "dm-stack-contractions"

namespace dmc {
#define GEN_PASS_DEF_DMSTACKCONTRACTIONS
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

/// `t` with dimension `dim` of size `count` inserted at `pos` (clamped).
dm::TensorType withStackDim(dm::TensorType t, char dim, int64_t count, size_t pos) {
  std::string names = t.getNames().str();
  SmallVector<int64_t> shape(t.getShape());
  pos = std::min(pos, names.size());
  names.insert(names.begin() + pos, dim);
  shape.insert(shape.begin() + pos, count);
  return t.withDims(names, shape);
}

/// A letter none of `types` uses.
char freshLetter(ArrayRef<dm::TensorType> types) {
  for (char c : llvm::StringRef("sqrtvwxyzacdefglnoSQRTVWXYZ"))
    if (llvm::none_of(types, [&](dm::TensorType t) { return t.hasDim(c); }))
      return c;
  return 0;
}

bool definedBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  return !def || def->isBeforeInBlock(op);
}

dm::TensorType tensorType(Value v) { return cast<dm::TensorType>(v.getType()); }

struct DmStackContractionsPass
    : impl::DmStackContractionsBase<DmStackContractionsPass> {
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    while (stackOneGroup(block)) {
    }
    while (sinkOneThroughUnstack(block)) {
    }
  }

  /// Stacks the first group found; false when there is none (the IR changes
  /// after each rewrite, so the search starts over).
  bool stackOneGroup(Block &block) {
    SmallVector<Value> candidates(block.getArguments());
    for (Operation &op : block)
      candidates.append(op.result_begin(), op.result_end());
    for (Value shared : candidates)
      if (stackUsersOf(shared))
        return true;
    return false;
  }

  /// Groups the contractions reading `shared` at one position with other
  /// operands of one type, equal result types and scales, and stacks a group.
  bool stackUsersOf(Value shared) {
    using Key = std::tuple<unsigned, Type, Type, double>;
    // In first-seen order, so the rewrite is deterministic.
    SmallVector<std::pair<Key, SmallVector<dm::ContractOp>>> groups;
    for (Operation *user : shared.getUsers()) {
      auto c = dyn_cast<dm::ContractOp>(user);
      if (!c || c.getLhs() == c.getRhs())
        continue;
      unsigned pos = c.getLhs() == shared ? 0 : 1;
      Value other = pos == 0 ? c.getRhs() : c.getLhs();
      Key key{pos, other.getType(), c.getType(), c.getScale().convertToDouble()};
      auto it = llvm::find_if(groups, [&](const auto &g) { return g.first == key; });
      if (it == groups.end())
        groups.push_back({key, {c}});
      else
        it->second.push_back(c);
    }
    for (auto &[key, members] : groups)
      if (members.size() >= 2 && stackGroup(shared, std::get<0>(key), members))
        return true;
    return false;
  }

  bool stackGroup(Value shared, unsigned pos, SmallVector<dm::ContractOp> members) {
    llvm::sort(members, [](dm::ContractOp a, dm::ContractOp b) {
      return a->isBeforeInBlock(b);
    });
    Operation *first = members.front();
    auto otherOf = [&](dm::ContractOp c) { return pos == 0 ? c.getRhs() : c.getLhs(); };
    // The stacked contraction replaces the first member: every other operand
    // must already be available there.
    llvm::erase_if(members, [&](dm::ContractOp c) { return !definedBefore(otherOf(c), first); });
    if (members.size() < 2)
      return false;
    dm::TensorType otherType = tensorType(otherOf(members[0]));
    dm::TensorType resultType = members[0].getType();
    char dim = freshLetter({tensorType(shared), otherType, resultType});
    if (!dim)
      return false;
    int64_t n = members.size();
    OpBuilder b(first);
    Location loc = first->getLoc();
    SmallVector<Value> others;
    for (dm::ContractOp c : members)
      others.push_back(otherOf(c));
    auto stacked = b.create<dm::StackOp>(loc, withStackDim(otherType, dim, n, 0), others,
                                         b.getStringAttr(StringRef(&dim, 1)));
    Value lhs = pos == 0 ? shared : stacked.getResult();
    Value rhs = pos == 0 ? stacked.getResult() : shared;
    auto contraction = b.create<dm::ContractOp>(loc, withStackDim(resultType, dim, n, 0), lhs,
                                                rhs, members[0].getScaleAttr());
    SmallVector<Type> sliceTypes(n, resultType);
    auto slices = b.create<dm::UnstackOp>(loc, sliceTypes, contraction.getResult(),
                                          b.getStringAttr(StringRef(&dim, 1)));
    for (auto [c, slice] : llvm::zip(members, slices.getOutputs())) {
      c.getResult().replaceAllUsesWith(slice);
      c.erase();
    }
    return true;
  }

  /// Where every slice of an unstack feeds the same kind of op at the same
  /// operand position, runs one such op over the stacked tensor instead.
  bool sinkOneThroughUnstack(Block &block) {
    for (auto unstack : llvm::make_early_inc_range(block.getOps<dm::UnstackOp>()))
      if (sinkThrough(unstack))
        return true;
    return false;
  }

  bool sinkThrough(dm::UnstackOp unstack) {
    SmallVector<Operation *> users;
    SmallVector<unsigned> positions;
    for (Value slice : unstack.getOutputs()) {
      if (!slice.hasOneUse())
        return false;
      OpOperand &use = *slice.use_begin();
      users.push_back(use.getOwner());
      positions.push_back(use.getOperandNumber());
    }
    Operation *proto = users[0];
    auto space = dyn_cast<dm::IterationSpaceOpInterface>(proto);
    if (!space || space.readsElementIndex() || space.isView() || proto->getNumResults() != 1 ||
        proto->getNumRegions() != 0)
      return false;
    for (auto [user, pos] : llvm::zip(users, positions))
      if (user->getName() != proto->getName() || pos != positions[0] ||
          user->getAttrDictionary() != proto->getAttrDictionary() ||
          user->getOperandTypes() != proto->getOperandTypes() ||
          user->getResultTypes() != proto->getResultTypes())
        return false;
    Operation *first = *llvm::min_element(
        users, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    char dim = unstack.getDim()[0];
    size_t at = tensorType(unstack.getX()).indexOf(dim);
    int64_t n = users.size();
    // The stack dimension must be new to every operand and the result.
    auto hasDim = [&](Type t) { return cast<dm::TensorType>(t).hasDim(dim); };
    if (llvm::any_of(proto->getOperandTypes(), hasDim) ||
        llvm::any_of(proto->getResultTypes(), hasDim))
      return false;
    for (auto *user : users)
      for (Value v : user->getOperands())
        if (!definedBefore(v, first) && v.getDefiningOp() != unstack)
          return false;

    OpBuilder b(first);
    Location loc = first->getLoc();
    SmallVector<Operation *> created;
    SmallVector<Value> operands;
    for (unsigned k = 0; k < proto->getNumOperands(); ++k) {
      if (k == positions[0]) {
        operands.push_back(unstack.getX());
        continue;
      }
      SmallVector<Value> parts;
      for (Operation *user : users)
        parts.push_back(user->getOperand(k));
      auto part = tensorType(parts[0]);
      auto stack = b.create<dm::StackOp>(loc, withStackDim(part, dim, n, at), parts,
                                         unstack.getDimAttr());
      created.push_back(stack);
      operands.push_back(stack);
    }
    auto resultType = withStackDim(cast<dm::TensorType>(proto->getResult(0).getType()), dim, n, at);
    OperationState state(loc, proto->getName());
    state.addOperands(operands);
    state.addAttributes(proto->getAttrs());
    state.addTypes(resultType);
    Operation *op = b.create(state);
    created.push_back(op);
    // The op may not accept the stacked form (e.g. a type it pins down).
    bool valid;
    {
      ScopedDiagnosticHandler quiet(op->getContext(), [](Diagnostic &) { return success(); });
      valid = succeeded(mlir::verify(op));
    }
    if (!valid) {
      for (Operation *c : llvm::reverse(created))
        c->erase();
      return false;
    }
    SmallVector<Type> sliceTypes(n, proto->getResult(0).getType());
    auto slices = b.create<dm::UnstackOp>(loc, sliceTypes, op->getResult(0),
                                          unstack.getDimAttr());
    for (auto [user, slice] : llvm::zip(users, slices.getOutputs())) {
      user->getResult(0).replaceAllUsesWith(slice);
      user->erase();
    }
    if (unstack->use_empty())
      unstack.erase();
    return true;
  }
};

} // namespace
} // namespace dmc
