// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-fuse))' | FileCheck %s
// The fused IR parses and verifies again (kernel regions, dominance, types).
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-fuse))' | dmc-opt --split-input-file --verify-each | FileCheck %s

// dm-fuse groups the non-contraction ops that can share one loop nest (one
// iteration space; reducing members with one set of outer dims; no path out
// of the group and back) into `dm.kernel` ops named after their members.
// Contractions stay outside and get `dm.epilogue` candidates; views move no
// data and join no kernel.

// Causal mask, softmax and dropout over one [h, j, k] space: one kernel that
// reads the scores once and writes the probabilities once; the contraction
// reads the kernel's output.

// CHECK-LABEL: func.func @mask_softmax_dropout
// CHECK-SAME: (%[[S:[^:]*]]: {{![^>]*>}}, %[[V:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[K:.*]] = dm.kernel "causal_mask_softmax_dropout"(%[[S]]) : (!dm.tensor<[h=2, j=4, k=4], f32>) -> !dm.tensor<[h=2, j=4, k=4], f32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[h=2, j=4, k=4], f32>):
// CHECK-NEXT: %[[M:.*]] = dm.causal_mask %[[A]]
// CHECK-NEXT: %[[P:.*]] = dm.softmax %[[M]] {dim = "k"}
// CHECK-NEXT: %[[D:.*]] = dm.dropout %[[P]] {id = 0 : i64
// CHECK-NEXT: dm.yield %[[D]] : !dm.tensor<[h=2, j=4, k=4], f32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[O:.*]] = dm.contract %[[K]], %[[V]] :
// CHECK-NEXT: return %[[O]]
func.func @mask_softmax_dropout(%s: !dm.tensor<[h=2, j=4, k=4], f32>, %v: !dm.tensor<[h=2, k=4, p=8], f32>) -> !dm.tensor<[h=2, j=4, p=8], f32> {
  %0 = dm.causal_mask %s {query = "j", key = "k", fill = 0xFFF0000000000000 : f64} : !dm.tensor<[h=2, j=4, k=4], f32>
  %1 = dm.softmax %0 {dim = "k"} : !dm.tensor<[h=2, j=4, k=4], f32>
  %2 = dm.dropout %1 {id = 0 : i64, p = 0.1 : f64, order = "hjk"} : !dm.tensor<[h=2, j=4, k=4], f32>
  %3 = dm.contract %2, %v : !dm.tensor<[h=2, j=4, k=4], f32>, !dm.tensor<[h=2, k=4, p=8], f32> -> !dm.tensor<[h=2, j=4, p=8], f32>
  return %3 : !dm.tensor<[h=2, j=4, p=8], f32>
}

// -----

// Bias, dropout, residual add and layernorm: one kernel. Its inputs are the
// outside values in first-use order; its outputs only the results used
// outside it: y and rstd, not mean.

// CHECK-LABEL: func.func @bias_dropout_add_layernorm
// CHECK-SAME: (%[[H:[^:]*]]: {{![^>]*>}}, %[[B:[^:]*]]: {{![^>]*>}}, %[[R:[^:]*]]: {{![^>]*>}}, %[[G:[^:]*]]: {{![^>]*>}}, %[[BETA:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[K:.*]]:2 = dm.kernel "bias_dropout_add_layernorm"(%[[H]], %[[B]], %[[R]], %[[G]], %[[BETA]]) : ({{.*}}) -> (!dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2], f32>) {
// CHECK: %[[Y:[^ ,]*]], %{{[^ ,]*}}, %[[RS:[^ ,]*]] = dm.layernorm
// CHECK-NEXT: dm.yield %[[Y]], %[[RS]] :
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]#0, %[[K]]#1 :
func.func @bias_dropout_add_layernorm(%h: !dm.tensor<[b=2, i=8], f32>, %bias: !dm.tensor<[i=8], f32>, %r: !dm.tensor<[b=2, i=8], f32>, %g: !dm.tensor<[i=8], f32>, %beta: !dm.tensor<[i=8], f32>)
    -> (!dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2], f32>) {
  %0 = dm.bias_add %h, %bias : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32>
  %1 = dm.dropout %0 {id = 1 : i64, p = 0.1 : f64, order = "bi"} : !dm.tensor<[b=2, i=8], f32>
  %2 = dm.add %1, %r : !dm.tensor<[b=2, i=8], f32>
  %y, %m, %rs = dm.layernorm %2, %g, %beta {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2], f32>
  return %y, %rs : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2], f32>
}

