//===- FuseAttention.cpp - dm-fuse-attention: attention as fused kernels --===//
//
// Replaces each matched attention (AttentionMatch.h) by one dm.kernel for the
// forward, which also yields the per-row log-sum-exp, and, in a training
// graph, two for the backward (dq by query block, which also yields Drow =
// dO . o, then dk/dv by key block, which reads it) that recompute the scores
// and probabilities instead of reading saved ones. The
// regions hold the same ops the graph had, plus dm.logsumexp, dm.softmax_lse
// and dm.softmax_grad_rowsum, so the interpreter evaluates them as before;
// codegen gives a kernel whose `dm.fused` attribute is set its own emitter.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "passes/AttentionMatch.h"
#include "passes/KernelBody.h"

#include "ir/IterationSpace.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dm-fuse-attention"

namespace dmc {
#define GEN_PASS_DEF_DMFUSEATTENTION
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

dm::TensorType tensorOf(Value v) { return cast<dm::TensorType>(v.getType()); }

/// Builds one fused kernel: block arguments for `inputs`, `body` fills the
/// region (returning the values to yield), classes set on the new ops.
dm::KernelOp buildKernel(OpBuilder &b, Location loc, StringRef name, StringRef kind,
                         ArrayRef<Value> inputs, TypeRange results,
                         llvm::function_ref<SmallVector<Value>(OpBuilder &, IRMapping &)> body) {
  auto kernel = buildKernelOp(b, loc, name, inputs, results, body);
  kernel->setAttr(dm::kFusedAttr, b.getStringAttr(kind));
  kernel.getBody().walk([&](dm::IterationSpaceOpInterface op) {
    op->setAttr(dm::kClassAttr, b.getStringAttr(dm::opClassName(dm::classify(op))));
  });
  return kernel;
}

struct Rewriter {
  AttentionForward f;
  AttentionBackward *g; // null: no backward (inference graph)
  char word = 0;        // the keep bits' word dim; 0: no saved keep bits

  /// The keep bits of the dropout: the scores' dims with the key's replaced
  /// by words of 32 keys (dm.dropout_keep_bits), the word dim right before
  /// the query dim: the kernels store and load the words of 8 to 32
  /// consecutive queries at once, which then share sectors (an H200 at
  /// L1024 causal: grad-kv 0.220 against 0.230 ms with the words of a query
  /// adjacent instead).
  dm::TensorType bitsType() {
    auto t = tensorOf(f.softmax.getX());
    std::string names;
    SmallVector<int64_t> shape;
    for (auto [name, size] : llvm::zip(t.getNames(), t.getShape())) {
      if (name == f.key)
        continue;
      if (name == f.query) {
        names.push_back(word);
        shape.push_back((t.getSize(f.key) + 31) / 32);
      }
      names.push_back(name);
      shape.push_back(size);
    }
    return dm::TensorType::get(t.getContext(), names, shape,
                               IntegerType::get(t.getContext(), 32));
  }

  /// dm.dropout_apply_bits of `x` (a region value): the graph's dropout of x
  /// with the mask read from `bits`.
  Value applyBits(OpBuilder &b, Location loc, Value x, Value bits) {
    std::string key(1, f.key), w(1, word);
    return b.create<dm::DropoutApplyBitsOp>(loc, x.getType(), x, bits, f.dropout.getPAttr(),
                                            b.getStringAttr(key), b.getStringAttr(w));
  }

  /// Scores, masks and their log-sum-exp (forward) or the probabilities
  /// recomputed from it (backward), inside a region mapped by `map`.
  Value scores(OpBuilder &b, IRMapping &map) {
    b.clone(*f.scores, map);
    for (Operation *mask : f.masks)
      b.clone(*mask, map);
    return map.lookup(f.softmax.getX());
  }

  Type lseType(Value masked) {
    auto t = tensorOf(masked);
    std::string dims;
    for (char c : t.getNames())
      if (c != f.key)
        dims.push_back(c);
    auto r = t.restrictedTo(dims);
    return dm::TensorType::get(t.getContext(), r.getNames(), r.getShape(),
                               Float32Type::get(t.getContext()));
  }

  /// Drow = rowsum(dO * O) over the head dim (region values `dOut`, `o`), in
  /// f32 as the log-sum-exp (lseType): grad-q yields it and grad-kv reads it.
  Value rowDot(OpBuilder &b, Location loc, Value dOut, Value o) {
    return b.create<dm::ContractOp>(loc, lseType(f.softmax.getX()), dOut, o,
                                    b.getF64FloatAttr(1.0))
        .getResult();
  }

