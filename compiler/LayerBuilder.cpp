//===- LayerBuilder.cpp - model description -> forward dm graph -----------===//
#include "compiler/LayerBuilder.h"

#include "ir/Signature.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace dmc {
namespace {

class LayerBuilder {
public:
  LayerBuilder(MLIRContext &ctx, const ModelConfig &c)
      : c(c), b(&ctx), loc(b.getUnknownLoc()) {
    element = c.dtype == dmrt::DType::F32   ? Type(b.getF32Type())
              : c.dtype == dmrt::DType::F16 ? Type(b.getF16Type())
                                  : Type(b.getBF16Type());
  }

  OwningOpRef<ModuleOp> build() {
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    std::string fname = c.name;
    for (char &ch : fname)
      if (!llvm::isAlnum(ch))
        ch = '_';
    f = b.create<func::FuncOp>(loc, fname, b.getFunctionType({}, {}));
    b.setInsertionPointToStart(f.addEntryBlock());
    auto ret = b.create<func::ReturnOp>(loc);
    b.setInsertionPoint(ret);

    Value y = input("x", "bji", 1.0);
    Value memory = c.kind == LayerKind::Decoder ? input("memory", "bmi", 1.0) : Value();
    char keyDim = c.kind == LayerKind::Decoder ? 'm' : 'k';
    const char *lengthsName = c.kind == LayerKind::Decoder ? "memory_lengths" : "lengths";
    Value lens = c.keyPadding ? lengths(lengthsName, keyDim) : Value();
    for (int64_t n = 0; n < c.layers; ++n) {
      prefix = c.layers == 1 ? "" : "layer" + std::to_string(n) + ".";
      y = c.kind == LayerKind::Decoder ? decoder(y, memory, lens) : encoder(y, lens);
    }
    dm::setResults(f, y, {"y"}, {dmrt::TensorRole::Output});
    return module;
  }

private:
  int64_t size(char dim) const {
    switch (dim) {
    case 'b':
      return c.batch;
    case 'j':
    case 'k':
      return c.seq;
    case 'm':
      return c.memorySeq;
    case 'i':
      return c.hidden;
    case 'h':
      return c.heads;
    case 'p':
      return c.headDim;
    case 'u':
      return c.ffn;
    }
    llvm_unreachable("unknown dimension letter");
  }

  dm::TensorType type(StringRef dims, Type elt = {}) {
    SmallVector<int64_t> shape;
    for (char d : dims)
      shape.push_back(size(d));
    return dm::TensorType::get(b.getContext(), dims, shape, elt ? elt : element);
  }

  BlockArgument argument(StringRef name, StringRef dims, dmrt::TensorRole role, Type elt = {}) {
    BlockArgument a = dm::addArgument(f, type(dims, elt), name, role);
    return a;
  }
  void setInit(BlockArgument a, StringRef key, Attribute value) {
    f.setArgAttr(a.getArgNumber(), key, value);
  }
  Value input(StringRef name, StringRef dims, double range) {
    BlockArgument a = argument(name, dims, dmrt::TensorRole::Input);
    setInit(a, dm::kInitRangeAttr, b.getF64FloatAttr(range));
    return a;
  }
  /// A parameter initialised uniformly in mean +- range.
  Value param(StringRef name, StringRef dims, double mean, double range) {
    BlockArgument a = argument(prefix + name.str(), dims, dmrt::TensorRole::Param);
    if (mean != 0)
      setInit(a, dm::kInitMeanAttr, b.getF64FloatAttr(mean));
    setInit(a, dm::kInitRangeAttr, b.getF64FloatAttr(range));
    return a;
  }
  /// A weight read by a contraction over `fanIn` inputs.
  Value weight(StringRef name, StringRef dims, int64_t fanIn) {
    return param(name, dims, 0.0, 1.0 / std::sqrt(double(fanIn)));
  }
  Value lengths(StringRef name, char keyDim) {
    BlockArgument a = argument(name, "b", dmrt::TensorRole::Input, b.getI32Type());
    setInit(a, dm::kInitMaxAttr, b.getI64IntegerAttr(size(keyDim)));
    return a;
  }

  Value contract(Value lhs, Value rhs, StringRef dims, double scale = 1.0) {
    return b.create<dm::ContractOp>(loc, type(dims), lhs, rhs, b.getF64FloatAttr(scale)).getResult();
  }
  Value biasAdd(Value x, StringRef name, StringRef dims) {
    if (!c.bias)
      return x;
    return b.create<dm::BiasAddOp>(loc, x.getType(), x, param(name, dims, 0.0, 0.1));
  }
  Value dropout(Value x, double p) {
    if (p == 0)
      return x;
    // The counter runs over the dims in the order built here (the frontend
    // layout), so 16-byte vectors along the contiguous dim share Philox calls.
    return b.create<dm::DropoutOp>(loc, x.getType(), x, b.getF64FloatAttr(p),
                                   b.getI64IntegerAttr(nextDropoutId++),
                                   b.getStringAttr(cast<dm::TensorType>(x.getType()).getNames()));
  }
  Value rename(Value x, StringRef from, StringRef to) {
    auto t = cast<dm::TensorType>(x.getType());
    std::string names = t.getNames().str();
    for (char &n : names)
      if (size_t pos = from.find(n); pos != StringRef::npos)
        n = to[pos];
    return b.create<dm::RenameOp>(loc, t.withDims(names, t.getShape()), x,
                                  b.getStringAttr(from), b.getStringAttr(to));
  }
  Value layernorm(Value x, StringRef prefix) {
    Value gamma = param((prefix + ".gamma").str(), "i", 1.0, 0.1);
    Value beta = param((prefix + ".beta").str(), "i", 0.0, 0.1);
    auto stats = type("bj", b.getF32Type());
    auto ln = b.create<dm::LayerNormOp>(loc, x.getType(), stats, stats, x, gamma, beta,
                                        b.getStringAttr("i"),
                                        b.getF64FloatAttr(c.layernormEps));
    return ln.getY();
  }

