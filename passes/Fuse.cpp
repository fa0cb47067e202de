//===- Fuse.cpp - dm-fuse: maximal fusion into dm.kernel ops --------------===//
//
// Groups are grown greedily by union-find over producer->consumer edges, then
// over siblings reading one tensor. A merge is legal when the merged group
// still has one iteration space (same dim names and sizes for all members),
// all reducing members share their outer (independent) dims, and no path
// leaves the group and comes back (which would make the kernel depend on
// itself). Legality reads only the iteration-space interface.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/IterationSpace.h"
#include "passes/KernelBody.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dm-fuse"

namespace dmc {
#define GEN_PASS_DEF_DMFUSE
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

/// Dims with sizes, sorted by name: "b8,i1024,j512".
std::string spaceKey(Operation *op, llvm::StringRef dims) {
  std::string sorted = dims.str();
  llvm::sort(sorted);
  std::string key;
  for (char c : sorted)
    key += std::string(1, c) + std::to_string(dm::dimSize(op, c)) + ",";
  return key;
}

class FusionPlanner {
public:
  explicit FusionPlanner(Block &block) : block(block) {
    for (Operation &op : block.without_terminator()) {
      index[&op] = ops.size();
      ops.push_back(&op);
      members.push_back({int(parent.size())});
      firstMember.push_back(int(parent.size()));
      lastMember.push_back(int(parent.size()));
      parent.push_back(parent.size());
      auto space = dyn_cast<dm::IterationSpaceOpInterface>(op);
      bool ok = space && !space.isView() && op.getNumRegions() == 0 &&
                dm::classify(space) != dm::OpClass::Contraction;
      fusible.push_back(ok);
      std::string reduced = ok ? space.getReductionDims() : "";
      std::string outer;
      for (char c : ok ? dm::iterationDims(&op) : "")
        if (reduced.find(c) == std::string::npos)
          outer.push_back(c);
      spaces.push_back(ok ? spaceKey(&op, dm::iterationDims(&op)) : "");
      outers.push_back(reduced.empty() ? "" : spaceKey(&op, outer));
    }
  }

  /// Merges producer->consumer pairs, then siblings.
  void plan() {
    for (Operation *op : ops)
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp(); def && index.count(def))
          tryMerge(index[def], index[op]);
    for (Operation *op : ops)
      for (Value v : op->getResults())
        tryMergeUsers(v);
    for (BlockArgument arg : block.getArguments())
      tryMergeUsers(arg);
  }

  /// Fusible ops grouped, groups in order of their first member.
  std::vector<std::vector<Operation *>> groups() {
    std::map<int, std::vector<Operation *>> byRoot;
    std::vector<int> order;
    for (size_t n = 0; n < ops.size(); ++n) {
      if (!fusible[n])
        continue;
      int r = find(n);
      if (!byRoot.count(r))
        order.push_back(r);
      byRoot[r].push_back(ops[n]);
    }
    std::vector<std::vector<Operation *>> result;
    for (int r : order)
      result.push_back(byRoot[r]);
    return result;
  }

private:
  int find(int n) { return parent[n] == n ? n : parent[n] = find(parent[n]); }

  void tryMergeUsers(Value v) {
    SmallVector<int> users;
    for (Operation *u : v.getUsers())
      if (index.count(u) && fusible[index[u]])
        users.push_back(index[u]);
    for (size_t a = 0; a < users.size(); ++a)
      for (size_t b = a + 1; b < users.size(); ++b)
        tryMerge(users[a], users[b]);
  }

  void tryMerge(int a, int b) {
    if (!fusible[a] || !fusible[b])
      return;
    int ra = find(a), rb = find(b);
    if (ra == rb || spaces[ra] != spaces[rb])
      return;
    if (!outers[ra].empty() && !outers[rb].empty() && outers[ra] != outers[rb])
      return;
    if (createsCycle(ra, rb))
      return;
    parent[rb] = ra;
    members[ra].append(members[rb].begin(), members[rb].end());
    members[rb].clear();
    firstMember[ra] = std::min(firstMember[ra], firstMember[rb]);
    lastMember[ra] = std::max(lastMember[ra], lastMember[rb]);
    // Only multi-member groups can straddle a position.
    if (!llvm::is_contained(roots, ra))
      roots.push_back(ra);
    llvm::erase(roots, rb);
    if (outers[ra].empty())
      outers[ra] = outers[rb];
  }