  /// dS = P (dP - rowsum), rowsum = Drow; masked as the graph masked it; the
  /// dropout's gradient from `bits` when they were saved.
  Value scoreGrad(OpBuilder &b, IRMapping &map, Value p, Value rowsum, Value bits,
                  Location loc) {
    b.clone(*g->gradScores, map);
    if (g->gradDropout && bits)
      map.map(g->gradDropout.getResult(),
              applyBits(b, loc, map.lookup(g->gradDropout.getX()), bits));
    else if (g->gradDropout)
      b.clone(*g->gradDropout, map);
    Value ds = b.create<dm::SoftmaxGradRowsumOp>(loc, p.getType(), p,
                                                 map.lookup(g->softmaxGrad.getDy()), rowsum);
    map.map(g->softmaxGrad.getResult(), ds);
    for (Operation *mask : g->gradMasks)
      ds = b.clone(*mask, map)->getResult(0);
    // The kernels round dS to the element type once, here, before the dq and
    // dk MMAs. (They also round probabilities: grad-kv dropout(P) before the
    // dv MMA, marked where it is built; the forward P unnormalized, an order
    // the region's ops do not have: its P x V contraction is marked
    // dm.rescaled_rounding instead, and the check's bound covers it.)
    ds.getDefiningOp()->setAttr(dm::kRoundedAttr, b.getUnitAttr());
    return ds;
  }

