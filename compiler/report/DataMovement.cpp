//===- DataMovement.cpp - flop and bytes moved, per op and per kernel -----===//
#include "compiler/report/DataMovement.h"

#include "compiler/GraphSummary.h"
#include "ir/IterationSpace.h"
#include "ir/Signature.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dmc::report {
namespace {

int64_t bytes(Type t) { return cast<dm::TensorType>(t).getSizeInBytes(); }

std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << cast<dm::TensorType>(type).getElementType();
  return s;
}

bool isView(Operation *op) {
  auto space = dyn_cast<dm::IterationSpaceOpInterface>(op);
  return space && space.isView();
}

std::string spaceOf(Operation *op) {
  std::string s;
  for (char c : dm::iterationDims(op))
    s += (s.empty() ? "" : " ") + std::string(1, c) + "=" + std::to_string(dm::dimSize(op, c));
  return s;
}

Member memberOf(dm::IterationSpaceOpInterface op) {
  return {op.getShortName(), dm::opClassName(dm::classify(op)), dm::analyticFlop(op)};
}

/// The unit and value behind `v`, looking through views to what they view.
Value throughViews(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def) || def->getNumOperands() == 0)
      break;
    // A view's data is its first operand's (a stack of arguments: all of them).
    v = def->getOperand(0);
  }
  return v;
}

} // namespace

int GraphCost::kernels(llvm::StringRef opClass) const {
  int n = 0;
  for (const WorkItem &w : items)
    n += w.opClass == opClass;
  return n;
}

GraphCost costOf(func::FuncOp f) {
  GraphCost cost;
  llvm::DenseSet<Operation *> bwd = backwardOps(f);
  llvm::DenseMap<Operation *, int> unitOf;
  Block &block = f.getBody().front();
  for (Operation &op : block.without_terminator()) {
    if (isView(&op))
      continue;
    WorkItem w;
    w.id = cost.items.size();
    w.op = &op;
    w.backward = bwd.contains(&op);
    if (auto kernel = dyn_cast<dm::KernelOp>(op)) {
      w.name = kernel.getName().str();
      w.opClass = "elementwise";
      w.fused = kernel->hasAttr(dm::kFusedAttr);
      int64_t largest = 0; // the kernel's space is its largest member's
      kernel.getBody().walk([&](dm::IterationSpaceOpInterface inner) {
        w.members.push_back(memberOf(inner));
        w.flop += w.members.back().flop;
        // The costliest class of its members: a fused attention kernel,
        // which holds contractions, counts as one.
        const std::string &c = w.members.back().opClass;
        if (c == "contraction" || (c == "normalization" && w.opClass == "elementwise"))
          w.opClass = c;
        if (int64_t points = dm::iterationPoints(inner); points > largest) {
          largest = points;
          w.space = spaceOf(inner);
        }
      });
    } else if (auto space = dyn_cast<dm::IterationSpaceOpInterface>(op)) {
      Member m = memberOf(space);
      w.name = m.name;
      w.opClass = m.opClass;
      w.flop = m.flop;
      w.members.push_back(m);
      w.space = spaceOf(&op);
      if (auto epilogues = op.getAttrOfType<ArrayAttr>("dm.epilogue"))
        for (Attribute a : epilogues)
          w.epilogues.push_back(cast<StringAttr>(a).getValue().str());
    } else {
      continue;
    }
    llvm::SmallDenseSet<Value, 8> seen;
    for (Value v : op.getOperands()) {
      if (!seen.insert(v).second)
        continue;
      w.bytesRead += bytes(v.getType());
      w.bytesByType[typeName(v.getType())] += bytes(v.getType());
    }
    for (Value r : op.getResults()) {
      w.bytesWritten += bytes(r.getType());
      w.bytesByType[typeName(r.getType())] += bytes(r.getType());
    }
    w.ioLowerBound = w.bytes();
    unitOf[&op] = w.id;
    ClassTotals &t = cost.byClass[w.opClass];
    ++t.count;
    t.flop += w.flop;
    t.bytes += w.bytes();
    cost.flop += w.flop;
    cost.bytes += w.bytes();
    cost.items.push_back(std::move(w));
  }

  // Edges: each unit's inputs, traced through views to a unit or an argument.
  auto source = [&](Value v, int &from, std::string &name) {
    v = throughViews(v);
    from = -1;
    if (auto arg = dyn_cast<BlockArgument>(v))
      name = dm::argName(f, arg.getArgNumber()).str();
    else if (auto it = unitOf.find(v.getDefiningOp()); it != unitOf.end())
      from = it->second;
  };
  for (Operation &op : block) {
    bool isReturn = op.hasTrait<OpTrait::IsTerminator>();
    auto it = unitOf.find(&op);
    if (!isReturn && it == unitOf.end())
      continue;
    llvm::SmallDenseSet<Value, 8> seen;
    for (auto [n, v] : llvm::enumerate(op.getOperands())) {
      if (!seen.insert(v).second && !isReturn)
        continue;
      Edge e;
      e.to = isReturn ? -1 : it->second;
      e.bytes = bytes(v.getType());
      source(v, e.from, e.tensor);
      if (isReturn)
        e.tensor = dm::resultName(f, n).str();
      if (e.from >= 0 || e.to >= 0)
        cost.edges.push_back(e);
    }
  }
  return cost;
}

double DataMovementReport::reductionPercent() const {
  return unfused.bytes ? 100.0 * (1.0 - double(fused.bytes) / double(unfused.bytes)) : 0.0;
}

} // namespace dmc::report