// -----

// With mean and rstd unused outside (inference), y is the only output; an
// intermediate also read outside the kernel is an output too.

// CHECK-LABEL: func.func @layernorm_stats_unused
// CHECK-NEXT: %[[K:.*]]:2 = dm.kernel "add_layernorm"({{.*}}) : ({{.*}}) -> (!dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>) {
// CHECK: %[[S:.*]] = dm.add
// CHECK-NEXT: %[[Y:[^ ,]*]], %{{.*}} = dm.layernorm %[[S]]
// CHECK-NEXT: dm.yield %[[S]], %[[Y]] :
// CHECK: return %[[K]]#1, %[[K]]#0 :
func.func @layernorm_stats_unused(%h: !dm.tensor<[b=2, i=8], f32>, %r: !dm.tensor<[b=2, i=8], f32>, %g: !dm.tensor<[i=8], f32>)
    -> (!dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>) {
  %0 = dm.add %h, %r : !dm.tensor<[b=2, i=8], f32>
  %y, %m, %rs = dm.layernorm %0, %g, %g {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2], f32>
  return %y, %0 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>
}

// -----

// Ops over different iteration spaces ([i] and [b, i]) stay apart, though
// one reads the other's result and both read %x.

// CHECK-LABEL: func.func @different_spaces
// CHECK-NEXT: %[[A:.*]] = dm.kernel "scale"
// CHECK: %[[B:.*]] = dm.kernel "bias"(%{{.*}}, %[[A]])
// CHECK: %[[C:.*]] = dm.kernel "bias"(%{{.*}}, %{{.*}})
// CHECK: return %[[B]], %[[C]] :
func.func @different_spaces(%x: !dm.tensor<[i=8], f32>, %z: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[b=3, i=8], f32>)
    -> (!dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=3, i=8], f32>) {
  %0 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
  %1 = dm.bias_add %z, %0 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32>
  // Same names as %1 but b has another size: another space.
  %2 = dm.bias_add %w, %x : !dm.tensor<[b=3, i=8], f32>, !dm.tensor<[i=8], f32>
  return %1, %2 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=3, i=8], f32>
}

// -----

// layernorm_grad_input reduces over i (outer b, j) and layernorm_grad_params
// over b, j (outer i): one space, but no common loop nest, so they stay
// apart although both read dy, x, mean and rstd.

// CHECK-LABEL: func.func @layernorm_grads
// CHECK: dm.kernel "layernorm_dx"
// CHECK-NOT: dm.layernorm_grad_params
// CHECK: dm.yield
// CHECK: dm.kernel "layernorm_dparams"
// CHECK-NOT: dm.layernorm_grad_input
// CHECK: dm.yield
func.func @layernorm_grads(%dy: !dm.tensor<[b=2, j=4, i=8], f32>, %x: !dm.tensor<[b=2, j=4, i=8], f32>, %m: !dm.tensor<[b=2, j=4], f32>, %r: !dm.tensor<[b=2, j=4], f32>, %g: !dm.tensor<[i=8], f32>)
    -> (!dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>) {
  %0 = dm.layernorm_grad_input %dy, %x, %m, %r, %g {dims = "i"} : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[b=2, j=4], f32>, !dm.tensor<[i=8], f32>
  %dg, %db = dm.layernorm_grad_params %dy, %x, %m, %r : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[i=8], f32>
  return %0, %dg, %db : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>
}

// -----

// An elementwise op may join a reduction with either outer dims: the bias
// gradient (reduce_sum over b) takes the dropout that feeds it.

// CHECK-LABEL: func.func @elementwise_joins_reduction
// CHECK-NEXT: dm.kernel "dropout_reduce_sum"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dm.dropout
// CHECK-NEXT: dm.reduce_sum
// CHECK-NEXT: dm.yield
func.func @elementwise_joins_reduction(%dy: !dm.tensor<[b=2, i=8], f32>) -> !dm.tensor<[i=8], f32> {
  %0 = dm.dropout %dy {id = 3 : i64, p = 0.1 : f64, order = "bi"} : !dm.tensor<[b=2, i=8], f32>
  %1 = dm.reduce_sum %0 : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[i=8], f32>
  return %1 : !dm.tensor<[i=8], f32>
}

