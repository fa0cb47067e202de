//===- NodeGraph.h - a fused kernel as loads, maps and row reductions -----===//
//
// Between the dm ops of a kernel and its CUDA: each op becomes nodes. A load
// reads an input at the current point; a map is pointwise math (or, when all
// its inputs are reductions, one value per outer point), kept as a PointExpr
// tree; a reduction combines a node over the row. A node's pass is how many
// reductions it waits for. The graph is data: an emitter prints a node's value
// (NodeGraph::value) with the spelling of loads its loop structure chose.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_NODEGRAPH_H
#define DMC_CODEGEN_NODEGRAPH_H

#include "codegen/KernelSpace.h"
#include "codegen/PointExpr.h"
#include "runtime/format/DType.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dmc::codegen {

struct Node {
  bool outer = false;  ///< one value per outer point
  bool reduce = false; ///< combined over the row; its value is outer
  /// Summed over the outer points into a result with the row's dims
  /// (KernelSpace::columnSums); nothing in the kernel reads it.
  bool column = false;
  const char *combine = "DmcSum";
  std::string init = "0.f";
  /// A load of a kernel input (expr is PointExpr::load), printed bare; a
  /// map's expression is printed in parentheses.
  bool load = false;
  /// map/load: what it computes, as data (its operands are `deps`);
  /// reduce/column: none, the node combined or summed is deps[0].
  std::optional<PointExpr> expr;
  std::vector<unsigned> loads; ///< the kernel inputs expr loads
  std::vector<int> deps;
  int pass = 0; ///< map/load: computed in; reduce: combined in
};

/// The condition under which a kernel input is read: the point's index
/// along `dim` equals `index` (slice `index` of a stack along `dim`).
struct LoadGuard {
  char dim = 0;
  int64_t index = -1;
  bool operator==(const LoadGuard &o) const { return dim == o.dim && index == o.index; }
  /// The condition as math: the stack's select tests this expression.
  PointExpr expr() const {
    return PointExpr::index(dim).equals(PointExpr::literal(std::to_string(index)));
  }
  /// As CUDA C++: "i_<dim> == <index>".
  std::string text() const {
    auto none = [](unsigned) { return std::string(); }; // neither operands nor loads
    return expr().print({none, none});
  }
};

/// The Philox draws of one dropout op: node code reads its 16-bit draw
/// through the variable wordName(k); the emitter defines it, drawing once
/// per eight elements when a vector runs along the counter's innermost dim.
/// With saved keep bits (dm-save-dropout-bits) the draw also packs its keep
/// decisions into a kernel output, or the word is instead the keep bit (0
/// or 1) read from a kernel input: 32 per i32 word along the counter's
/// innermost dim (the key), a byte per group of eight draws.
struct Draw {
  int64_t opId = 0;
  std::string order; ///< the counter's dims, outermost first
  int bitsOutput = -1; ///< the output the keep bits go to (-1: none)
  int bitsInput = -1;  ///< the input the keep bits come from (-1: drawn)
  uint32_t threshold = 0; ///< keep iff the draw is at least this (bitsOutput)
  /// The keep bits' tensor: dims outermost first, the word dim as `word`.
  std::string bitsDims;
  std::vector<int64_t> bitsShape;
  char word = 0;
  char key() const { return order.back(); }
};

class NodeGraph {
public:
  /// The node of an output that is no node's value: keep bits a draw packs
  /// (Draw::bitsOutput).
  static constexpr int kPacked = -1;

  std::vector<Node> nodes;
  std::vector<int> outputs; ///< one node per kernel output (or kPacked)
  std::vector<Draw> draws;
  /// Inputs read only under a condition on the point (a stack's slice
  /// select): a vector load of them can be skipped elsewhere. Inputs also
  /// read unconditionally, or under two conditions, are in unguardedLoads.
  std::map<unsigned, LoadGuard> loadGuards;
  std::set<unsigned> unguardedLoads;

  /// The condition input `n` is read under (none: always). Inputs of one
  /// dim and distinct indices are never read at the same point.
  std::optional<LoadGuard> guardOf(unsigned n) const {
    auto it = loadGuards.find(n);
    if (it == loadGuards.end() || unguardedLoads.count(n))
      return std::nullopt;
    return it->second;
  }
  /// The stack slice input `n` is read as (dim 0: none).
  std::pair<char, int64_t> sliceOf(unsigned n) const {
    std::optional<LoadGuard> g = guardOf(n);
    return g ? std::pair<char, int64_t>{g->dim, g->index} : std::pair<char, int64_t>{0, -1};
  }

  static std::string name(int id) { return "v" + std::to_string(id); }
  static std::string wordName(int k) { return "w" + std::to_string(k) + "_"; }
  /// Node `id`'s value at the point as CUDA C++: a map's expression (in
  /// parentheses) or a load, with kernel input n spelled `load(n)`; for a
  /// reduction or column sum, the register of the node it combines.
  std::string value(size_t id, const std::function<std::string(unsigned)> &load) const {
    const Node &n = nodes[id];
    if (!n.expr)
      return name(n.deps[0]);
    std::string text =
        n.expr->print({[&](unsigned k) { return name(n.deps[k]); }, load});
    return n.load ? text : "(" + text + ")";
  }

  /// Adds the dropout draws node `id` reads (its expression's) to `used`.
  void addDraws(size_t id, std::set<int> &used) const {
    if (nodes[id].expr)
      for (int k : nodes[id].expr->draws())
        used.insert(k);
  }

  /// The outputs that are node values, as (output number, node).
  std::vector<std::pair<unsigned, int>> nodeOutputs() const {
    std::vector<std::pair<unsigned, int>> r;
    for (size_t n = 0; n < outputs.size(); ++n)
      if (outputs[n] != kPacked)
        r.push_back({unsigned(n), outputs[n]});
    return r;
  }

  /// The first pass in which node `id`'s value exists.
  int avail(int id) const { return nodes[id].reduce ? nodes[id].pass + 1 : nodes[id].pass; }

  int add(Node n) {
    for (int d : n.deps)
      n.pass = std::max(n.pass, avail(d));
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }

  /// Pointwise `expr` over `deps` (its operand n is deps[n]); the kernel
  /// inputs it loads become the node's loads. `pointwise` marks math that
  /// reads the point's indices (masks, dropout).
  int map(PointExpr expr, std::vector<int> deps, bool pointwise = false) {
    Node node;
    node.loads = expr.loads();
    node.expr = std::move(expr);
    node.deps = std::move(deps);
    node.outer = !pointwise && !node.deps.empty();
    for (int d : node.deps)
      node.outer &= nodes[d].outer;
    return add(std::move(node));
  }

  /// The sum of node `of` over the outer points, one value per row point.
  int columnSum(int of) {
    Node node;
    node.column = true;
    node.deps = {of};
    return add(std::move(node));
  }

  int reduce(const char *combine, std::string init, int of) {
    Node node;
    node.reduce = node.outer = true;
    node.combine = combine;
    node.init = std::move(init);
    node.deps = {of};
    return add(std::move(node));
  }
};

/// Storage of a tensor type's elements in a kernel: bf16, f16, i32, else f32.
dmrt::DType storageOf(mlir::Type type);

/// Lowers the ops of `kernel` into `graph` (outputs in yield order).
llvm::Error lowerKernel(dm::KernelOp kernel, const KernelSpace &space, NodeGraph &graph);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_NODEGRAPH_H
