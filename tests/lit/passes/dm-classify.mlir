// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-classify))' | FileCheck %s

// dm-classify sets `dm.class` on every op from its iteration space alone
// (the reduction dims and which operands have private dims), never from the
// op's name: a contraction has two operands with private dims and a
// reduction dim they share, a normalization any other reduction, and
// everything without a reduction is elementwise.

// A plain GEMM: b private to x, u private to w, i reduced and shared.

// CHECK-LABEL: func.func @gemm
// CHECK: dm.contract {{.*}}{dm.class = "contraction"}
func.func @gemm(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>) -> !dm.tensor<[b=2, u=4], f32> {
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %0 : !dm.tensor<[b=2, u=4], f32>
}

// -----

// Batched (attention scores): b and h are in both operands and the result,
// j and k private, p reduced.

// CHECK-LABEL: func.func @batched
// CHECK: dm.contract {{.*}}{dm.class = "contraction", scale = 1.250000e-01 : f64}
func.func @batched(%q: !dm.tensor<[b=2, h=4, j=8, p=16], f32>, %k: !dm.tensor<[b=2, h=4, k=8, p=16], f32>) -> !dm.tensor<[b=2, h=4, j=8, k=8], f32> {
  %0 = dm.contract %q, %k {scale = 0.125 : f64} : !dm.tensor<[b=2, h=4, j=8, p=16], f32>, !dm.tensor<[b=2, h=4, k=8, p=16], f32> -> !dm.tensor<[b=2, h=4, j=8, k=8], f32>
  return %0 : !dm.tensor<[b=2, h=4, j=8, k=8], f32>
}

// -----

// The reduction runs over two dims at once (h and p, the attention output
// projection).

// CHECK-LABEL: func.func @two_reduction_dims
// CHECK: dm.contract {{.*}}{dm.class = "contraction"}
func.func @two_reduction_dims(%a: !dm.tensor<[b=2, h=4, p=16], f32>, %w: !dm.tensor<[i=8, h=4, p=16], f32>) -> !dm.tensor<[b=2, i=8], f32> {
  %0 = dm.contract %a, %w : !dm.tensor<[b=2, h=4, p=16], f32>, !dm.tensor<[i=8, h=4, p=16], f32> -> !dm.tensor<[b=2, i=8], f32>
  return %0 : !dm.tensor<[b=2, i=8], f32>
}

// -----

// A dm.contract without a reduction (an outer product) loops over every
// point once: elementwise.

// CHECK-LABEL: func.func @outer_product
// CHECK: dm.contract {{.*}}{dm.class = "elementwise"}
func.func @outer_product(%x: !dm.tensor<[i=8], f32>, %y: !dm.tensor<[j=4], f32>) -> !dm.tensor<[i=8, j=4], f32> {
  %0 = dm.contract %x, %y : !dm.tensor<[i=8], f32>, !dm.tensor<[j=4], f32> -> !dm.tensor<[i=8, j=4], f32>
  return %0 : !dm.tensor<[i=8, j=4], f32>
}

// -----

// Same for a broadcast multiply that keeps the shared dim in the result.

// CHECK-LABEL: func.func @no_reduction
// CHECK: dm.contract {{.*}}{dm.class = "elementwise"}
func.func @no_reduction(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>) -> !dm.tensor<[b=2, u=4, i=8], f32> {
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4, i=8], f32>
  return %0 : !dm.tensor<[b=2, u=4, i=8], f32>
}

// -----

// A matrix-vector product: i is reduced and shared, but only x has a private
// dim, so it is a row reduction (a normalization), not a GEMM.

// CHECK-LABEL: func.func @matvec
// CHECK: dm.contract {{.*}}{dm.class = "normalization"}
func.func @matvec(%x: !dm.tensor<[b=2, i=8], f32>, %v: !dm.tensor<[i=8], f32>) -> !dm.tensor<[b=2], f32> {
  %0 = dm.contract %x, %v : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2], f32>
  return %0 : !dm.tensor<[b=2], f32>
}

// -----

// Reductions that are not contractions: softmax and its gradient, layernorm
// and both layernorm gradients, reduce_sum.

// CHECK-LABEL: func.func @normalizations
// CHECK: dm.softmax {{.*}}dm.class = "normalization"
// CHECK: dm.softmax_grad {{.*}}dm.class = "normalization"
// CHECK: dm.layernorm {{.*}}dm.class = "normalization"
// CHECK: dm.layernorm_grad_input {{.*}}dm.class = "normalization"
// CHECK: dm.layernorm_grad_params {{.*}}{dm.class = "normalization"}
// CHECK: dm.reduce_sum {{.*}}{dm.class = "normalization"}
func.func @normalizations(%x: !dm.tensor<[b=2, j=8, i=8], f32>, %g: !dm.tensor<[i=8], f32>) {
  %0 = dm.softmax %x {dim = "i"} : !dm.tensor<[b=2, j=8, i=8], f32>
  %1 = dm.softmax_grad %0, %x {dim = "i"} : !dm.tensor<[b=2, j=8, i=8], f32>
  %y, %m, %r = dm.layernorm %x, %g, %g {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, j=8, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2, j=8], f32>
  %2 = dm.layernorm_grad_input %x, %x, %m, %r, %g {dims = "i"} : !dm.tensor<[b=2, j=8, i=8], f32>, !dm.tensor<[b=2, j=8], f32>, !dm.tensor<[i=8], f32>
  %dg, %db = dm.layernorm_grad_params %x, %x, %m, %r : !dm.tensor<[b=2, j=8, i=8], f32>, !dm.tensor<[b=2, j=8], f32> -> !dm.tensor<[i=8], f32>
  %3 = dm.reduce_sum %x : !dm.tensor<[b=2, j=8, i=8], f32> -> !dm.tensor<[i=8], f32>
  return
}

