// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-stack-contractions))' | FileCheck %s

// dm-stack-contractions turns contractions that read one tensor at the same
// position (other operands of one type, equal result types and scales) into
// one contraction over a stacked operand, with a fresh stack letter, followed
// by a dm.unstack. Ops applied alike to every slice then move onto the
// stacked tensor unless they depend on element indices.

// Q, K and V projections of one input: one stack of the weights (in block
// order), one contraction, one unstack whose slices replace the three results.

// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[X:[^:]*]]: {{![^>]*>}}, %[[WQ:[^:]*]]: {{![^>]*>}}, %[[WK:[^:]*]]: {{![^>]*>}}, %[[WV:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[W:.*]] = dm.stack %[[WQ]], %[[WK]], %[[WV]] {dim = "s"} : {{.*}} -> <[s=3, u=4, i=8], f32>
// CHECK-NEXT: %[[C:.*]] = dm.contract %[[X]], %[[W]] : <[b=2, i=8], f32>, <[s=3, u=4, i=8], f32> -> <[s=3, b=2, u=4], f32>
// CHECK-NEXT: %[[S:.*]]:3 = dm.unstack %[[C]] {dim = "s"} : <[s=3, b=2, u=4], f32> -> !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1, %[[S]]#2 :
// CHECK-NOT: dm.contract
func.func @qkv(%x: !dm.tensor<[b=2, i=8], f32>, %wq: !dm.tensor<[u=4, i=8], f32>, %wk: !dm.tensor<[u=4, i=8], f32>, %wv: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %q = dm.contract %x, %wq : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %k = dm.contract %x, %wk : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %v = dm.contract %x, %wv : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %q, %k, %v : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// The stack letter is fresh: with `s` and `q` taken by the operands and the
// result, the next candidate `r` is used.

// CHECK-LABEL: func.func @fresh_letter
// CHECK: dm.stack {{.*}} {dim = "r"} : {{.*}} -> <[r=2, q=4, i=8], f32>
// CHECK: dm.contract {{.*}} -> <[r=2, s=2, q=4], f32>
// CHECK: dm.unstack {{.*}} {dim = "r"}
func.func @fresh_letter(%x: !dm.tensor<[s=2, i=8], f32>, %w1: !dm.tensor<[q=4, i=8], f32>, %w2: !dm.tensor<[q=4, i=8], f32>)
    -> (!dm.tensor<[s=2, q=4], f32>, !dm.tensor<[s=2, q=4], f32>) {
  %0 = dm.contract %x, %w1 : !dm.tensor<[s=2, i=8], f32>, !dm.tensor<[q=4, i=8], f32> -> !dm.tensor<[s=2, q=4], f32>
  %1 = dm.contract %x, %w2 : !dm.tensor<[s=2, i=8], f32>, !dm.tensor<[q=4, i=8], f32> -> !dm.tensor<[s=2, q=4], f32>
  return %0, %1 : !dm.tensor<[s=2, q=4], f32>, !dm.tensor<[s=2, q=4], f32>
}

// -----

// The shared operand on the rhs: the stack becomes the lhs; the scale is kept.

// CHECK-LABEL: func.func @shared_rhs
// CHECK-SAME: (%[[X:[^:]*]]: {{![^>]*>}}, %[[A:[^:]*]]: {{![^>]*>}}, %[[B:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[W:.*]] = dm.stack %[[A]], %[[B]] {dim = "s"} : {{.*}} -> <[s=2, u=4, i=8], f32>
// CHECK-NEXT: %[[C:.*]] = dm.contract %[[W]], %[[X]] {scale = 5.000000e-01 : f64} : <[s=2, u=4, i=8], f32>, <[b=2, i=8], f32> -> <[s=2, b=2, u=4], f32>
// CHECK-NEXT: %[[S:.*]]:2 = dm.unstack %[[C]] {dim = "s"}
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1 :
func.func @shared_rhs(%x: !dm.tensor<[b=2, i=8], f32>, %a: !dm.tensor<[u=4, i=8], f32>, %b: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %0 = dm.contract %a, %x {scale = 0.5 : f64} : !dm.tensor<[u=4, i=8], f32>, !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.contract %b, %x {scale = 0.5 : f64} : !dm.tensor<[u=4, i=8], f32>, !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %0, %1 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// Reading the shared tensor at different positions is not a group.

// CHECK-LABEL: func.func @different_positions
// CHECK-NOT: dm.stack
// CHECK: dm.contract
// CHECK: dm.contract
// CHECK-NOT: dm.unstack
func.func @different_positions(%x: !dm.tensor<[b=2, i=8], f32>, %a: !dm.tensor<[u=4, i=8], f32>, %b: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %0 = dm.contract %a, %x : !dm.tensor<[u=4, i=8], f32>, !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.contract %x, %b : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %0, %1 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// Other operands of different types (here the layout of the weight, then a
// size) are not stacked, even where the results agree.

// CHECK-LABEL: func.func @other_types_differ
// CHECK-NOT: dm.stack
// CHECK: dm.contract
// CHECK: dm.contract
// CHECK: dm.contract
// CHECK-NOT: dm.unstack
func.func @other_types_differ(%x: !dm.tensor<[b=2, i=8], f32>, %a: !dm.tensor<[u=4, i=8], f32>, %b: !dm.tensor<[i=8, u=4], f32>, %c: !dm.tensor<[u=6, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=6], f32>) {
  %0 = dm.contract %x, %a : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.contract %x, %b : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8, u=4], f32> -> !dm.tensor<[b=2, u=4], f32>
  %2 = dm.contract %x, %c : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return %0, %1, %2 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=6], f32>
}

// -----

// Different scales are not stacked.

// CHECK-LABEL: func.func @scales_differ
// CHECK-NOT: dm.stack
// CHECK: dm.contract {{.*}} {scale = 5.000000e-01 : f64}
// CHECK: dm.contract {{.*}} {scale = 2.500000e-01 : f64}
// CHECK-NOT: dm.unstack
func.func @scales_differ(%x: !dm.tensor<[b=2, i=8], f32>, %a: !dm.tensor<[u=4, i=8], f32>, %b: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %0 = dm.contract %x, %a {scale = 0.5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.contract %x, %b {scale = 0.25 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %0, %1 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// A group is only what matches: of three contractions, the two with equal
// scales are stacked and the third is left alone.

// CHECK-LABEL: func.func @partial_group
// CHECK-SAME: (%[[X:[^:]*]]: {{![^>]*>}}, %[[A:[^:]*]]: {{![^>]*>}}, %[[B:[^:]*]]: {{![^>]*>}}, %[[C:[^:]*]]: {{![^>]*>}})
// CHECK: dm.stack %[[A]], %[[C]] {dim = "s"}
// CHECK: %[[U:.*]]:2 = dm.unstack
// CHECK: %[[Y:.*]] = dm.contract %[[X]], %[[B]] {scale = 2.500000e-01 : f64}
// CHECK: return %[[U]]#0, %[[Y]], %[[U]]#1 :
func.func @partial_group(%x: !dm.tensor<[b=2, i=8], f32>, %a: !dm.tensor<[u=4, i=8], f32>, %b: !dm.tensor<[u=4, i=8], f32>, %c: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %0 = dm.contract %x, %a : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.contract %x, %b {scale = 0.25 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %2 = dm.contract %x, %c : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %0, %1, %2 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// A bias add on every slice becomes one bias add of the stacked biases over
// the stacked tensor, before the unstack.

// CHECK-LABEL: func.func @stacked_bias
// CHECK-SAME: (%[[X:[^:]*]]: {{![^>]*>}}, %[[WQ:[^:]*]]: {{![^>]*>}}, %[[WK:[^:]*]]: {{![^>]*>}}, %[[BQ:[^:]*]]: {{![^>]*>}}, %[[BK:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[W:.*]] = dm.stack %[[WQ]], %[[WK]] {dim = "s"}
// CHECK-NEXT: %[[C:.*]] = dm.contract %[[X]], %[[W]] :
// CHECK-NEXT: %[[B:.*]] = dm.stack %[[BQ]], %[[BK]] {dim = "s"} : !dm.tensor<[u=4], f32>, !dm.tensor<[u=4], f32> -> <[s=2, u=4], f32>
// CHECK-NEXT: %[[Y:.*]] = dm.bias_add %[[C]], %[[B]] : <[s=2, b=2, u=4], f32>, <[s=2, u=4], f32>
// CHECK-NEXT: %[[S:.*]]:2 = dm.unstack %[[Y]] {dim = "s"}
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1 :
// CHECK-NOT: dm.bias_add
func.func @stacked_bias(%x: !dm.tensor<[b=2, i=8], f32>, %wq: !dm.tensor<[u=4, i=8], f32>, %wk: !dm.tensor<[u=4, i=8], f32>, %bq: !dm.tensor<[u=4], f32>, %bk: !dm.tensor<[u=4], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %q = dm.contract %x, %wq : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %q1 = dm.bias_add %q, %bq : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  %k = dm.contract %x, %wk : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %k1 = dm.bias_add %k, %bk : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  return %q1, %k1 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// After the bias moves, a dropout on every slice stays per slice: its mask
// depends on each element's index, which stacking would change.

// CHECK-LABEL: func.func @dropout_stays
// CHECK: %[[Y:.*]] = dm.bias_add {{.*}} : <[s=2, b=2, u=4], f32>, <[s=2, u=4], f32>
// CHECK-NEXT: %[[S:.*]]:2 = dm.unstack %[[Y]] {dim = "s"}
// CHECK-NEXT: %[[D0:.*]] = dm.dropout %[[S]]#0 {id = 7 : i64, order = "bu", p = 1.000000e-01 : f64} : <[b=2, u=4], f32>
// CHECK-NEXT: %[[D1:.*]] = dm.dropout %[[S]]#1 {id = 7 : i64, order = "bu", p = 1.000000e-01 : f64} : <[b=2, u=4], f32>
// CHECK-NEXT: return %[[D0]], %[[D1]] :
func.func @dropout_stays(%x: !dm.tensor<[b=2, i=8], f32>, %wq: !dm.tensor<[u=4, i=8], f32>, %wk: !dm.tensor<[u=4, i=8], f32>, %bq: !dm.tensor<[u=4], f32>, %bk: !dm.tensor<[u=4], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %q = dm.contract %x, %wq : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %q1 = dm.bias_add %q, %bq : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  %q2 = dm.dropout %q1 {id = 7 : i64, p = 0.1 : f64, order = "bu"} : !dm.tensor<[b=2, u=4], f32>
  %k = dm.contract %x, %wk : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %k1 = dm.bias_add %k, %bk : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  %k2 = dm.dropout %k1 {id = 7 : i64, p = 0.1 : f64, order = "bu"} : !dm.tensor<[b=2, u=4], f32>
  return %q2, %k2 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// Ops that differ between slices (attributes here) stay per slice, and so
// does an op that only some slices feed.

// CHECK-LABEL: func.func @slices_differ
// CHECK: %[[S:.*]]:2 = dm.unstack
// CHECK-NEXT: dm.scale %[[S]]#0 {factor = 2.000000e+00 : f64}
// CHECK-NEXT: dm.scale %[[S]]#1 {factor = 3.000000e+00 : f64}
func.func @slices_differ(%x: !dm.tensor<[b=2, i=8], f32>, %wq: !dm.tensor<[u=4, i=8], f32>, %wk: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %q = dm.contract %x, %wq : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %k = dm.contract %x, %wk : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %q1 = dm.scale %q {factor = 2.0 : f64} : !dm.tensor<[b=2, u=4], f32>
  %k1 = dm.scale %k {factor = 3.0 : f64} : !dm.tensor<[b=2, u=4], f32>
  return %q1, %k1 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// The stacked contraction replaces the first member, so a member whose other
// operand is computed after it (here %wv, scaled after the Q projection) is
// left out of the group.

// CHECK-LABEL: func.func @other_defined_later
// CHECK-SAME: (%[[X:[^:]*]]: {{![^>]*>}}, %[[WQ:[^:]*]]: {{![^>]*>}}, %[[WK:[^:]*]]: {{![^>]*>}}, %[[WV:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: dm.stack %[[WQ]], %[[WK]] {dim = "s"} : {{.*}} -> <[s=2, u=4, i=8], f32>
// CHECK-NEXT: dm.contract
// CHECK-NEXT: %[[S:.*]]:2 = dm.unstack
// CHECK-NEXT: %[[W:.*]] = dm.scale %[[WV]]
// CHECK-NEXT: %[[V:.*]] = dm.contract %[[X]], %[[W]] :
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1, %[[V]] :
func.func @other_defined_later(%x: !dm.tensor<[b=2, i=8], f32>, %wq: !dm.tensor<[u=4, i=8], f32>, %wk: !dm.tensor<[u=4, i=8], f32>, %wv: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %q = dm.contract %x, %wq : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %w = dm.scale %wv {factor = 2.0 : f64} : !dm.tensor<[u=4, i=8], f32>
  %k = dm.contract %x, %wk : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %v = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %q, %k, %v : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// A decoder stack: the cross-attention K and V of both layers read the one
// encoder memory %m, so all four become one contraction over 4 slices (in
// block order), even though each layer's self-attention sits in between.

// CHECK-LABEL: func.func @decoder
// CHECK-SAME: (%[[M:[^:]*]]: {{![^>]*>}}, %[[X:[^:]*]]: {{![^>]*>}}, %[[Q1:[^:]*]]: {{![^>]*>}}, %[[K1:[^:]*]]: {{![^>]*>}}, %[[V1:[^:]*]]: {{![^>]*>}}, %[[Q2:[^:]*]]: {{![^>]*>}}, %[[K2:[^:]*]]: {{![^>]*>}}, %[[V2:[^:]*]]: {{![^>]*>}})
// CHECK-NOT: dm.unstack
// CHECK: %[[W:.*]] = dm.stack %[[K1]], %[[V1]], %[[K2]], %[[V2]] {dim = "s"} : {{.*}} -> <[s=4, u=4, i=8], f32>
// CHECK-NEXT: %[[C:.*]] = dm.contract %[[M]], %[[W]] : <[b=2, i=8], f32>, <[s=4, u=4, i=8], f32> -> <[s=4, b=2, u=4], f32>
// CHECK-NEXT: %[[S:.*]]:4 = dm.unstack %[[C]] {dim = "s"}
// CHECK-NOT: dm.unstack
// CHECK-NOT: dm.contract %[[M]]
// CHECK: %[[H2:.*]] = dm.contract {{.*}}, %[[Q2]] :
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1, %[[S]]#2, %[[S]]#3, %[[H2]] :
func.func @decoder(%m: !dm.tensor<[b=2, i=8], f32>, %x: !dm.tensor<[b=2, i=8], f32>,
                   %q1: !dm.tensor<[o=8, i=8], f32>, %k1: !dm.tensor<[u=4, i=8], f32>, %v1: !dm.tensor<[u=4, i=8], f32>,
                   %q2: !dm.tensor<[o=8, i=8], f32>, %k2: !dm.tensor<[u=4, i=8], f32>, %v2: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, o=8], f32>) {
  // Layer 1: self-attention stand-in, then cross K and V of the memory.
  %h1 = dm.contract %x, %q1 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[o=8, i=8], f32> -> !dm.tensor<[b=2, o=8], f32>
  %ck1 = dm.contract %m, %k1 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %cv1 = dm.contract %m, %v1 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  // Layer 2 reads layer 1's output.
  %x2 = dm.rename %h1 {from = "o", to = "i"} : !dm.tensor<[b=2, o=8], f32> -> !dm.tensor<[b=2, i=8], f32>
  %h2 = dm.contract %x2, %q2 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[o=8, i=8], f32> -> !dm.tensor<[b=2, o=8], f32>
  %ck2 = dm.contract %m, %k2 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %cv2 = dm.contract %m, %v2 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  return %ck1, %cv1, %ck2, %cv2, %h2 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, o=8], f32>
}

// -----

// The slices' users already use the stack letter: they stay per slice (the
// stacked contraction itself is fine).
// CHECK-LABEL: func.func @stack_letter_taken_downstream
// CHECK: dm.contract %{{.*}}, %{{.*}} : <[b=2, i=8], f32>, <[s=2, u=4, i=8], f32> -> <[s=2, b=2, u=4], f32>
// CHECK: dm.unstack
// CHECK-COUNT-2: dm.contract %{{.*}}, %{{.*}} : <[b=2, u=4], f32>, <[s=2, u=4], f32> -> <[b=2, s=2], f32>
// CHECK-NOT: dm.stack
func.func @stack_letter_taken_downstream(%x: !dm.tensor<[b=2, i=8], f32>, %wq: !dm.tensor<[u=4, i=8], f32>, %wk: !dm.tensor<[u=4, i=8], f32>, %a: !dm.tensor<[s=2, u=4], f32>, %c: !dm.tensor<[s=2, u=4], f32>) -> (!dm.tensor<[b=2, s=2], f32>, !dm.tensor<[b=2, s=2], f32>) {
  %q = dm.contract %x, %wq : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %k = dm.contract %x, %wk : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %q1 = dm.contract %q, %a : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[s=2, u=4], f32> -> !dm.tensor<[b=2, s=2], f32>
  %k1 = dm.contract %k, %c : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[s=2, u=4], f32> -> !dm.tensor<[b=2, s=2], f32>
  return %q1, %k1 : !dm.tensor<[b=2, s=2], f32>, !dm.tensor<[b=2, s=2], f32>
}
