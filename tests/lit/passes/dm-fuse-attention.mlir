// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-fuse-attention{remarks=true}))' --verify-diagnostics | FileCheck %s
// The rewritten IR parses and verifies again.
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-fuse-attention))' | dmc-opt --split-input-file --verify-each | FileCheck %s

// dm-fuse-attention finds attention from iteration spaces and op kinds:
// scores = contraction over one head dim with a query dim private to one
// operand and a key dim private to the other; masks elementwise over the
// scores; softmax over the key dim; optional dropout; a contraction with the
// values over the key dim. The match becomes one dm.kernel "attention" that
// also yields the per-row log-sum-exp.

// CHECK-LABEL: func.func @causal_dropout
// CHECK-SAME: (%[[Q:[^:]*]]: {{![^>]*>}}, %[[K:[^:]*]]: {{![^>]*>}}, %[[V:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[A:.*]]:2 = dm.kernel "attention"(%[[Q]], %[[K]], %[[V]]) {dm.fused = "attention"} : ({{.*}}) -> (!dm.tensor<[b=2, j=16, h=2, p=16], bf16>, !dm.tensor<[b=2, h=2, j=16], f32>) {
// CHECK-NEXT: ^bb0(%[[AQ:[^:]*]]: {{.*}}, %[[AK:[^:]*]]: {{.*}}, %[[AV:[^:]*]]: {{.*}}):
// CHECK-NEXT: %[[S:.*]] = dm.contract %[[AQ]], %[[AK]] {{.*}}scale = 2.500000e-01
// CHECK-NEXT: %[[M:.*]] = dm.causal_mask %[[S]]
// CHECK-NEXT: %[[L:.*]] = dm.logsumexp %[[M]] {dim = "k"{{.*}}} : <[b=2, h=2, j=16, k=16], bf16> -> <[b=2, h=2, j=16], f32>
// CHECK-NEXT: %[[P:.*]] = dm.softmax %[[M]] {dim = "k"
// CHECK-NEXT: %[[D:.*]] = dm.dropout %[[P]]
// CHECK-NEXT: %[[O:.*]] = dm.contract %[[D]], %[[AV]] {{.*}}dm.rescaled_rounding
// CHECK-NEXT: dm.yield %[[O]], %[[L]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[A]]#0
func.func @causal_dropout(%q: !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, %k: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>, %v: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>) -> !dm.tensor<[b=2, j=16, h=2, p=16], bf16> {
  %s = dm.contract %q, %k {scale = 0.25 : f64} : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %m = dm.causal_mask %s {query = "j", key = "k", fill = 0xFFF0000000000000 : f64} : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %p = dm.softmax %m {dim = "k"} : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %d = dm.dropout %p {id = 0 : i64, p = 0.1 : f64, order = "bhjk"} : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %o = dm.contract %d, %v : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, j=16, h=2, p=16], bf16>
  return %o : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>
}

// -----

// Cross-attention (keys m != queries j) with key padding and no dropout; the
// key operand comes first in the scores contraction.

// CHECK-LABEL: func.func @cross_padding
// CHECK: dm.kernel "attention"(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^)]*}}) {dm.fused = "attention"}
// CHECK: dm.key_padding_mask
// CHECK: dm.logsumexp {{.*}} {dim = "m"
// CHECK-NOT: dm.softmax {{.*}} bf16>{{$}}
func.func @cross_padding(%q: !dm.tensor<[b=2, h=2, j=16, p=32], f16>, %k: !dm.tensor<[b=2, h=2, m=24, p=32], f16>, %v: !dm.tensor<[b=2, h=2, m=24, p=32], f16>, %len: !dm.tensor<[b=2], i32>) -> !dm.tensor<[b=2, h=2, j=16, p=32], f16> {
  %s = dm.contract %k, %q : !dm.tensor<[b=2, h=2, m=24, p=32], f16>, !dm.tensor<[b=2, h=2, j=16, p=32], f16> -> !dm.tensor<[b=2, h=2, j=16, m=24], f16>
  %m = dm.key_padding_mask %s, %len {key = "m", fill = 0xFFF0000000000000 : f64} : !dm.tensor<[b=2, h=2, j=16, m=24], f16>, !dm.tensor<[b=2], i32>
  %p = dm.softmax %m {dim = "m"} : !dm.tensor<[b=2, h=2, j=16, m=24], f16>
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=2, j=16, m=24], f16>, !dm.tensor<[b=2, h=2, m=24, p=32], f16> -> !dm.tensor<[b=2, h=2, j=16, p=32], f16>
  return %o : !dm.tensor<[b=2, h=2, j=16, p=32], f16>
}

// -----