// -----

// Everything without a reduction is elementwise, whatever it does: bias and
// residual adds, scale, dropout, activations and their gradients, masks,
// broadcast, layout changes and views.

// CHECK-LABEL: func.func @elementwise
// CHECK: dm.bias_add {{.*}}{dm.class = "elementwise"}
// CHECK: dm.add {{.*}}{dm.class = "elementwise"}
// CHECK: dm.scale {{.*}}{dm.class = "elementwise", factor
// CHECK: dm.dropout {{.*}}{dm.class = "elementwise", id
// CHECK: dm.activation {{.*}}{dm.class = "elementwise", kind = "gelu_tanh"}
// CHECK: dm.activation_grad {{.*}}{dm.class = "elementwise", kind = "relu"}
// CHECK: dm.causal_mask {{.*}}{dm.class = "elementwise", fill
// CHECK: dm.key_padding_mask {{.*}}{dm.class = "elementwise", fill
// CHECK: dm.broadcast {{.*}}{dm.class = "elementwise"}
// CHECK: dm.transpose {{.*}}{dm.class = "elementwise"}
// CHECK: dm.stack {{.*}}{dim = "s", dm.class = "elementwise"}
// CHECK: dm.unstack {{.*}}{dim = "s", dm.class = "elementwise"}
// CHECK: dm.rename {{.*}}{dm.class = "elementwise", from = "j", to = "k"}
// CHECK: dm.save {{.*}}{dm.class = "elementwise"}
func.func @elementwise(%x: !dm.tensor<[b=2, j=8, i=8], f32>, %g: !dm.tensor<[i=8], f32>, %l: !dm.tensor<[b=2], i32>) {
  %0 = dm.bias_add %x, %g : !dm.tensor<[b=2, j=8, i=8], f32>, !dm.tensor<[i=8], f32>
  %1 = dm.add %0, %x : !dm.tensor<[b=2, j=8, i=8], f32>
  %2 = dm.scale %1 {factor = 2.0 : f64} : !dm.tensor<[b=2, j=8, i=8], f32>
  %3 = dm.dropout %2 {id = 0 : i64, p = 0.1 : f64, order = "bji"} : !dm.tensor<[b=2, j=8, i=8], f32>
  %4 = dm.activation %3 {kind = "gelu_tanh"} : !dm.tensor<[b=2, j=8, i=8], f32>
  %5 = dm.activation_grad %4, %3 {kind = "relu"} : !dm.tensor<[b=2, j=8, i=8], f32>
  %6 = dm.causal_mask %5 {query = "j", key = "i", fill = 0.0 : f64} : !dm.tensor<[b=2, j=8, i=8], f32>
  %7 = dm.key_padding_mask %6, %l {key = "i", fill = 0.0 : f64} : !dm.tensor<[b=2, j=8, i=8], f32>, !dm.tensor<[b=2], i32>
  %8 = dm.broadcast %g : !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2, j=8, i=8], f32>
  %9 = dm.transpose %8 : !dm.tensor<[b=2, j=8, i=8], f32> -> !dm.tensor<[i=8, b=2, j=8], f32>
  %10 = dm.stack %7, %8 {dim = "s"} : !dm.tensor<[b=2, j=8, i=8], f32>, !dm.tensor<[b=2, j=8, i=8], f32> -> !dm.tensor<[s=2, b=2, j=8, i=8], f32>
  %11:2 = dm.unstack %10 {dim = "s"} : !dm.tensor<[s=2, b=2, j=8, i=8], f32> -> !dm.tensor<[b=2, j=8, i=8], f32>, !dm.tensor<[b=2, j=8, i=8], f32>
  %12 = dm.rename %11#0 {from = "j", to = "k"} : !dm.tensor<[b=2, j=8, i=8], f32> -> !dm.tensor<[b=2, k=8, i=8], f32>
  %13 = dm.save %x : !dm.tensor<[b=2, j=8, i=8], f32>
  return
}

// -----

// A reduce_sum that reduces nothing (result type = operand type) is a copy:
// elementwise. Classification follows the iteration space, not the name.

// CHECK-LABEL: func.func @reduce_nothing
// CHECK: dm.reduce_sum {{.*}}{dm.class = "elementwise"}
func.func @reduce_nothing(%x: !dm.tensor<[b=2, i=8], f32>) -> !dm.tensor<[b=2, i=8], f32> {
  %0 = dm.reduce_sum %x : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[b=2, i=8], f32>
  return %0 : !dm.tensor<[b=2, i=8], f32>
}

// -----

// Ops outside the dm dialect get no class; every dm op does, in nested
// kernels too.

// CHECK-LABEL: func.func @only_dm_ops
// CHECK: dm.kernel "scale"
// CHECK: dm.scale {{.*}}{dm.class = "elementwise", factor
// CHECK: dm.yield
// CHECK-NOT: dm.class
// CHECK: return
func.func @only_dm_ops(%x: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  %0 = dm.kernel "scale"(%x) : (!dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  ^bb0(%a: !dm.tensor<[i=8], f32>):
    %1 = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
    dm.yield %1 : !dm.tensor<[i=8], f32>
  }
  return %0 : !dm.tensor<[i=8], f32>
}
