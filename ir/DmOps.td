//===- DmOps.td - dm operations -----------------------------*- tablegen -*-===//
//
// Forward ops implement both interfaces; backward-only ops (the `*_grad` ops,
// reductions, broadcasts, `dm.save`) implement the iteration space only.
//
//===----------------------------------------------------------------------===//
#ifndef DM_OPS_TD
#define DM_OPS_TD

include "ir/DmDialect.td"
include "ir/DmTypes.td"
include "ir/DmInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// `space` lists the IterationSpaceOpInterface methods the op overrides.
class Dm_SpaceOp<string mnemonic, list<Trait> traits = [], list<string> space = []>
    : Dm_Op<mnemonic, !listconcat(traits,
        [Pure, DeclareOpInterfaceMethods<Dm_IterationSpaceOpInterface, space>])>;

class Dm_ForwardOp<string mnemonic, list<Trait> traits = [], list<string> space = []>
    : Dm_SpaceOp<mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<Dm_GradientOpInterface>]), space>;

/// An op whose single result has the type of operand `x`.
class Dm_UnaryOp<string mnemonic, list<Trait> traits = [], list<string> space = []>
    : Dm_ForwardOp<mnemonic, !listconcat(traits, [AllTypesMatch<["x", "result"]>]), space> {
  let results = (outs Dm_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Dm_ContractOp : Dm_ForwardOp<"contract",
    [], ["getFlopPerPoint", "getNumSpaceOperands"]> {
  let summary = "einsum over dimension names, times a scale, with a cuBLASLt epilogue";
  let description = [{
    `result[R] = scale * sum over (A u B) \ R of lhs[A] * rhs[B]`, where A, B,
    R are the names of the operand and result types. Every name of an operand
    appears in the other operand or in the result. The operands share an
    element type; the result has it too, or is f32 (summed and kept
    unrounded: fused attention's Drow, which grad-q yields for grad-kv).

    `epilogue` (one spelling with the bundle: dmrt::epilogueManifestName)
    folds a neighbour into the same cuBLASLt call (dm-gemm-epilogues):
    - "none" (the default): no `bias` operand, no `bias_grad` result;
    - "bias": `result[R] += bias[C]`, C a subset of R;
    - "bgrada" / "bgradb": `bias_grad[C] = sum of lhs (rhs) over the names
      of it that C lacks`: the bias gradient a separate reduction computed;
    - "accumulate": `result[R] += bias[R]`, the `bias` operand an addend with
      every dim of the result (a residual or a second gradient contribution),
      summed before the result is rounded; cuBLASLt reads it as C (beta 1).
    Epilogue operands add no dims to the iteration space.
  }];
  let arguments = (ins Dm_FloatTensor:$lhs, Dm_FloatTensor:$rhs,
                       Optional<Dm_FloatTensor>:$bias,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$epilogue);
  let results = (outs Dm_FloatTensor:$result, Optional<Dm_FloatTensor>:$bias_grad);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   "::mlir::FloatAttr":$scale), [{
      build($_builder, $_state, result, /*bias_grad=*/::mlir::Type(), lhs, rhs,
            /*bias=*/::mlir::Value(), scale, $_builder.getStringAttr("none"));
    }]>
  ];
  let assemblyFormat = [{
    $lhs `,` $rhs (`bias` $bias^ `:` type($bias))? attr-dict `:` type($lhs) `,` type($rhs)
    `->` type($result) (`,` type($bias_grad)^)?
  }];
  let extraClassDeclaration = [{
    /// The epilogue as the bundle spells it; None when the name is unknown.
    ::dmrt::Epilogue getEpilogueKind();
    /// The type of `result` (the op may also have `bias_grad`).
    ::dmc::dm::TensorType getType() {
      return ::llvm::cast<::dmc::dm::TensorType>(getResult().getType());
    }
  private:
    ::mlir::LogicalResult verifyEpilogue();
  public:
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def Dm_BiasAddOp : Dm_ForwardOp<"bias_add", [AllTypesMatch<["x", "result"]>], ["getShortName"]> {
  let summary = "adds a bias broadcast over the dimensions it lacks";
  let arguments = (ins Dm_FloatTensor:$x, Dm_FloatTensor:$bias);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x `,` $bias attr-dict `:` type($x) `,` type($bias)";
  let hasVerifier = 1;
}

def Dm_AddOp : Dm_ForwardOp<"add", [AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "elementwise sum (residual connections, gradient accumulation)";
  let arguments = (ins Dm_FloatTensor:$lhs, Dm_FloatTensor:$rhs);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Dm_ScaleOp : Dm_UnaryOp<"scale"> {
  let summary = "multiplies by a constant";
  let arguments = (ins Dm_FloatTensor:$x, F64Attr:$factor);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def Dm_ActivationOp : Dm_UnaryOp<"activation",
    [], ["getFlopPerPoint", "getShortName"]> {
  let summary = "gelu (erf form), gelu_tanh (tanh approximation) or relu";
  let arguments = (ins Dm_FloatTensor:$x, StrAttr:$kind);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    /// `kind` as the enum (the verifier admits no other spelling).
    ::dmc::dm::ActivationKind getActivationKind() {
      return *::dmc::dm::parseActivationKind(getKind());
    }
  }];
  let hasVerifier = 1;
}

def Dm_ActivationGradOp : Dm_SpaceOp<"activation_grad",
    [AllTypesMatch<["dy", "x", "result"]>], ["getFlopPerPoint", "getShortName"]> {
  let summary = "dy * act'(x)";
  let arguments = (ins Dm_FloatTensor:$dy, Dm_FloatTensor:$x, StrAttr:$kind);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$dy `,` $x attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    /// `kind` as the enum (the verifier admits no other spelling).
    ::dmc::dm::ActivationKind getActivationKind() {
      return *::dmc::dm::parseActivationKind(getKind());
    }
  }];
  let hasVerifier = 1;
}

def Dm_DropoutOp : Dm_UnaryOp<"dropout", [], ["readsElementIndex"]> {
  let summary = "Philox dropout; its own backward (the mask is regenerated)";
  let description = [{
    Keeps element n (its row-major index over the dims in `order`, a
    permutation of the tensor's dims fixed when the graph is built, so the
    mask does not depend on the layout a later pass chooses) when the Philox
    word for (run seed, `id`, n) is at least the threshold of `p`, scaling it
    by 1/(1-p); see runtime/format/device/Philox.h for the exact counter layout. The
    backward is the same op, same `id` and `order`, applied to the gradient.
  }];
  let arguments = (ins Dm_FloatTensor:$x, F64Attr:$p, I64Attr:$id, StrAttr:$order);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dm_DropoutKeepBitsOp : Dm_SpaceOp<"dropout_keep_bits", [],
    ["getFlopPerPoint", "getShortName", "readsElementIndex", "getPackedDims",
     "getReductionDims"]> {
  let summary = "a dropout's keep decisions, 32 keys per i32 word";
  let description = [{
    Bit i (least significant first) of the word at position w along `word`
    is 1 iff the element at 32 w + i along `key` exists, is not -inf in x (a
    masked score; with `unmasked` x's values are not read) and dm.dropout
    with the same `p`, `id` and `order` keeps it. The result has x's dims
    with `key` replaced by `word`, of size ceil(size(key) / 32); a word holds
    its 32 bits as an i32 (bit 31 is the sign). A fused attention forward
    writes these so that its backward applies the same mask
    (dm.dropout_apply_bits) without drawing the Philox words again;
    dm-save-dropout-bits does the same for dropouts in other kernels
    (`unmasked`).
  }];
  let arguments = (ins Dm_FloatTensor:$x, F64Attr:$p, I64Attr:$id, StrAttr:$order,
                       StrAttr:$key, StrAttr:$word, UnitAttr:$unmasked);
  let results = (outs Dm_I32Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Dm_DropoutApplyBitsOp : Dm_SpaceOp<"dropout_apply_bits", [AllTypesMatch<["x", "result"]>],
    ["getShortName", "getNumSpaceOperands", "getPackedDims", "getReductionDims"]> {
  let summary = "dropout from saved keep bits: x / (1 - p) where the bit is 1, else 0";
  let description = [{
    `bits` as dm.dropout_keep_bits writes them: its dims are x's with `key`
    replaced by `word`; the element at k along `key` reads bit k % 32 of word
    k / 32.
  }];
  let arguments = (ins Dm_FloatTensor:$x, Dm_I32Tensor:$bits, F64Attr:$p, StrAttr:$key,
                       StrAttr:$word);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x `,` $bits attr-dict `:` type($x) `,` type($bits)";
  let hasVerifier = 1;
}

def Dm_CausalMaskOp : Dm_UnaryOp<"causal_mask"> {
  let summary = "sets x to `fill` where the key index exceeds the query index";
  let description = [{
    Forward masks use fill = -inf (before softmax), their gradient the same
    op with fill = 0.
  }];
  let arguments = (ins Dm_FloatTensor:$x, StrAttr:$query, StrAttr:$key, F64Attr:$fill);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dm_KeyPaddingMaskOp : Dm_ForwardOp<"key_padding_mask",
    [AllTypesMatch<["x", "result"]>]> {
  let summary = "sets x to `fill` where the key index is >= lengths[batch]";
  let arguments = (ins Dm_FloatTensor:$x, Dm_I32Tensor:$lengths, StrAttr:$key,
                       F64Attr:$fill);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x `,` $lengths attr-dict `:` type($x) `,` type($lengths)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

def Dm_SoftmaxOp : Dm_UnaryOp<"softmax",
    [], ["getReductionDims", "getFlopPerPoint"]> {
  let summary = "softmax over the dimensions named in `dim`";
  let arguments = (ins Dm_FloatTensor:$x, StrAttr:$dim);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dm_SoftmaxGradOp : Dm_SpaceOp<"softmax_grad",
    [AllTypesMatch<["y", "dy", "result"]>], ["getReductionDims", "getFlopPerPoint", "getShortName"]> {
  let summary = "y * (dy - sum_dim(dy * y))";
  let arguments = (ins Dm_FloatTensor:$y, Dm_FloatTensor:$dy, StrAttr:$dim);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$y `,` $dy attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dm_LayerNormOp : Dm_ForwardOp<"layernorm",
    [AllTypesMatch<["x", "y"]>, AllTypesMatch<["mean", "rstd"]>, AllTypesMatch<["gamma", "beta"]>], ["getReductionDims", "getFlopPerPoint"]> {
  let summary = "layer normalization over `dims`; also returns mean and 1/stddev";
  let arguments = (ins Dm_FloatTensor:$x, Dm_FloatTensor:$gamma, Dm_FloatTensor:$beta,
                       StrAttr:$dims, F64Attr:$eps);
  let results = (outs Dm_FloatTensor:$y, Dm_FloatTensor:$mean, Dm_FloatTensor:$rstd);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta attr-dict `:` type($x) `,` type($gamma) `->` type($mean)
  }];
  let hasVerifier = 1;
}

def Dm_LayerNormGradInputOp : Dm_SpaceOp<"layernorm_grad_input",
    [AllTypesMatch<["dy", "x", "result"]>, AllTypesMatch<["mean", "rstd"]>], ["getReductionDims", "getFlopPerPoint", "getShortName"]> {
  let summary = "gradient of layernorm with respect to its input";
  let arguments = (ins Dm_FloatTensor:$dy, Dm_FloatTensor:$x, Dm_FloatTensor:$mean,
                       Dm_FloatTensor:$rstd, Dm_FloatTensor:$gamma, StrAttr:$dims);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $x `,` $mean `,` $rstd `,` $gamma attr-dict `:` type($x) `,` type($mean) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Dm_LayerNormGradParamsOp : Dm_SpaceOp<"layernorm_grad_params",
    [AllTypesMatch<["dy", "x"]>, AllTypesMatch<["mean", "rstd"]>,
     AllTypesMatch<["dgamma", "dbeta"]>], ["getFlopPerPoint", "getShortName"]> {
  let summary = "gradients of layernorm's scale and shift (sums over the other dims)";
  let arguments = (ins Dm_FloatTensor:$dy, Dm_FloatTensor:$x, Dm_FloatTensor:$mean,
                       Dm_FloatTensor:$rstd);
  let results = (outs Dm_FloatTensor:$dgamma, Dm_FloatTensor:$dbeta);
  let assemblyFormat = [{
    $dy `,` $x `,` $mean `,` $rstd attr-dict `:` type($x) `,` type($mean) `->` type($dgamma)
  }];
  let hasVerifier = 1;
}

def Dm_ReduceSumOp : Dm_ForwardOp<"reduce_sum"> {
  let summary = "sums over the dimensions the result lacks (bias gradients)";
  let arguments = (ins Dm_FloatTensor:$x);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Dm_BroadcastOp : Dm_ForwardOp<"broadcast", [], ["getFlopPerPoint"]> {
  let summary = "repeats x over the dimensions the result adds";
  let arguments = (ins Dm_FloatTensor:$x);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Softmax statistics (fused attention, dm-fuse-attention)
//===----------------------------------------------------------------------===//

def Dm_LogSumExpOp : Dm_SpaceOp<"logsumexp", [],
    ["getReductionDims", "getFlopPerPoint", "getShortName"]> {
  let summary = "log(sum exp(x)) over `dim` (f32); -inf for a row without mass";
  let description = [{
    The per-row statistic a fused attention forward writes so its backward
    can recompute the probabilities as `dm.softmax_lse` without a second
    pass over the row: softmax(x) = exp(x - logsumexp(x)).
  }];
  let arguments = (ins Dm_FloatTensor:$x, StrAttr:$dim);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Dm_SoftmaxLseOp : Dm_SpaceOp<"softmax_lse", [AllTypesMatch<["x", "result"]>],
    ["getFlopPerPoint", "getShortName"]> {
  let summary = "exp(x - lse): softmax from its log-sum-exp (0 where lse is -inf)";
  let arguments = (ins Dm_FloatTensor:$x, Dm_FloatTensor:$lse);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x `,` $lse attr-dict `:` type($x) `,` type($lse)";
  let hasVerifier = 1;
}

def Dm_SoftmaxGradRowsumOp : Dm_SpaceOp<"softmax_grad_rowsum",
    [AllTypesMatch<["y", "dy", "result"]>], ["getFlopPerPoint", "getShortName"]> {
  let summary = "y * (dy - rowsum): softmax_grad with sum(dy * y) given";
  let description = [{
    In attention, sum over keys of dP * P equals sum over the head dim of
    dO * O (O = P V, dP = dO V^T), which a fused backward computes from two
    tensors of the query's size instead of the row of scores.
  }];
  let arguments = (ins Dm_FloatTensor:$y, Dm_FloatTensor:$dy, Dm_FloatTensor:$rowsum);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$y `,` $dy `,` $rowsum attr-dict `:` type($y) `,` type($rowsum)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data layout and structure
//===----------------------------------------------------------------------===//

def Dm_TransposeOp : Dm_ForwardOp<"transpose", [], ["getFlopPerPoint"]> {
  let summary = "changes the layout (order of dimension names)";
  let arguments = (ins Dm_FloatTensor:$x);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Dm_RenameOp : Dm_ForwardOp<"rename", [],
    ["getReductionDims", "getFlopPerPoint", "sharesDimNames", "isView"]> {
  let summary = "renames dimensions (a view: no data moves)";
  let description = [{
    `from` and `to` are strings of equal length: `from[n]` becomes `to[n]`.
    Used where one tensor plays two roles, e.g. the layer input as queries
    (position `j`) and as keys (position `k`).
  }];
  let arguments = (ins Dm_FloatTensor:$x, StrAttr:$from, StrAttr:$to);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Dm_StackOp : Dm_ForwardOp<"stack", [], ["getFlopPerPoint", "isView"]> {
  let summary = "stacks equal-typed tensors along a new dimension `dim`";
  let arguments = (ins Variadic<Dm_FloatTensor>:$inputs, StrAttr:$dim);
  let results = (outs Dm_FloatTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Dm_UnstackOp : Dm_ForwardOp<"unstack", [], ["getReductionDims", "getFlopPerPoint", "isView"]> {
  let summary = "splits a tensor along dimension `dim` into its slices";
  let arguments = (ins Dm_FloatTensor:$x, StrAttr:$dim);
  let results = (outs Variadic<Dm_FloatTensor>:$outputs);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($outputs)";
  let hasVerifier = 1;
}

def Dm_SaveOp : Dm_SpaceOp<"save", [AllTypesMatch<["x", "result"]>], ["getFlopPerPoint", "isView"]> {
  let summary = "a forward value kept for the backward (a saved activation)";
  let description = [{
    Inserted by dm-autodiff: backward ops read forward results only through
    `dm.save`, so the activations a training step keeps alive are explicit.
    Semantically the identity. Saves floats, and the i32 keep bits of a
    fused attention's dropout.
  }];
  let arguments = (ins Dm_TensorType:$x);
  let results = (outs Dm_TensorType:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Fused kernels
//===----------------------------------------------------------------------===//

def Dm_KernelOp : Dm_Op<"kernel", [IsolatedFromAbove, SingleBlock,
                                   RecursiveMemoryEffects]> {
  let summary = "a fused kernel: the ops of its region run as one GPU kernel";
  let description = [{
    Built by dm-fuse from ops whose iteration spaces allow one loop nest. The
    block arguments are the kernel's inputs (each read from memory once), the
    values yielded its outputs (each written once); everything else stays in
    registers or shared memory. `name` says what it holds, e.g.
    "bias_dropout_add_layernorm". The interpreter runs the region.
  }];
  let arguments = (ins Variadic<Dm_TensorType>:$inputs, StrAttr:$name);
  let results = (outs Variadic<Dm_TensorType>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body
  }];
  let hasVerifier = 1;
}

def Dm_YieldOp : Dm_Op<"yield", [Pure, Terminator, HasParent<"KernelOp">]> {
  let summary = "the outputs of a fused kernel";
  let arguments = (ins Variadic<Dm_TensorType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // DM_OPS_TD