// -----

// %a -> contraction -> contraction -> %d: fusing %a and %d would make the
// kernel wait for a contraction that waits for the kernel, so they stay in
// two kernels with the contractions between them.

// CHECK-LABEL: func.func @no_cycle_through_contraction
// CHECK-NEXT: %[[A:.*]] = dm.kernel "scale"
// CHECK: %[[C1:.*]] = dm.contract %[[A]],
// CHECK-NEXT: %[[C2:.*]] = dm.contract %[[C1]],
// CHECK-NEXT: %[[D:.*]] = dm.kernel "add"(%[[A]], %[[C2]])
// CHECK-NOT: dm.scale
func.func @no_cycle_through_contraction(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>, %v: !dm.tensor<[i=8, u=4], f32>) -> !dm.tensor<[b=2, i=8], f32> {
  %a = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[b=2, i=8], f32>
  %h = dm.contract %a, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %e = dm.contract %h, %v : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[i=8, u=4], f32> -> !dm.tensor<[b=2, i=8], f32>
  %d = dm.add %a, %e : !dm.tensor<[b=2, i=8], f32>
  return %d : !dm.tensor<[b=2, i=8], f32>
}

// -----

// Siblings reading one tensor share its read: one kernel with both results
// as outputs. Repeated member names are collapsed ("scale", not
// "scale_scale").

// CHECK-LABEL: func.func @siblings
// CHECK-SAME: (%[[X:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[K:.*]]:2 = dm.kernel "scale"(%[[X]]) : (!dm.tensor<[i=8], f32>) -> (!dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[i=8], f32>):
// CHECK-NEXT: %[[P:.*]] = dm.scale %[[A]] {factor = 2.0
// CHECK-NEXT: %[[Q:.*]] = dm.scale %[[A]] {factor = 3.0
// CHECK-NEXT: dm.yield %[[P]], %[[Q]] :
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]#0, %[[K]]#1 :
func.func @siblings(%x: !dm.tensor<[i=8], f32>) -> (!dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>) {
  %0 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
  %1 = dm.scale %x {factor = 3.0 : f64} : !dm.tensor<[i=8], f32>
  return %0, %1 : !dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>
}

// -----

// Views stay outside kernels: a rename splits two scales into two kernels,
// the save and the unstack of stacked parameters remain plain ops.

// CHECK-LABEL: func.func @views
// CHECK-NEXT: %[[A:.*]] = dm.kernel "scale"
// CHECK-NOT: dm.rename
// CHECK: dm.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = dm.rename %[[A]]
// CHECK-NEXT: %[[B:.*]] = dm.kernel "scale"(%[[R]])
// CHECK: dm.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.*]] = dm.save %[[A]]
// CHECK-NEXT: %[[W:.*]] = dm.stack
// CHECK-NEXT: %[[U:.*]]:2 = dm.unstack %[[W]]
// CHECK-NEXT: %[[C:.*]] = dm.kernel "add"(%[[U]]#0, %[[S]])
// CHECK: return %[[B]], %[[C]] :
func.func @views(%x: !dm.tensor<[b=2, j=4], f32>, %p: !dm.tensor<[b=2, j=4], f32>, %q: !dm.tensor<[b=2, j=4], f32>) -> (!dm.tensor<[b=2, k=4], f32>, !dm.tensor<[b=2, j=4], f32>) {
  %0 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[b=2, j=4], f32>
  %1 = dm.rename %0 {from = "j", to = "k"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, k=4], f32>
  %2 = dm.scale %1 {factor = 3.0 : f64} : !dm.tensor<[b=2, k=4], f32>
  %3 = dm.save %0 : !dm.tensor<[b=2, j=4], f32>
  %4 = dm.stack %p, %q {dim = "s"} : !dm.tensor<[b=2, j=4], f32>, !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[s=2, b=2, j=4], f32>
  %5:2 = dm.unstack %4 {dim = "s"} : !dm.tensor<[s=2, b=2, j=4], f32> -> !dm.tensor<[b=2, j=4], f32>, !dm.tensor<[b=2, j=4], f32>
  %6 = dm.add %5#0, %3 : !dm.tensor<[b=2, j=4], f32>
  return %2, %6 : !dm.tensor<[b=2, k=4], f32>, !dm.tensor<[b=2, j=4], f32>
}