// Near miss: the softmax runs over the query dim, not the key dim (read as
// the mirror image, queries k and keys j, the values' contraction then sums
// over the wrong dim).

// CHECK-LABEL: func.func @softmax_over_query
// CHECK-NOT: dm.kernel
// CHECK: dm.softmax
func.func @softmax_over_query(%q: !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, %k: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>, %v: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>) -> !dm.tensor<[b=2, j=16, h=2, p=16], bf16> {
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  // expected-remark @+1 {{attention not fused: q, k, v and the output are not [batch, position, head dim] alike}}
  %p = dm.softmax %s {dim = "j"} : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, j=16, h=2, p=16], bf16>
  return %o : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>
}

// -----

// Near miss: between the contractions an op that is not a mask (a bias add,
// elementwise but not one of the masks the kernels apply).

// CHECK-LABEL: func.func @bias_between
// CHECK-NOT: dm.kernel
// CHECK: dm.bias_add
func.func @bias_between(%q: !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, %k: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>, %v: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>, %bias: !dm.tensor<[h=2, k=16], bf16>) -> !dm.tensor<[b=2, j=16, h=2, p=16], bf16> {
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %x = dm.bias_add %s, %bias : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>, !dm.tensor<[h=2, k=16], bf16>
  // expected-remark @+1 {{attention not fused: the softmax input is not a contraction (through masks)}}
  %p = dm.softmax %x {dim = "k"} : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, j=16, h=2, p=16], bf16>
  return %o : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>
}

// -----

// Near miss: the probabilities are also returned (another user than the
// values contraction), so they must be stored.

// CHECK-LABEL: func.func @probabilities_returned
// CHECK-NOT: dm.kernel
func.func @probabilities_returned(%q: !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, %k: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>, %v: !dm.tensor<[b=2, k=16, h=2, p=16], bf16>) -> (!dm.tensor<[b=2, j=16, h=2, p=16], bf16>, !dm.tensor<[b=2, h=2, j=16, k=16], bf16>) {
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  // expected-remark @+1 {{attention not fused: the probabilities do not feed one plain contraction}}
  %p = dm.softmax %s {dim = "k"} : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=16], bf16> -> !dm.tensor<[b=2, j=16, h=2, p=16], bf16>
  return %o, %p : !dm.tensor<[b=2, j=16, h=2, p=16], bf16>, !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
}

// -----

// f32 attention stays unfused (cuBLASLt keeps its contractions in f32).

// CHECK-LABEL: func.func @f32_unfused
// CHECK-NOT: dm.kernel
func.func @f32_unfused(%q: !dm.tensor<[b=2, j=16, h=2, p=16], f32>, %k: !dm.tensor<[b=2, k=16, h=2, p=16], f32>, %v: !dm.tensor<[b=2, k=16, h=2, p=16], f32>) -> !dm.tensor<[b=2, j=16, h=2, p=16], f32> {
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=16, h=2, p=16], f32>, !dm.tensor<[b=2, k=16, h=2, p=16], f32> -> !dm.tensor<[b=2, h=2, j=16, k=16], f32>
  // expected-remark @+1 {{attention not fused: the fused kernels take bf16 or f16, not f32}}
  %p = dm.softmax %s {dim = "k"} : !dm.tensor<[b=2, h=2, j=16, k=16], f32>
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=2, j=16, k=16], f32>, !dm.tensor<[b=2, k=16, h=2, p=16], f32> -> !dm.tensor<[b=2, j=16, h=2, p=16], f32>
  return %o : !dm.tensor<[b=2, j=16, h=2, p=16], f32>
}

// -----

// Head dim 8 is not a multiple of 16: unfused, saying so.

// CHECK-LABEL: func.func @head_dim_8
// CHECK-NOT: dm.kernel
func.func @head_dim_8(%q: !dm.tensor<[b=2, j=16, h=2, p=8], bf16>, %k: !dm.tensor<[b=2, k=16, h=2, p=8], bf16>, %v: !dm.tensor<[b=2, k=16, h=2, p=8], bf16>) -> !dm.tensor<[b=2, j=16, h=2, p=8], bf16> {
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=16, h=2, p=8], bf16>, !dm.tensor<[b=2, k=16, h=2, p=8], bf16> -> !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  // expected-remark @+1 {{attention not fused: head dim 8 is not a multiple of 16 in [16, 128]}}
  %p = dm.softmax %s {dim = "k"} : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=2, j=16, k=16], bf16>, !dm.tensor<[b=2, k=16, h=2, p=8], bf16> -> !dm.tensor<[b=2, j=16, h=2, p=8], bf16>
  return %o : !dm.tensor<[b=2, j=16, h=2, p=8], bf16>
}