  /// Whether some path leaves groups `ra` u `rb` and comes back into them.
  /// Other groups count as single nodes (a kernel waits for all its inputs
  /// and delivers all its outputs at once).
  ///
  /// Users come after their producers in the block, so a path that leaves
  /// the group and returns must either stay at or before the group's last
  /// member (position `last`), or pass through another group with members on
  /// both sides of `last` (it enters late and leaves early). Without such a
  /// group the search stops at `last`; with one it searches everything.
  bool createsCycle(int ra, int rb) {
    int last = std::max(lastMember[ra], lastMember[rb]);
    bool straddled = false;
    for (int r : roots)
      if (r != ra && r != rb && firstMember[r] <= last && lastMember[r] > last) {
        straddled = true;
        break;
      }
    auto groupOf = [&](Operation *op) {
      auto it = index.find(op);
      return it == index.end() ? -1 : find(it->second);
    };
    SmallVector<Operation *> work;
    llvm::DenseSet<Operation *> seenOps;
    llvm::DenseSet<int> seenGroups;
    auto visit = [&](Operation *op) {
      // Entering a group reaches every member's results.
      int r = groupOf(op);
      if (r < 0) {
        if (seenOps.insert(op).second)
          work.push_back(op);
        return;
      }
      if (!straddled && firstMember[r] > last)
        return; // entirely after the group: cannot lead back
      if (seenGroups.insert(r).second)
        for (int m : members[r])
          work.push_back(ops[m]);
    };
    auto inside = [&](Operation *op) {
      int r = groupOf(op);
      return r == ra || r == rb;
    };
    for (int g : {ra, rb})
      for (int m : members[g])
        for (Operation *u : ops[m]->getUsers())
          if (!inside(u))
            visit(u);
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      for (Operation *u : op->getUsers()) {
        if (inside(u))
          return true;
        visit(u);
      }
    }
    return false;
  }

  Block &block;
  std::vector<Operation *> ops;
  llvm::DenseMap<Operation *, int> index;
  std::vector<int> parent;
  std::vector<SmallVector<int, 2>> members; ///< by root: the group's op indices
  std::vector<int> firstMember, lastMember;  ///< by root: its first and last op index
  std::vector<int> roots; ///< roots of the groups with more than one member
  std::vector<bool> fusible;
  std::vector<std::string> spaces, outers;
};

/// Replaces `members` (in block order) by one dm.kernel.
void materialize(ArrayRef<Operation *> members) {
  llvm::DenseSet<Operation *> in(members.begin(), members.end());
  SmallVector<Value> inputs, outputs;
  for (Operation *op : members) {
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if ((!def || !in.contains(def)) && !llvm::is_contained(inputs, v))
        inputs.push_back(v);
    }
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !in.contains(u); }))
        outputs.push_back(r);
  }
  OpBuilder b(members.front());
  auto kernel = buildKernelOp(
      b, members.front()->getLoc(), dm::kernelNameOf(members), inputs,
      ValueRange(outputs).getTypes(), [&](OpBuilder &inner, IRMapping &map) {
        for (Operation *op : members)
          inner.clone(*op, map);
        SmallVector<Value> yielded;
        for (Value v : outputs)
          yielded.push_back(map.lookup(v));
        return yielded;
      });
  for (auto [v, k] : llvm::zip(outputs, kernel.getResults()))
    v.replaceUsesWithIf(k, [&](OpOperand &use) { return !in.contains(use.getOwner()); });
  for (Operation *op : llvm::reverse(members))
    op->erase();
}

bool privateToOneOperand(dm::ContractOp c, llvm::StringRef dims) {
  for (unsigned n = 0; n < 2; ++n) {
    std::string mine = dm::privateDims(c, n);
    if (llvm::all_of(dims, [&](char d) { return mine.find(d) != std::string::npos; }))
      return true;
  }
  return false;
}

/// What cuBLASLt could run as this contraction's epilogue (the tuner decides).
void markEpilogues(dm::ContractOp c) {
  SmallVector<StringRef> found;
  Value out = c.getResult();
  auto single = [](Value v) { return v.hasOneUse() ? *v.getUsers().begin() : nullptr; };
  auto activation = [&](Operation *op) {
    if (auto act = dyn_cast_or_null<dm::ActivationOp>(op)) {
      switch (act.getActivationKind()) {
      case dm::ActivationKind::Relu:
        found.push_back("relu_aux");
        break;
      case dm::ActivationKind::GeluTanh: // cuBLASLt's GELU is the tanh approximation
        found.push_back("gelu_aux");
        break;
      case dm::ActivationKind::Gelu: // the erf form: no cuBLASLt epilogue
        break;
      }
    }
  };
  Operation *next = single(out);
  if (auto bias = dyn_cast_or_null<dm::BiasAddOp>(next);
      bias && privateToOneOperand(c, cast<dm::TensorType>(bias.getBias().getType()).getNames())) {
    found.push_back("bias");
    activation(single(bias.getResult()));
  } else if (auto add = dyn_cast_or_null<dm::AddOp>(next); add && add.getLhs() != add.getRhs()) {
    found.push_back("accumulate"); // the other addend read as C
  } else {
    activation(next);
  }
  SmallVector<Operation *> users(out.getUsers());
  llvm::sort(users, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *user : users)
    if (auto grad = dyn_cast<dm::ActivationGradOp>(user);
        grad && grad.getDy() == out && grad.getActivationKind() != dm::ActivationKind::Gelu)
      found.push_back(grad.getActivationKind() == dm::ActivationKind::Relu ? "drelu" : "dgelu");
  // Bias gradient: an operand also summed down to its dims the other lacks.
  for (unsigned n = 0; n < 2; ++n)
    for (Operation *u : c->getOperand(n).getUsers())
      if (auto sum = dyn_cast<dm::ReduceSumOp>(u);
          sum && sum.getType().getRank() == dm::privateDims(c, n).size() &&
          privateToOneOperand(c, sum.getType().getNames()) &&
          !llvm::is_contained(found, "bgrad"))
        found.push_back("bgrad");
  if (!found.empty())
    c->setAttr("dm.epilogue", Builder(c).getStrArrayAttr(found));
}

struct DmFusePass : impl::DmFuseBase<DmFusePass> {
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    for (auto c : block.getOps<dm::ContractOp>())
      markEpilogues(c);
    FusionPlanner planner(block);
    planner.plan();
    for (const auto &members : planner.groups())
      materialize(members);
    if (!sortTopologically(&block)) {
      getOperation().emitError("dm-fuse: the kernels formed depend on each other");
      return signalPassFailure();
    }
  }
};

} // namespace
} // namespace dmc