// -----

// Fusion reads the iteration space, not the op name: a dm.contract without a
// reduction (an outer product, elementwise) joins the kernel of its consumer.

// CHECK-LABEL: func.func @elementwise_contract
// CHECK-NEXT: dm.kernel "contract_scale"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: dm.contract
// CHECK-NEXT: dm.scale
// CHECK-NEXT: dm.yield
func.func @elementwise_contract(%x: !dm.tensor<[i=8], f32>, %y: !dm.tensor<[j=4], f32>) -> !dm.tensor<[i=8, j=4], f32> {
  %0 = dm.contract %x, %y : !dm.tensor<[i=8], f32>, !dm.tensor<[j=4], f32> -> !dm.tensor<[i=8, j=4], f32>
  %1 = dm.scale %0 {factor = 2.0 : f64} : !dm.tensor<[i=8, j=4], f32>
  return %1 : !dm.tensor<[i=8, j=4], f32>
}

// -----

// Epilogues: a bias over the contraction's private dims, then a tanh GELU
// (cuBLASLt's GELU, with its aux output for the backward). The ops still run
// in a kernel; the tuner picks.

// CHECK-LABEL: func.func @epilogue_bias_gelu_tanh
// CHECK-NEXT: %[[C:.*]] = dm.contract {{.*}} {dm.epilogue = ["bias", "gelu_aux"]}
// CHECK-NEXT: dm.kernel "bias_gelu_tanh"(%[[C]],
func.func @epilogue_bias_gelu_tanh(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>, %c: !dm.tensor<[u=4], f32>) -> !dm.tensor<[b=2, u=4], f32> {
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.bias_add %0, %c : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  %2 = dm.activation %1 {kind = "gelu_tanh"} : !dm.tensor<[b=2, u=4], f32>
  return %2 : !dm.tensor<[b=2, u=4], f32>
}

// -----

// The erf GELU is not cuBLASLt's: the bias alone is a candidate.

// CHECK-LABEL: func.func @epilogue_bias_gelu_erf
// CHECK-NEXT: dm.contract {{.*}} {dm.epilogue = ["bias"]}
// CHECK-NEXT: dm.kernel "bias_gelu"
func.func @epilogue_bias_gelu_erf(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>, %c: !dm.tensor<[u=4], f32>) -> !dm.tensor<[b=2, u=4], f32> {
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.bias_add %0, %c : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  %2 = dm.activation %1 {kind = "gelu"} : !dm.tensor<[b=2, u=4], f32>
  return %2 : !dm.tensor<[b=2, u=4], f32>
}

// -----

// ReLU directly on the contraction: relu_aux, no bias.

// CHECK-LABEL: func.func @epilogue_relu
// CHECK-NEXT: dm.contract {{.*}} {dm.epilogue = ["relu_aux"]}
// CHECK-NEXT: dm.kernel "relu"
func.func @epilogue_relu(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>) -> !dm.tensor<[b=2, u=4], f32> {
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.activation %0 {kind = "relu"} : !dm.tensor<[b=2, u=4], f32>
  return %1 : !dm.tensor<[b=2, u=4], f32>
}

// -----

// An epilogue replaces the result: not when it is also read elsewhere.

// CHECK-LABEL: func.func @epilogue_result_read_twice
// CHECK-NEXT: dm.contract
// CHECK-NOT: dm.epilogue
// CHECK: return
func.func @epilogue_result_read_twice(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>, %c: !dm.tensor<[u=4], f32>) -> (!dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>) {
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %1 = dm.bias_add %0, %c : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  return %1, %0 : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[b=2, u=4], f32>
}

// -----

// Backward: the dX contraction's result is the upstream gradient of a tanh
// GELU gradient (dgelu) and of a ReLU gradient (drelu); the erf GELU
// gradient is no candidate. (The order follows the use list; either is fine.)