  void run() {
    Location loc = f.output.getLoc();
    OpBuilder b(f.output);
    SmallVector<Value> inputs = {f.q, f.k, f.v};
    if (f.lengths)
      inputs.push_back(f.lengths);
    Type lse = lseType(f.softmax.getX());
    SmallVector<Type> results = {f.output.getType(), lse};
    dm::TensorType bits = word ? bitsType() : dm::TensorType();
    if (word)
      results.push_back(bits);
    auto fwd = buildKernel(
        b, loc, "attention", "attention", inputs, results,
        [&](OpBuilder &in, IRMapping &map) -> SmallVector<Value> {
          Value masked = scores(in, map);
          Value l = in.create<dm::LogSumExpOp>(loc, lse, masked, f.softmax.getDimAttr());
          in.clone(*f.softmax, map);
          if (f.dropout)
            in.clone(*f.dropout, map);
          // The kernel rounds the unnormalized probabilities for the P x V
          // MMA: references bound that rounding (kRescaledRoundingAttr).
          in.clone(*f.output, map)->setAttr(dm::kRescaledRoundingAttr, in.getUnitAttr());
          SmallVector<Value> yields = {map.lookup(f.output.getResult()), l};
          if (word)
            yields.push_back(in.create<dm::DropoutKeepBitsOp>(
                loc, bits, masked, f.dropout.getPAttr(), f.dropout.getIdAttr(),
                f.dropout.getOrderAttr(), in.getStringAttr(std::string(1, f.key)),
                in.getStringAttr(std::string(1, word)), /*unmasked=*/UnitAttr()));
          return yields;
        });
    f.output.getResult().replaceAllUsesWith(fwd.getResult(0));
    if (!g)
      return;
    Value savedLse = b.create<dm::SaveOp>(loc, lse, fwd.getResult(1));
    Value savedO = b.create<dm::SaveOp>(loc, f.output.getType(), fwd.getResult(0));
    Value savedBits =
        word ? b.create<dm::SaveOp>(loc, bits, fwd.getResult(2)).getResult() : Value();
    // The backward kernels go where the first backward op of the pattern was.
    Operation *first = g->gradScores->isBeforeInBlock(g->gradV) ? g->gradScores : g->gradV;
    OpBuilder bb(first);
    // grad-q: q, k, v, o, dO, lse[, bits][, lengths] -> dQ, Drow;
    // grad-kv: q, k, v, dO, lse, Drow[, bits][, lengths] -> dK, dV.
    auto withOptional = [&](SmallVector<Value> in) {
      if (savedBits)
        in.push_back(savedBits);
      if (f.lengths)
        in.push_back(f.lengths);
      return in;
    };
    auto recompute = [&](OpBuilder &in, IRMapping &map) {
      // The forward ops read q, k, v; here they read the saved ones.
      map.map(f.q, map.lookup(g->savedQ));
      map.map(f.k, map.lookup(g->savedK));
      Value masked = scores(in, map);
      Value p = in.create<dm::SoftmaxLseOp>(loc, masked.getType(), masked,
                                            map.lookup(savedLse));
      map.map(f.softmax.getResult(), p);
      return p;
    };
    // grad-q first: it computes Drow for its query tile anyway and yields it
    // (f32); grad-kv reads it instead of an o tile and a dot product per
    // query tile and key block.
    auto q = buildKernel(bb, loc, "attention_grad_q", "attention_grad_q",
                         withOptional({g->savedQ, g->savedK, g->savedV, savedO, g->gradOutput,
                                       savedLse}),
                         {g->gradQ.getType(), lseType(f.softmax.getX())},
                         [&](OpBuilder &in, IRMapping &map) -> SmallVector<Value> {
                           Value p = recompute(in, map);
                           Value drow = rowDot(in, loc, map.lookup(g->gradOutput),
                                               map.lookup(savedO));
                           scoreGrad(in, map, p, drow,
                                     savedBits ? map.lookup(savedBits) : Value(), loc);
                           in.clone(*g->gradQ, map);
                           return {map.lookup(g->gradQ.getResult()), drow};
                         });
    Value drow = q.getResult(1);
    auto kv = buildKernel(
        bb, loc, "attention_grad_kv", "attention_grad_kv",
        withOptional({g->savedQ, g->savedK, g->savedV, g->gradOutput, savedLse, drow}),
        {g->gradK.getType(), g->gradV.getType()},
        [&](OpBuilder &in, IRMapping &map) -> SmallVector<Value> {
          Value p = recompute(in, map);
          Value bits = savedBits ? map.lookup(savedBits) : Value();
          Value dropped = p;
          if (bits)
            dropped = applyBits(in, loc, p, bits);
          else if (f.dropout)
            dropped = in.clone(*f.dropout, map)->getResult(0);
          // The kernel rounds dropout(P), scale included, for the dv MMA.
          if (f.dropout)
            dropped.getDefiningOp()->setAttr(dm::kRoundedAttr, in.getUnitAttr());
          // The saved dropped probabilities are the recomputed ones here.
          Value savedDropped = g->gradV.getLhs() == g->gradOutput ? g->gradV.getRhs()
                                                                  : g->gradV.getLhs();
          map.map(savedDropped, dropped);
          in.clone(*g->gradV, map);
          scoreGrad(in, map, p, map.lookup(drow), bits, loc);
          in.clone(*g->gradK, map);
          return {map.lookup(g->gradK.getResult()), map.lookup(g->gradV.getResult())};
        });
    g->gradK.getResult().replaceAllUsesWith(kv.getResult(0));
    g->gradV.getResult().replaceAllUsesWith(kv.getResult(1));
    g->gradQ.getResult().replaceAllUsesWith(q.getResult(0));
  }
};

/// The ops a match replaces: the pattern's, and the saves of the
/// probabilities (before and after dropout) that only its backward read.
SmallVector<Operation *> replacedOps(AttentionForward f, AttentionBackward *g) {
  SmallVector<Operation *> ops = {f.scores, f.softmax, f.output};
  ops.append(f.masks.begin(), f.masks.end());
  if (f.dropout)
    ops.push_back(f.dropout);
  for (Value p : {Value(f.softmax.getResult()), f.dropout ? Value(f.dropout.getResult()) : Value()})
    if (p)
      for (Operation *u : p.getUsers())
        if (isa<dm::SaveOp>(u))
          ops.push_back(u);
  if (g) {
    ops.append({g->gradScores, g->softmaxGrad, g->gradQ, g->gradK, g->gradV});
    ops.append(g->gradMasks.begin(), g->gradMasks.end());
    if (g->gradDropout)
      ops.push_back(g->gradDropout);
  }
  return ops;
}

/// Erases `ops`, users first; one something else still reads (a save of the
/// probabilities another op uses) stays, correct if not smaller.
void eraseReplaced(SmallVector<Operation *> ops) {
  llvm::sort(ops, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  for (Operation *op : ops)
    if (op->use_empty())
      op->erase();
}

struct DmFuseAttentionPass : impl::DmFuseAttentionBase<DmFuseAttentionPass> {
  using DmFuseAttentionBase::DmFuseAttentionBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool training = func->hasAttr("dm.training");
    SmallVector<dm::SoftmaxOp> softmaxes(func.getBody().front().getOps<dm::SoftmaxOp>());
    for (dm::SoftmaxOp softmax : softmaxes) {
      std::string whyNot;
      std::optional<AttentionForward> f = matchAttentionForward(softmax, whyNot);
      std::optional<AttentionBackward> g;
      if (f && training)
        g = matchAttentionBackward(*f, whyNot);
      if (f && (!training || g))
        whyNot = attentionUnsupported(*f);
      if (!whyNot.empty()) {
        if (remarks)
          softmax.emitRemark() << "attention not fused: " << whyNot;
        continue;
      }
      SmallVector<Operation *> replaced = replacedOps(*f, g ? &*g : nullptr);
      // A training graph's backward reads the forward's keep bits instead of
      // drawing the dropout mask twice more.
      char word = g && f->dropout && savedKeepBits ? unusedDimLetter(func) : 0;
      Rewriter{*f, g ? &*g : nullptr, word}.run();
      eraseReplaced(std::move(replaced));
    }
  }
};

} // namespace
} // namespace dmc
