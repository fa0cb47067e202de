//===- FuseColumnReductions.cpp - dm-fuse-column-reductions ---------------===//
//
// dm-fuse keeps one set of reduced dims per kernel, so a layer norm's input
// gradient (rows reduced over i) and its parameter gradients (summed over the
// rows b, j) become two kernels that both read dy, x, mean and rstd. This
// pass merges such a column kernel into the row kernel: the merged kernel
// has two reduction sets, R (its rows) and C (its outer dims, reduced only
// into results that leave the kernel), which codegen's KernelSpace reads
// back from the members' iteration spaces. Legality reads only the
// iteration-space interface and the use lists.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/IterationSpace.h"
#include "passes/KernelBody.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

#include <set>

namespace dmc {
#define GEN_PASS_DEF_DMFUSECOLUMNREDUCTIONS
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

/// What the pass needs to know of a kernel, read from its members.
struct KernelFacts {
  std::string space;            ///< "b8,i1024,j512,": dims with sizes, sorted
  std::set<std::string> sets;   ///< distinct reduction dim sets, each sorted
  std::set<std::string> finals; ///< the sets all of whose results only leave
};

std::optional<KernelFacts> factsOf(dm::KernelOp k) {
  if (k->hasAttr(dm::kFusedAttr))
    return std::nullopt;
  KernelFacts f;
  std::map<char, int64_t> sizes;
  for (Operation &op : k.getBody().front().without_terminator()) {
    if (!isa<dm::IterationSpaceOpInterface>(op))
      return std::nullopt;
    for (char c : dm::iterationDims(&op))
      sizes[c] = dm::dimSize(&op, c);
  }
  for (auto [c, n] : sizes)
    f.space += std::string(1, c) + std::to_string(n) + ",";
  std::set<std::string> notFinal;
  for (const dm::RegionReduction &r : dm::regionReductions(k.getBody())) {
    f.sets.insert(r.dims);
    if (!r.final)
      notFinal.insert(r.dims);
  }
  for (const std::string &s : f.sets)
    if (!notFinal.count(s))
      f.finals.insert(s);
  return f;
}

/// Whether `col` sums a contraction's operand that dm-fuse marked as a
/// bias-gradient epilogue candidate (`dm.epilogue` has "bgrad"): such a
/// kernel stays for dm-gemm-epilogues, which folds it into cuBLASLt.
bool leftForEpilogue(dm::KernelOp col) {
  Block &body = col.getBody().front();
  for (auto sum : body.getOps<dm::ReduceSumOp>()) {
    auto arg = dyn_cast<BlockArgument>(sum.getX());
    if (!arg || arg.getOwner() != &body)
      continue;
    for (Operation *u : col.getInputs()[arg.getArgNumber()].getUsers())
      if (auto c = dyn_cast<dm::ContractOp>(u))
        if (auto marks = c->getAttrOfType<ArrayAttr>("dm.epilogue"))
          for (Attribute m : marks)
            if (cast<StringAttr>(m).getValue() == "bgrad")
              return true;
  }
  return false;
}

/// Bytes of the tensors `col` reads that `row` reads or writes too.
int64_t sharedInputBytes(dm::KernelOp col, dm::KernelOp row) {
  int64_t bytes = 0;
  for (Value v : col.getInputs())
    if (llvm::is_contained(row.getInputs(), v) || v.getDefiningOp() == row.getOperation()) {
      auto t = cast<dm::TensorType>(v.getType());
      bytes += t.getNumElements() * ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
    }
  return bytes;
}

/// Whether the column kernel `col` (one final reduction set C) may join the
/// row kernel `row`: one space; row's sets are R, or R and C (an earlier
/// merge); C and R partition the dims.
bool compatible(const KernelFacts &col, const KernelFacts &row) {
  if (col.space != row.space || col.sets.size() != 1 || col.finals.size() != 1)
    return false;
  const std::string &c = *col.sets.begin();
  std::string all;
  for (char ch : col.space)
    if (std::isalpha(static_cast<unsigned char>(ch)))
      all.push_back(ch);
  std::string r;
  for (char ch : all)
    if (c.find(ch) == std::string::npos)
      r.push_back(ch);
  if (r.empty() || !row.sets.count(r))
    return false;
  for (const std::string &s : row.sets)
    if (s != r && s != c)
      return false;
  return !row.sets.count(c) || row.finals.count(c);
}

/// Whether the merged kernel may stand at the later kernel's position: the
/// earlier one's results are read by no op before the later kernel but the
/// later kernel itself, and the row kernel reads nothing the column kernel
/// computes (its sums exist only after every row).
bool orderAllows(dm::KernelOp col, dm::KernelOp row) {
  for (Operation *u : col->getUsers())
    if (u == row.getOperation())
      return false;
  dm::KernelOp first = col->isBeforeInBlock(row) ? col : row;
  dm::KernelOp second = first == col ? row : col;
  for (Operation *u : first->getUsers())
    if (u != second.getOperation() && !second->isBeforeInBlock(u))
      return false;
  return true;
}

/// One kernel doing `row`'s work and `col`'s, at the later one's position.
dm::KernelOp merge(dm::KernelOp col, dm::KernelOp row) {
  dm::KernelOp later = col->isBeforeInBlock(row) ? row : col;
  SmallVector<Value> inputs(row.getInputs().begin(), row.getInputs().end());
  for (Value v : col.getInputs())
    if (v.getDefiningOp() != row.getOperation() && !llvm::is_contained(inputs, v))
      inputs.push_back(v);
  SmallVector<Type> types(row.getResultTypes());
  types.append(col.getResultTypes().begin(), col.getResultTypes().end());
  SmallVector<Operation *> members;
  for (dm::KernelOp k : {row, col})
    for (Operation &op : k.getBody().front().without_terminator())
      members.push_back(&op);
  std::string name = dm::kernelNameOf(members);
  OpBuilder b(later);
  auto merged = buildKernelOp(
      b, row.getLoc(), name, inputs, types, [&](OpBuilder &inner, IRMapping &map) {
        SmallVector<Value> yielded;
        for (dm::KernelOp k : {row, col}) {
          Block &body = k.getBody().front();
          IRMapping local;
          for (auto [arg, outside] : llvm::zip(body.getArguments(), k.getInputs())) {
            if (outside.getDefiningOp() == row.getOperation())
              local.map(arg, yielded[cast<OpResult>(outside).getResultNumber()]);
            else
              local.map(arg, map.lookup(outside));
          }
          for (Operation &op : body.without_terminator())
            inner.clone(op, local);
          for (Value v : body.getTerminator()->getOperands())
            yielded.push_back(local.lookup(v));
        }
        return yielded;
      });
  unsigned n = 0;
  for (dm::KernelOp k : {row, col})
    for (Value r : k.getResults())
      r.replaceAllUsesWith(merged.getResult(n++));
  col.erase();
  row.erase();
  return merged;
}

struct DmFuseColumnReductionsPass
    : impl::DmFuseColumnReductionsBase<DmFuseColumnReductionsPass> {
  using DmFuseColumnReductionsBase::DmFuseColumnReductionsBase;
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    // Each kernel's facts once (a merged kernel's when it is made); a
    // column kernel looks only at the kernels reading or writing its
    // inputs, so the pass stays linear in the graph's size.
    llvm::DenseMap<Operation *, std::optional<KernelFacts>> facts;
    auto factsFor = [&](dm::KernelOp k) -> const std::optional<KernelFacts> & {
      auto it = facts.find(k);
      if (it == facts.end())
        it = facts.insert({k, factsOf(k)}).first;
      return it->second;
    };
    llvm::DenseSet<Operation *> erased;
    SmallVector<dm::KernelOp> kernels(block.getOps<dm::KernelOp>());
    for (dm::KernelOp col : kernels) {
      if (erased.contains(col))
        continue;
      std::optional<KernelFacts> cf = factsFor(col); // a copy: the map may grow
      if (!cf || cf->sets.size() != 1 || cf->finals.size() != 1 ||
          (!biasGradsInKernels && leftForEpilogue(col)))
        continue;
      llvm::SetVector<Operation *> near;
      for (Value v : col.getInputs()) {
        if (auto def = v.getDefiningOp<dm::KernelOp>())
          near.insert(def);
        for (Operation *u : v.getUsers())
          if (isa<dm::KernelOp>(u) && u != col.getOperation())
            near.insert(u);
      }
      dm::KernelOp best;
      int64_t bestBytes = 0;
      for (Operation *op : near) {
        auto row = cast<dm::KernelOp>(op);
        const std::optional<KernelFacts> &rf = factsFor(row);
        if (!rf || !compatible(*cf, *rf) || !orderAllows(col, row))
          continue;
        if (int64_t bytes = sharedInputBytes(col, row); bytes > bestBytes) {
          best = row;
          bestBytes = bytes;
        }
      }
      if (!best)
        continue;
      erased.insert(col);
      erased.insert(best);
      facts.erase(col);
      facts.erase(best);
      dm::KernelOp merged = merge(col, best);
      facts.erase(merged); // a fresh op may reuse an erased one's address
      erased.erase(merged);
    }
  }
};

} // namespace
} // namespace dmc