// CHECK-LABEL: func.func @epilogue_dgelu_drelu
// CHECK-NEXT: dm.contract {{.*}} {dm.epilogue = [{{"dgelu", "drelu"|"drelu", "dgelu"}}]}
func.func @epilogue_dgelu_drelu(%dy: !dm.tensor<[b=2, u=4], f32>, %w: !dm.tensor<[u=4, i=8], f32>, %x: !dm.tensor<[b=2, i=8], f32>)
    -> (!dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>) {
  %0 = dm.contract %dy, %w : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, i=8], f32>
  %1 = dm.activation_grad %0, %x {kind = "gelu_tanh"} : !dm.tensor<[b=2, i=8], f32>
  %2 = dm.activation_grad %0, %x {kind = "relu"} : !dm.tensor<[b=2, i=8], f32>
  %3 = dm.activation_grad %0, %x {kind = "gelu"} : !dm.tensor<[b=2, i=8], f32>
  return %1, %2, %3 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>
}

// -----

// Only as the upstream gradient (dy), not as the saved input (x), and not
// for the erf GELU alone.

// CHECK-LABEL: func.func @epilogue_not_dact
// CHECK-NEXT: dm.contract
// CHECK-NOT: dm.epilogue
// CHECK: return
func.func @epilogue_not_dact(%dy: !dm.tensor<[b=2, u=4], f32>, %w: !dm.tensor<[u=4, i=8], f32>, %g: !dm.tensor<[b=2, i=8], f32>)
    -> (!dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>) {
  %0 = dm.contract %dy, %w : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, i=8], f32>
  %1 = dm.activation_grad %g, %0 {kind = "relu"} : !dm.tensor<[b=2, i=8], f32>
  %2 = dm.activation_grad %0, %g {kind = "gelu"} : !dm.tensor<[b=2, i=8], f32>
  return %1, %2 : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32>
}

// -----

// Bias gradient: the dW contraction reads dy, and dy is also summed down to
// its private dim u (the bias gradient). A sum to a shared dim is not one.

// CHECK-LABEL: func.func @epilogue_bgrad
// CHECK-NEXT: dm.contract {{.*}} {dm.epilogue = ["bgrad"]} : <[b=2, i=8], f32>, <[b=2, u=4], f32> -> <[u=4, i=8], f32>
// CHECK-NEXT: dm.contract {{.*}} : <[b=2, u=4], f32>, <[u=4, i=8], f32> -> <[b=2, i=8], f32>
// CHECK-NEXT: dm.kernel "reduce_sum"
func.func @epilogue_bgrad(%x: !dm.tensor<[b=2, i=8], f32>, %dy: !dm.tensor<[b=2, u=4], f32>, %w: !dm.tensor<[u=4, i=8], f32>)
    -> (!dm.tensor<[u=4, i=8], f32>, !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4], f32>) {
  %0 = dm.contract %x, %dy : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, u=4], f32> -> !dm.tensor<[u=4, i=8], f32>
  // In dX = dy . w, u is the reduced (shared) dim: no bgrad here.
  %1 = dm.contract %dy, %w : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, i=8], f32>
  %2 = dm.reduce_sum %dy : !dm.tensor<[b=2, u=4], f32> -> !dm.tensor<[u=4], f32>
  return %0, %1, %2 : !dm.tensor<[u=4, i=8], f32>, !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4], f32>
}

// -----

// Two groups that would each be legal alone but together form a cycle once
// both are kernels ({scale, add} and {bias_add, reduce_sum} through %z): the
// planner treats other groups as single nodes and keeps them apart.
// CHECK-LABEL: func.func @group_cycle
// CHECK: dm.kernel "reduce_sum"
// CHECK: dm.kernel "scale_add"
// CHECK: dm.kernel "bias"
func.func @group_cycle(%x: !dm.tensor<[i=4], f32>, %z: !dm.tensor<[i=4, j=8], f32>) -> (!dm.tensor<[i=4, j=8], f32>, !dm.tensor<[i=4], f32>) {
  %a1 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[i=4], f32>
  %b1 = dm.bias_add %z, %a1 : !dm.tensor<[i=4, j=8], f32>, !dm.tensor<[i=4], f32>
  %b2 = dm.reduce_sum %z : !dm.tensor<[i=4, j=8], f32> -> !dm.tensor<[i=4], f32>
  %a2 = dm.add %a1, %b2 : !dm.tensor<[i=4], f32>
  return %b1, %a2 : !dm.tensor<[i=4, j=8], f32>, !dm.tensor<[i=4], f32>
}
