//===- DefaultLayouts.cpp - dm-default-layouts: every contraction mappable ===//
//
// For each contraction that mapContraction rejects, candidate layouts of its
// three tensors are enumerated (codegen/gemm/MappableLayouts.h) from the contraction's own letter groups
// (batch, M, N, K as the mapping classifies them): each tensor keeps every
// group adjacent, one letter order per group shared by all tensors (the
// orders the tensors have first, then, for groups of up to three letters,
// every other), and the groups in any order. Each mappable candidate is priced:
//   - 1 to have the contraction write D in another layout, 2 to have the
//     kernel producing an operand write it (through views), plus 100 for
//     each not-yet-fixed contraction of the moved tensor that stops mapping
//     (it is fixed later; contractions this pass fixed are never broken);
//   - 1000 + bytes for each dm.transpose kernel where no producer can absorb
//     the layout (a function argument, a returned tensor, a tensor another
//     consumer needs in its current layout);
//   - a thousandth per letter out of place (ties keep layouts close).
// The cheapest wins. Every fix marks its contraction as done, so the pass
// ends after at most one fix per contraction.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "passes/LayoutRewrite.h"

#include "codegen/gemm/MappableLayouts.h"

#include "llvm/Support/Debug.h"

#include <algorithm>
#include <map>

#define DEBUG_TYPE "dm-default-layouts"

namespace dmc {
#define GEN_PASS_DEF_DMDEFAULTLAYOUTS
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

using layout::StorageClass;

dm::TensorType tensorOf(Value v) { return cast<dm::TensorType>(v.getType()); }

class LayoutChooser {
public:
  LayoutChooser(llvm::DenseSet<Operation *> &done) : done(done) {}

  /// Changes layouts so that `c` maps; false when nothing could be found.
  bool fix(dm::ContractOp c);

private:
  /// Layout of `v` if the storage classes in `moves` (root -> layout) moved.
  std::string implied(Value v, const llvm::DenseMap<Value, std::string> &moves) const {
    if (Operation *def = v.getDefiningOp(); layout::isViewOp(def))
      return layout::viewLayout(def, implied(def->getOperand(0), moves));
    auto it = moves.find(v);
    return it != moves.end() ? it->second : tensorOf(v).getNames().str();
  }

  bool mapsWith(dm::ContractOp k, const llvm::DenseMap<Value, std::string> &moves) const {
    dmcgen::Contraction spec = layout::contractionOf(k);
    Value vs[3] = {k.getLhs(), k.getRhs(), k.getResult()};
    dmcgen::TensorLayout *ls[3] = {&spec.a, &spec.b, &spec.d};
    for (int n = 0; n < 3; ++n) {
      std::string dims = implied(vs[n], moves);
      auto t = tensorOf(vs[n]).permutedTo(dims);
      *ls[n] = {dims, std::vector<int64_t>(t.getShape().begin(), t.getShape().end())};
    }
    dmrt::GemmDescriptor g;
    std::string why;
    return dmcgen::mapContraction(spec, g, why);
  }

  /// The price of the candidate `want` (layouts of lhs, rhs, result); fills
  /// `moves` and `transposed` (which of the three need a transpose kernel).
  double price(dm::ContractOp c, const std::string want[3],
               llvm::DenseMap<Value, std::string> &moves, bool transposed[3]);

