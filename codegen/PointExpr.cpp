//===- PointExpr.cpp - printing a node's pointwise math -------------------===//
#include "codegen/PointExpr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dmc::codegen {

PointExpr PointExpr::make(Kind kind, std::string text, int64_t index,
                          std::vector<PointExpr> args) {
  return PointExpr(std::make_shared<const Node>(Node{kind, std::move(text), index,
                                                     std::move(args)}));
}

PointExpr PointExpr::operand(unsigned n) { return make(Kind::Operand, "", n, {}); }
PointExpr PointExpr::load(unsigned input) { return make(Kind::Load, "", input, {}); }
PointExpr PointExpr::literal(std::string text) {
  return make(Kind::Literal, std::move(text), 0, {});
}
PointExpr PointExpr::constant(double v) {
  float f = static_cast<float>(v);
  if (std::isinf(f))
    return literal(f < 0 ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9ef", f);
  return literal(buf);
}
PointExpr PointExpr::index(char dim) { return make(Kind::Index, std::string(1, dim), 0, {}); }
PointExpr PointExpr::draw(int k) { return make(Kind::Draw, "", k, {}); }
PointExpr PointExpr::call(std::string function, std::vector<PointExpr> args) {
  return make(Kind::Call, std::move(function), 0, std::move(args));
}
PointExpr PointExpr::select(PointExpr condition, PointExpr then, PointExpr otherwise) {
  return make(Kind::Select, "", 0, {std::move(condition), std::move(then), std::move(otherwise)});
}
PointExpr PointExpr::cast(std::string type, PointExpr x) {
  return make(Kind::Cast, std::move(type), 0, {std::move(x)});
}
PointExpr PointExpr::binary(Kind kind, const char *op, PointExpr a, PointExpr b) {
  return make(kind, op, 0, {std::move(a), std::move(b)});
}
PointExpr operator+(PointExpr a, PointExpr b) {
  return PointExpr::binary(PointExpr::Kind::Binary, "+", std::move(a), std::move(b));
}
PointExpr operator-(PointExpr a, PointExpr b) {
  return PointExpr::binary(PointExpr::Kind::Binary, "-", std::move(a), std::move(b));
}
PointExpr operator*(PointExpr a, PointExpr b) {
  return PointExpr::binary(PointExpr::Kind::Binary, "*", std::move(a), std::move(b));
}
PointExpr operator/(PointExpr a, PointExpr b) {
  return PointExpr::binary(PointExpr::Kind::Binary, "/", std::move(a), std::move(b));
}
PointExpr PointExpr::greater(PointExpr b) const { return binary(Kind::Compare, ">", *this, b); }
PointExpr PointExpr::greaterEqual(PointExpr b) const {
  return binary(Kind::Compare, ">=", *this, b);
}
PointExpr PointExpr::equals(PointExpr b) const { return binary(Kind::Compare, "==", *this, b); }

/// C's precedence, higher binds tighter: ?: 1, == 2, > >= 3, + - 4, * / 5,
/// everything else (names, calls, casts) 6.
int PointExpr::precedence() const {
  const Node &n = *node_;
  switch (n.kind) {
  case Kind::Select: return 1;
  case Kind::Compare: return n.text == "==" ? 2 : 3;
  case Kind::Binary: return n.text == "+" || n.text == "-" ? 4 : 5;
  default: return 6;
  }
}

void PointExpr::print(std::string &out, const Names &names) const {
  const Node &n = *node_;
  // A child in parentheses when it binds looser than this node, or as
  // tightly on the side its associativity does not group: the right of a
  // binary operator, the condition of a select.
  auto child = [&](const PointExpr &c, bool groupsHere) {
    bool parens = c.precedence() < precedence() || (c.precedence() == precedence() && !groupsHere);
    if (parens)
      out += "(";
    c.print(out, names);
    if (parens)
      out += ")";
  };
  switch (n.kind) {
  case Kind::Operand: out += names.operand(unsigned(n.index)); return;
  case Kind::Load: out += names.load(unsigned(n.index)); return;
  case Kind::Literal: out += n.text; return;
  case Kind::Index: out += "i_" + n.text; return;
  case Kind::Draw: out += "w" + std::to_string(n.index) + "_"; return;
  case Kind::Call:
    out += n.text + "(";
    for (size_t i = 0; i < n.args.size(); ++i) {
      if (i)
        out += ", ";
      n.args[i].print(out, names);
    }
    out += ")";
    return;
  case Kind::Cast:
    out += "(" + n.text + ")";
    child(n.args[0], true);
    return;
  case Kind::Binary:
  case Kind::Compare:
    child(n.args[0], true);
    out += " " + n.text + " ";
    child(n.args[1], false);
    return;
  case Kind::Select:
    child(n.args[0], false);
    out += " ? ";
    n.args[1].print(out, names); // between ? and : anything goes
    out += " : ";
    child(n.args[2], true); // right-associative: a ? b : c ? d : e
    return;
  }
}

std::string PointExpr::print(const Names &names) const {
  std::string out;
  print(out, names);
  return out;
}

void PointExpr::collect(Kind kind, std::vector<int64_t> &out) const {
  if (node_->kind == kind && std::find(out.begin(), out.end(), node_->index) == out.end())
    out.push_back(node_->index);
  for (const PointExpr &a : node_->args)
    a.collect(kind, out);
}

std::vector<unsigned> PointExpr::operands() const {
  std::vector<int64_t> v;
  collect(Kind::Operand, v);
  return std::vector<unsigned>(v.begin(), v.end());
}
std::vector<unsigned> PointExpr::loads() const {
  std::vector<int64_t> v;
  collect(Kind::Load, v);
  return std::vector<unsigned>(v.begin(), v.end());
}
std::vector<int> PointExpr::draws() const {
  std::vector<int64_t> v;
  collect(Kind::Draw, v);
  return std::vector<int>(v.begin(), v.end());
}

} // namespace dmc::codegen