  /// Multi-head attention of queries `xq` [b,j,i] over keys/values from
  /// `xkv` [b,n,i] (n = 'j' for self-attention, 'm' for cross-attention);
  /// keys are indexed by `key` ('k' for self-attention: the projections of x
  /// are renamed, a view, so Q, K and V all read x itself).
  Value attention(StringRef prefix, Value xq, Value xkv, char key, bool causal, Value lens) {
    std::string p = prefix.str() + ".";
    char source = cast<dm::TensorType>(xkv.getType()).getNames()[1];
    std::string projected = std::string("b") + source + "hp";
    int64_t hidden = c.hidden, inner = c.heads * c.headDim;
    auto keyed = [&](Value t) {
      return source == key ? t : rename(t, StringRef(&source, 1), StringRef(&key, 1));
    };
    Value q = biasAdd(contract(xq, weight(p + "wq", "hpi", hidden), "bjhp"), p + "bq", "hp");
    Value k = keyed(
        biasAdd(contract(xkv, weight(p + "wk", "hpi", hidden), projected), p + "bk", "hp"));
    Value v = keyed(
        biasAdd(contract(xkv, weight(p + "wv", "hpi", hidden), projected), p + "bv", "hp"));
    std::string scoreDims = std::string("bhj") + key;
    Value s = contract(q, k, scoreDims, 1.0 / std::sqrt(double(c.headDim)));
    double minusInf = -std::numeric_limits<double>::infinity();
    if (causal)
      s = b.create<dm::CausalMaskOp>(loc, s.getType(), s, b.getStringAttr("j"),
                                     b.getStringAttr(StringRef(&key, 1)),
                                     b.getF64FloatAttr(minusInf));
    if (lens)
      s = b.create<dm::KeyPaddingMaskOp>(loc, s.getType(), s, lens,
                                         b.getStringAttr(StringRef(&key, 1)),
                                         b.getF64FloatAttr(minusInf));
    Value a = b.create<dm::SoftmaxOp>(loc, s.getType(), s, b.getStringAttr(StringRef(&key, 1)));
    a = dropout(a, c.dropoutAttention);
    Value o = contract(a, v, "bjhp");
    return biasAdd(contract(o, weight(p + "wo", "ihp", inner), "bji"), p + "bo", "i");
  }

  Value ffn(Value x) {
    Value h = biasAdd(contract(x, weight("ffn.w1", "ui", c.hidden), "bju"), "ffn.b1", "u");
    h = b.create<dm::ActivationOp>(loc, h.getType(), h, b.getStringAttr(c.activation));
    h = dropout(h, c.dropoutActivation);
    return biasAdd(contract(h, weight("ffn.w2", "iu", c.ffn), "bji"), "ffn.b2", "i");
  }

  Value residual(Value x, Value branch) {
    return b.create<dm::AddOp>(loc, x.getType(), dropout(branch, c.dropoutHidden), x);
  }

  /// One residual block: post-norm LN(x + f(x)) or pre-norm x + f(LN(x)).
  template <typename F> Value block(Value x, StringRef norm, F body) {
    if (c.preNorm)
      return residual(x, body(layernorm(x, norm)));
    return layernorm(residual(x, body(x)), norm);
  }

  Value selfAttention(Value x, bool causal, Value lens) {
    return attention("attn", x, x, 'k', causal, lens);
  }

  Value encoder(Value x, Value lens) {
    bool causal = c.kind == LayerKind::Gpt;
    Value h = block(x, "ln1", [&](Value in) { return selfAttention(in, causal, lens); });
    return block(h, "ln2", [&](Value in) { return ffn(in); });
  }

  Value decoder(Value x, Value memory, Value lens) {
    Value h = block(x, "ln1", [&](Value in) { return selfAttention(in, true, Value()); });
    h = block(h, "ln2",
              [&](Value in) { return attention("cross", in, memory, 'm', false, lens); });
    return block(h, "ln3", [&](Value in) { return ffn(in); });
  }

  const ModelConfig &c;
  OpBuilder b;
  Location loc;
  Type element;
  func::FuncOp f;
  int64_t nextDropoutId = 0;
  /// "layer<n>." before parameter names when there are several layers.
  std::string prefix;
};

} // namespace

OwningOpRef<ModuleOp> buildForwardGraph(MLIRContext &ctx, const ModelConfig &config) {
  ctx.loadDialect<dm::DmDialect, func::FuncDialect>();
  return LayerBuilder(ctx, config).build();
}

} // namespace dmc
