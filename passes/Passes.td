//===- Passes.td - dm passes --------------------------------*- tablegen -*-===//
#ifndef DMC_PASSES_TD
#define DMC_PASSES_TD

include "mlir/Pass/PassBase.td"

def DmAutodiff : Pass<"dm-autodiff", "mlir::func::FuncOp"> {
  let summary = "Forward graph -> training graph (forward + backward)";
  let description = [{
    Appends to the function the backward of its forward ops: one upstream
    gradient argument per result (named `d<result>`, role `grad_output`) and
    one gradient result per float argument (named `<arg>.grad`, role `grad`).
    Gradients are built by each op's DmGradientOpInterface in reverse order
    and summed where a value has several uses. Forward results the backward
    reads pass through one `dm.save` each (the saved activations). Dropout
    masks are regenerated from the same Philox counters, never stored. The
    function gets the unit attribute `dm.training`.
  }];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmStackContractions : Pass<"dm-stack-contractions", "mlir::func::FuncOp"> {
  let summary = "Algebraic fusion: contractions sharing an operand become one";
  let description = [{
    Contractions that read the same tensor at the same position, with
    other operands of one type and equal result types and scales, become one
    contraction over a new stack dimension: `contract(x, stack(w1..wn))`
    followed by a `dm.unstack` (a view). Q, K and V projections of
    self-attention, K and V of cross-attention, and the cross-attention K/V of
    every layer of a decoder stack (they all read the encoder memory) each
    become one GEMM. Ops that then apply to every slice of the unstack alike
    (e.g. the Q, K, V bias adds) are rewritten over the stacked tensor.
    Run on the forward graph, dm-autodiff then yields the stacked backward:
    one dX contraction reducing over the stack dimension and one dW.
  }];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmClassify : Pass<"dm-classify", "mlir::func::FuncOp"> {
  let summary = "Tags every op contraction | normalization | elementwise";
  let description = [{
    Sets `dm.class` on each op from its iteration space alone: a contraction
    has two operands with private dims and a reduction dim they share; a
    normalization has any other reduction; the rest is elementwise.
  }];
}

def DmFuseAttention : Pass<"dm-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Attention (forward and backward) as fused, flash-style kernels";
  let description = [{
    Finds attention from iteration spaces and op kinds (passes/AttentionMatch.h):
    a contraction producing scores over a query dim private to one operand
    and a key dim private to the other, reduced over one head dim; masks
    that are elementwise over the scores (causal, key padding); a softmax
    over the key dim; optional dropout; a contraction with the values
    reducing over the key dim; and in a training graph the backward ops
    autodiff built from them. Each match becomes a `dm.kernel` "attention"
    yielding the output and the per-row log-sum-exp (`dm.logsumexp`), and
    two backward kernels, "attention_grad_kv" and "attention_grad_q", that
    recompute the probabilities from it (`dm.softmax_lse`) and take the
    softmax gradient's row sums from dO and O (`dm.softmax_grad_rowsum`):
    the [query x key] tensors are never stored. With dropout in a training
    graph the forward also yields the dropout's keep bits, 32 keys per i32
    word (`dm.dropout_keep_bits`, saved: 1/16 of the bf16 probabilities),
    and the backward kernels apply them (`dm.dropout_apply_bits`) instead of
    drawing the Philox words again (`keep-bits=false`: they draw). Each kernel carries
    `dm.fused` naming its kind. Attention the kernels cannot run (f32, head
    dims outside [16, 128] or not multiples of 16) stays unfused; with
    `remarks` each such softmax gets a remark saying why.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on every softmax left unfused, with the reason">,
    Option<"savedKeepBits", "keep-bits", "bool", /*default=*/"true",
           "Save the forward's dropout keep bits for the backward kernels">
  ];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmFuse : Pass<"dm-fuse", "mlir::func::FuncOp"> {
  let summary = "Maximal fusion of non-contraction ops into dm.kernel ops";
  let description = [{
    Groups ops that can share one loop nest: all members iterate over the same
    dimensions (names and sizes) and every member with a reduction has the
    same independent (outer) dimensions; producer->consumer pairs and
    siblings reading one tensor are merged greedily unless that would create a
    cycle through an op outside the group. Each group becomes a `dm.kernel`
    named after its contents. Contractions stay separate; where cuBLASLt could
    run a neighbour as an epilogue (bias, GELU/ReLU with aux, dGELU/dReLU,
    bias gradient, an addend read as C) the contraction gets `dm.epilogue`
    listing the candidates.
    Views (renames, unstack slices, saves) move no data and join no kernel.
  }];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmFuseColumnReductions : Pass<"dm-fuse-column-reductions", "mlir::func::FuncOp"> {
  let summary = "Column sums join the row kernel that reads the same tensors";
  let description = [{
    After dm-fuse: a kernel whose every reduction sums over dims C, with
    results that only leave the kernel (a column reduction such as the
    layer-norm parameter gradients, reducing over the rows), joins a row
    kernel of the same iteration space whose reductions run over the other
    dims (the complement of C) when the two read common tensors. The merged
    kernel reads those tensors once: each block accumulates its rows'
    column partial sums in registers, writes them to its workspace, and a
    second launch adds the blocks' partials in a fixed order
    (codegen/KernelEmitter.cpp). The column kernel's inputs must exist
    before the merged kernel runs and its results must not be read between
    the two kernels' positions. A column kernel summing a contraction's
    operand that dm-fuse marked as a bias-gradient epilogue candidate stays
    for dm-gemm-epilogues, unless `bias-grads-in-kernels` (the pipeline's
    bias-grads=none: no bias gradient goes into a GEMM).
  }];
  let options = [
    Option<"biasGradsInKernels", "bias-grads-in-kernels", "bool", /*default=*/"false",
           "Merge bias-gradient column sums too (dm-gemm-epilogues folds none)">
  ];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmDefaultLayouts : Pass<"dm-default-layouts", "mlir::func::FuncOp"> {
  let summary = "Layouts under which every contraction has a cuBLASLt form";
  let description = [{
    The default configuration's layouts, chosen without measuring. For each
    `dm.contract` that the cuBLASLt mapping (codegen/gemm/GemmMapping.h)
    rejects, candidate layouts of its three tensors are built from its own
    letter groups (batch, M, N, K: each group adjacent, one letter order per
    group, groups in any order) and tried with the mapping. Among those that
    map, it prefers, in this order: the contraction writing its output in
    another layout (cuBLASLt writes D either way through the operand swap);
    the `dm.kernel` producing an operand writing it in another layout (also
    through views: renames, unstack slices, saved activations, which follow
    their base); and, only where no producer can absorb it (a function
    argument, a returned tensor, a tensor another contraction needs in its
    current layout), an explicit `dm.transpose` in its own `dm.kernel`
    named "transpose". Kernels reading or writing a relaid tensor get a
    `dm.transpose` inside their region, which costs nothing: codegen
    addresses each tensor by its own layout. Semantics are unchanged (every
    op is defined over dimension names); function arguments and results keep
    their layouts. Runs after dm-fuse.
  }];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmStackInPlace : Pass<"dm-stack-in-place", "mlir::func::FuncOp"> {
  let summary = "Producers write straight into a stacked tensor (the stack becomes a view)";
  let description = [{
    After dm-default-layouts: a `dm.stack` inside a `dm.kernel` whose every
    input is a kernel input of its own, produced (through single-use
    renames) by a kernel that addresses its results through per-dim strides
    (the fused attention kernels) and read by nothing else, and whose stacked
    result the kernel writes out, moves out of the kernel as a view marked
    `dm.in_place` (ir/InPlaceStack.h): each producer writes its slice where
    the stacked buffer keeps it (strided when the stack dim is not
    outermost), so the copy disappears. The kernel's other members read the
    stacked tensor; a kernel left without results is erased. Tensor names
    are stamped first, so they do not change. With `remarks`, each stack
    left as a copy gets a remark saying why. Not in the default pipeline
    (`dmc compile --stack-in-place`): on an H200 it measured no faster.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on every stack left as a copy, with the reason">
  ];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmGemmEpilogues : Pass<"dm-gemm-epilogues", "mlir::func::FuncOp"> {
  let summary = "Folds bias adds, bias gradients and addends into cuBLASLt epilogues";
  let description = [{
    For each `dm.contract` (in order), the neighbour cuBLASLt can run in the
    same call (passes/EpilogueRewrite.h): a `dm.bias_add` of its result
    ("bias"), a `dm.reduce_sum` of an operand down to the dims the result
    keeps, the bias gradient ("bgrada" / "bgradb"), or a `dm.add` of another
    tensor laid out as the result, read as cuBLASLt's C with beta 1
    ("accumulate": a residual or a second gradient contribution). It is folded in only
    where the cuBLASLt mapping accepts the epilogue in the layouts chosen
    (run after dm-default-layouts or a configuration's layouts) and the
    kernel holding the op then moves fewer bytes than the epilogue adds; of
    several, the one saving most. The op leaves its kernel, the kernel keeps
    only what it still needs and disappears when nothing is left. The
    contraction records the bytes saved in `dm.epilogue_saved`.

    `bias-grads` says which bias gradients: `saving` (the default) those
    that save bytes; `all` also one whose kernel moves as many bytes without
    it (the kernel still reads the operand for other work: the column sum
    leaves the kernel for the GEMM, which may be faster though no byte is
    saved); `none` no bias gradient (bias adds still fold: cuBLASLt's bias
    gradient epilogue can cost more than a column sum in a kernel).
    `dmc compile --db` prices the three graphs and keeps the fastest.
    `addends=false` leaves every sum in its kernel (no "accumulate");
    `dmc compile --db` prices both.
  }];
  let options = [
    Option<"biasGrads", "bias-grads", "std::string", /*default=*/"\"saving\"",
           "Which bias gradients to fold: saving, all or none">,
    Option<"addends", "addends", "bool", /*default=*/"true",
           "Fold sums of the result and another tensor (accumulate)">
  ];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

def DmSaveDropoutBits : Pass<"dm-save-dropout-bits", "mlir::func::FuncOp"> {
  let summary = "The first kernel drawing a dropout saves its keep bits for the later ones";
  let description = [{
    A dropout's gradient is the same dm.dropout (same `id`, `p` and `order`)
    applied to the gradient, so a backward kernel holding it draws every
    Philox word again. The first kernel (in block order, fused attention
    kernels aside: they save their own) holding a dropout also yields its
    keep decisions (`dm.dropout_keep_bits` with `unmasked`, saved): 32 per
    i32 word along the dropout's innermost counter dim, which a fresh dim
    letter replaces. Every later kernel holding the same dropout reads them
    as a new input and applies them (`dm.dropout_apply_bits`). A dropout
    whose innermost counter dim is not a multiple of 32 is drawn again;
    with `remarks` it gets a remark saying so. The dropouts listed in
    `drawn` (by `id`) are drawn again too: `dmc compile --db` chooses per
    dropout.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Remark on every dropout drawn again, with the reason">,
    ListOption<"drawn", "drawn", "int64_t",
               "Ids of the dropouts whose later kernels draw the mask again">
  ];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

#endif // DMC_PASSES_TD