  llvm::DenseSet<Operation *> &done;
  llvm::DenseMap<Value, StorageClass> classes;
  const StorageClass &classOf(Value v) {
    auto it = classes.find(v);
    if (it == classes.end())
      it = classes.try_emplace(v, layout::storageClassOf(v)).first;
    return it->second;
  }
};

double LayoutChooser::price(dm::ContractOp c, const std::string want[3],
                            llvm::DenseMap<Value, std::string> &moves, bool transposed[3]) {
  Value vs[3] = {c.getLhs(), c.getRhs(), c.getResult()};
  double cost = 0;
  for (int n : {2, 0, 1}) { // the contraction's own output first
    transposed[n] = false;
    std::string now = tensorOf(vs[n]).getNames().str();
    for (size_t i = 0; i < now.size(); ++i)
      cost += (want[n][i] != now[i]) * 1e-3;
    if (implied(vs[n], moves) == want[n])
      continue;
    const StorageClass &cls = classOf(vs[n]);
    std::string root = layout::rootLayoutFor(vs[n], want[n]);
    if (!cls.fixed.empty() || root.empty() ||
        (moves.count(cls.root) && moves.lookup(cls.root) != root))
      continue;
    auto trial = moves;
    trial[cls.root] = root;
    int broken = 0;
    bool forbidden = false;
    for (Operation *op : cls.contractions) {
      auto k = cast<dm::ContractOp>(op);
      if (op == c.getOperation() || !layout::isMappable(k) || mapsWith(k, trial))
        continue;
      forbidden |= done.contains(op);
      ++broken;
    }
    if (forbidden)
      continue;
    moves = std::move(trial);
    cost += (n == 2 ? 1 : 2) + 100.0 * broken;
  }
  for (int n = 0; n < 3; ++n)
    if (implied(vs[n], moves) != want[n]) {
      transposed[n] = true;
      cost += 1000 + tensorOf(vs[n]).getSizeInBytes();
    }
  return cost;
}

bool LayoutChooser::fix(dm::ContractOp c) {
  classes.clear();
  double best = 1e300;
  std::string bestWant[3];
  llvm::DenseMap<Value, std::string> bestMoves;
  bool bestTransposed[3] = {false, false, false};
  // Every mappable candidate (codegen/gemm/MappableLayouts.h), in its fixed
  // order: the first of equal price wins.
  for (const dmcgen::LayoutTriple &t : dmcgen::enumerateMappable(layout::contractionOf(c))) {
    std::string want[3] = {t.a, t.b, t.d};
    llvm::DenseMap<Value, std::string> moves;
    bool transposed[3];
    double cost = price(c, want, moves, transposed);
    if (cost < best) {
      best = cost;
      for (int n = 0; n < 3; ++n) {
        bestWant[n] = want[n];
        bestTransposed[n] = transposed[n];
      }
      bestMoves = std::move(moves);
    }
  }
  if (best == 1e300)
    return false;
  LLVM_DEBUG(llvm::dbgs() << "dm-default-layouts: " << tensorOf(c.getLhs()).getNames() << ","
                          << tensorOf(c.getRhs()).getNames() << "->"
                          << tensorOf(c.getResult()).getNames()
                          << " becomes " << bestWant[0] << "," << bestWant[1] << "->"
                          << bestWant[2] << " (cost " << best << ")\n");
  for (auto &[root, dims] : bestMoves)
    layout::relayout(root, dims);
  for (int n = 0; n < 2; ++n)
    if (bestTransposed[n])
      layout::insertTransposeKernel(c->getOpOperand(n), bestWant[n]);
  if (bestTransposed[2])
    layout::insertTransposeAfter(c, bestWant[2]);
  return true;
}

struct DmDefaultLayoutsPass : impl::DmDefaultLayoutsBase<DmDefaultLayoutsPass> {
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    llvm::DenseSet<Operation *> done;
    LayoutChooser chooser(done);
    // Each round fixes the first unmappable contraction; a fixed one is never
    // broken again, so there are at most as many rounds as contractions.
    for (;;) {
      dm::ContractOp next;
      for (auto c : block.getOps<dm::ContractOp>())
        if (!done.contains(c) && !layout::isMappable(c)) {
          next = c;
          break;
        }
      if (!next)
        break;
      done.insert(next);
      if (!chooser.fix(next)) {
        std::string why;
        layout::isMappable(next, &why);
        next.emitWarning() << "dm-default-layouts: no layouts map this contraction: " << why;
      }
    }
  }
};

} // namespace
} // namespace dmc
