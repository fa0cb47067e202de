//===- PointExpr.h - a kernel node's pointwise math as data ---------------===//
//
// What a NodeGraph map node computes at one point, built by the lowering
// models (codegen/lowering/) as a tree instead of text: operands (the node's
// dependencies), kernel-input loads, constants, index variables, dropout
// draws, calls, arithmetic, comparisons, selects and casts. One printer
// turns it into CUDA C++ with the parentheses C's precedence needs and no
// others, so every model's arithmetic reads as a formula and the emitters
// receive one spelling of it (NodeGraph::map).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_POINTEXPR_H
#define DMC_CODEGEN_POINTEXPR_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dmc::codegen {

class PointExpr {
public:
  enum class Kind {
    Operand, ///< the node's dependency `index` (its register, NodeGraph::name)
    Load,    ///< kernel input `index`'s element at the point (its load or register)
    Literal, ///< `text` as written: a float constant, "0.f", "123u", a CUDA constant
    Index,   ///< the point's index along dim `text`: i_<dim>
    Draw,    ///< dropout draw `index`'s 16-bit word (NodeGraph::wordName)
    Call,    ///< `text`(args...): dmcExp, dmcGelu, tanhf, sqrtf
    Binary,  ///< args[0] `text` args[1]: + - * / (left-associative)
    Compare, ///< args[0] `text` args[1]: > >= ==
    Select,  ///< args[0] ? args[1] : args[2]
    Cast,    ///< (`text`)args[0]
  };

  /// Dependency `n` of the node (NodeGraph::map's deps[n]).
  static PointExpr operand(unsigned n);
  static PointExpr load(unsigned input);
  /// A float constant that parses back to exactly (float)v, as the
  /// interpreter's static_cast<float> (infinities as their bit patterns).
  static PointExpr constant(double v);
  static PointExpr literal(std::string text);
  static PointExpr index(char dim);
  static PointExpr draw(int k);
  static PointExpr call(std::string function, std::vector<PointExpr> args);
  static PointExpr select(PointExpr condition, PointExpr then, PointExpr otherwise);
  static PointExpr cast(std::string type, PointExpr x);

  friend PointExpr operator+(PointExpr a, PointExpr b);
  friend PointExpr operator-(PointExpr a, PointExpr b);
  friend PointExpr operator*(PointExpr a, PointExpr b);
  friend PointExpr operator/(PointExpr a, PointExpr b);
  PointExpr greater(PointExpr b) const;
  PointExpr greaterEqual(PointExpr b) const;
  PointExpr equals(PointExpr b) const;

  /// The operands it reads (Operand indices), the kernel inputs it loads and
  /// the draws it uses, each in order of first appearance.
  std::vector<unsigned> operands() const;
  std::vector<unsigned> loads() const;
  std::vector<int> draws() const;

  /// How the leaves that name something outside the tree are spelled.
  struct Names {
    /// Operand n: a register of the node graph (NodeGraph::name).
    std::function<std::string(unsigned)> operand;
    /// Kernel input n at the point: a scalar load or its vector's register
    /// (EmitSupport.h loadOf), chosen by the emitter printing the node.
    std::function<std::string(unsigned)> load;
  };
  /// CUDA C++ with every operand and load spelled by `names`.
  std::string print(const Names &names) const;

private:
  struct Node {
    Kind kind;
    std::string text;
    int64_t index = 0;
    std::vector<PointExpr> args;
  };
  explicit PointExpr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  static PointExpr make(Kind kind, std::string text, int64_t index, std::vector<PointExpr> args);
  static PointExpr binary(Kind kind, const char *op, PointExpr a, PointExpr b);
  int precedence() const;
  void print(std::string &out, const Names &names) const;
  void collect(Kind kind, std::vector<int64_t> &out) const;

  std::shared_ptr<const Node> node_;
};

} // namespace dmc::codegen

#endif // DMC_CODEGEN_POINTEXPR_H
