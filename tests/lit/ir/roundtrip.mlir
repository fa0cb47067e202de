// RUN: dmc-opt %s | dmc-opt | FileCheck %s
// RUN: dmc-opt %s --mlir-print-op-generic | dmc-opt | FileCheck %s

// Every op of the dm dialect and the !dm.tensor type print in their custom
// form and parse back to the same IR, from the custom and the generic form.

// CHECK-LABEL: func.func @tensor_types
// CHECK-SAME: !dm.tensor<[b=8, j=512, i=1024], bf16>
// CHECK-SAME: !dm.tensor<[h=16, p=64], f16>
// CHECK-SAME: !dm.tensor<[i=1024], f32>
// CHECK-SAME: !dm.tensor<[b=8], i32>
// CHECK-SAME: !dm.tensor<[], f32>
// CHECK-SAME: !dm.tensor<[B=2, z=1], f32>
// CHECK-SAME: -> !dm.tensor<[b=8, j=512, i=1024], bf16>
func.func @tensor_types(%a: !dm.tensor<[b=8, j=512, i=1024], bf16>,
                        %b: !dm.tensor<[h=16, p=64], f16>,
                        %c: !dm.tensor<[i=1024], f32>,
                        %d: !dm.tensor<[b=8], i32>,
                        %e: !dm.tensor<[], f32>,
                        %f: !dm.tensor<[ B = 2 ,z=1 ], f32>) -> !dm.tensor<[b=8, j=512, i=1024], bf16> {
  return %a : !dm.tensor<[b=8, j=512, i=1024], bf16>
}

// CHECK-LABEL: func.func @contract
// CHECK-SAME: (%[[X:.*]]: !dm.tensor<[b=2, j=4, i=8], f32>, %[[W:.*]]: !dm.tensor<[u=16, i=8], f32>)
// CHECK: %[[Y:.*]] = dm.contract %[[X]], %[[W]] {scale = 1.250000e-01 : f64} : <[b=2, j=4, i=8], f32>, <[u=16, i=8], f32> -> <[b=2, j=4, u=16], f32>
// The default scale (1.0) is not printed.
// CHECK: dm.contract %[[X]], %[[W]] : <[b=2, j=4, i=8], f32>, <[u=16, i=8], f32> -> <[u=16, b=2, j=4], f32>
func.func @contract(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=16, i=8], f32>) {
  %0 = dm.contract %x, %w {scale = 0.125 : f64} : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=16, i=8], f32> -> !dm.tensor<[b=2, j=4, u=16], f32>
  %1 = dm.contract %x, %w {scale = 1.0 : f64} : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=16, i=8], f32> -> !dm.tensor<[u=16, b=2, j=4], f32>
  return
}

// bf16 operands, an f32 result (an unrounded sum, as fused attention's Drow).
// CHECK-LABEL: func.func @contract_f32_result
// CHECK: dm.contract {{.*}} : <[b=2, j=4, p=8], bf16>, <[b=2, j=4, p=8], bf16> -> <[b=2, j=4], f32>
func.func @contract_f32_result(%x: !dm.tensor<[b=2, j=4, p=8], bf16>, %y: !dm.tensor<[b=2, j=4, p=8], bf16>) {
  %0 = dm.contract %x, %y : !dm.tensor<[b=2, j=4, p=8], bf16>, !dm.tensor<[b=2, j=4, p=8], bf16> -> !dm.tensor<[b=2, j=4], f32>
  return
}

// CHECK-LABEL: func.func @bias_add
// CHECK: dm.bias_add %{{.*}}, %{{.*}} : <[b=2, j=4, u=16], bf16>, <[u=16], bf16>
func.func @bias_add(%x: !dm.tensor<[b=2, j=4, u=16], bf16>, %bias: !dm.tensor<[u=16], bf16>) {
  %0 = dm.bias_add %x, %bias : !dm.tensor<[b=2, j=4, u=16], bf16>, !dm.tensor<[u=16], bf16>
  return
}

// CHECK-LABEL: func.func @add_scale_save
// CHECK: %[[S:.*]] = dm.add %{{.*}}, %{{.*}} : <[j=4, i=8], f16>
// CHECK: %[[T:.*]] = dm.scale %[[S]] {factor = -2.500000e-01 : f64} : <[j=4, i=8], f16>
// CHECK: dm.save %[[T]] : <[j=4, i=8], f16>
func.func @add_scale_save(%a: !dm.tensor<[j=4, i=8], f16>, %b: !dm.tensor<[j=4, i=8], f16>) {
  %0 = dm.add %a, %b : !dm.tensor<[j=4, i=8], f16>
  %1 = dm.scale %0 {factor = -0.25 : f64} : !dm.tensor<[j=4, i=8], f16>
  %2 = dm.save %1 : !dm.tensor<[j=4, i=8], f16>
  return
}

// CHECK-LABEL: func.func @activations
// CHECK: %[[G:.*]] = dm.activation %{{.*}} {kind = "gelu"} : <[b=2, u=16], f32>
// CHECK: dm.activation %{{.*}} {kind = "gelu_tanh"} : <[b=2, u=16], f32>
// CHECK: dm.activation %{{.*}} {kind = "relu"} : <[b=2, u=16], f32>
// CHECK: dm.activation_grad %{{.*}}, %[[G]] {kind = "gelu"} : <[b=2, u=16], f32>
func.func @activations(%x: !dm.tensor<[b=2, u=16], f32>, %dy: !dm.tensor<[b=2, u=16], f32>) {
  %0 = dm.activation %x {kind = "gelu"} : !dm.tensor<[b=2, u=16], f32>
  %1 = dm.activation %x {kind = "gelu_tanh"} : !dm.tensor<[b=2, u=16], f32>
  %2 = dm.activation %x {kind = "relu"} : !dm.tensor<[b=2, u=16], f32>
  %3 = dm.activation_grad %dy, %0 {kind = "gelu"} : !dm.tensor<[b=2, u=16], f32>
  return
}

// CHECK-LABEL: func.func @dropout
// CHECK: dm.dropout %{{.*}} {id = 4294967295 : i64, order = "bhjk", p = 1.000000e-01 : f64} : <[b=2, h=2, j=4, k=4], bf16>
// CHECK: dm.dropout %{{.*}} {id = 0 : i64, order = "bhjk", p = 0.000000e+00 : f64} : <[b=2, h=2, j=4, k=4], bf16>
func.func @dropout(%x: !dm.tensor<[b=2, h=2, j=4, k=4], bf16>) {
  %0 = dm.dropout %x {p = 0.1 : f64, id = 4294967295 : i64, order = "bhjk"} : !dm.tensor<[b=2, h=2, j=4, k=4], bf16>
  %1 = dm.dropout %x {p = 0.0 : f64, id = 0 : i64, order = "bhjk"} : !dm.tensor<[b=2, h=2, j=4, k=4], bf16>
  return
}

// CHECK-LABEL: func.func @masks
// CHECK-SAME: %[[S:[^:]*]]: !dm.tensor<[b=2, h=2, j=4, k=4], f32>, %[[L:[^:]*]]: !dm.tensor<[b=2], i32>
// CHECK: dm.causal_mask %[[S]] {fill = 0xFFF0000000000000 : f64, key = "k", query = "j"} : <[b=2, h=2, j=4, k=4], f32>
// CHECK: dm.key_padding_mask %[[S]], %[[L]] {fill = 0.000000e+00 : f64, key = "k"} : <[b=2, h=2, j=4, k=4], f32>, <[b=2], i32>
func.func @masks(%s: !dm.tensor<[b=2, h=2, j=4, k=4], f32>, %len: !dm.tensor<[b=2], i32>) {
  %0 = dm.causal_mask %s {query = "j", key = "k", fill = 0xFFF0000000000000 : f64} : !dm.tensor<[b=2, h=2, j=4, k=4], f32>
  %1 = dm.key_padding_mask %s, %len {key = "k", fill = 0.0 : f64} : !dm.tensor<[b=2, h=2, j=4, k=4], f32>, !dm.tensor<[b=2], i32>
  return
}

// CHECK-LABEL: func.func @softmax
// CHECK: %[[Y:.*]] = dm.softmax %{{.*}} {dim = "k"} : <[b=2, j=4, k=4], f32>
// CHECK: dm.softmax_grad %[[Y]], %{{.*}} {dim = "k"} : <[b=2, j=4, k=4], f32>
func.func @softmax(%x: !dm.tensor<[b=2, j=4, k=4], f32>, %dy: !dm.tensor<[b=2, j=4, k=4], f32>) {
  %0 = dm.softmax %x {dim = "k"} : !dm.tensor<[b=2, j=4, k=4], f32>
  %1 = dm.softmax_grad %0, %dy {dim = "k"} : !dm.tensor<[b=2, j=4, k=4], f32>
  return
}

// CHECK-LABEL: func.func @layernorm
// CHECK: %[[Y:.*]], %[[M:.*]], %[[R:.*]] = dm.layernorm %{{.*}}, %[[G:[^,]*]], %{{.*}} {dims = "i", eps = 9.9999999999999998E-13 : f64} : <[b=2, j=4, i=8], bf16>, <[i=8], bf16> -> <[b=2, j=4], f32>
// CHECK: dm.layernorm_grad_input %{{.*}}, %[[Y]], %[[M]], %[[R]], %[[G]] {dims = "i"} : <[b=2, j=4, i=8], bf16>, <[b=2, j=4], f32>, <[i=8], bf16>
// CHECK: %{{.*}}, %{{.*}} = dm.layernorm_grad_params %{{.*}}, %[[Y]], %[[M]], %[[R]] : <[b=2, j=4, i=8], bf16>, <[b=2, j=4], f32> -> <[i=8], bf16>
func.func @layernorm(%x: !dm.tensor<[b=2, j=4, i=8], bf16>, %gamma: !dm.tensor<[i=8], bf16>,
                     %beta: !dm.tensor<[i=8], bf16>, %dy: !dm.tensor<[b=2, j=4, i=8], bf16>) {
  %y, %mean, %rstd = dm.layernorm %x, %gamma, %beta {dims = "i", eps = 1.0e-12 : f64} : !dm.tensor<[b=2, j=4, i=8], bf16>, !dm.tensor<[i=8], bf16> -> !dm.tensor<[b=2, j=4], f32>
  %dx = dm.layernorm_grad_input %dy, %y, %mean, %rstd, %gamma {dims = "i"} : !dm.tensor<[b=2, j=4, i=8], bf16>, !dm.tensor<[b=2, j=4], f32>, !dm.tensor<[i=8], bf16>
  %dg, %db = dm.layernorm_grad_params %dy, %y, %mean, %rstd : !dm.tensor<[b=2, j=4, i=8], bf16>, !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[i=8], bf16>
  return
}

// CHECK-LABEL: func.func @reduce_broadcast
// CHECK: %[[R:.*]] = dm.reduce_sum %{{.*}} : <[b=2, j=4, i=8], f32> -> <[i=8], f32>
// CHECK: dm.broadcast %[[R]] : <[i=8], f32> -> <[j=4, i=8, b=2], f32>
func.func @reduce_broadcast(%x: !dm.tensor<[b=2, j=4, i=8], f32>) {
  %0 = dm.reduce_sum %x : !dm.tensor<[b=2, j=4, i=8], f32> -> !dm.tensor<[i=8], f32>
  %1 = dm.broadcast %0 : !dm.tensor<[i=8], f32> -> !dm.tensor<[j=4, i=8, b=2], f32>
  return
}

// CHECK-LABEL: func.func @transpose_rename
// CHECK: %[[T:.*]] = dm.transpose %{{.*}} : <[b=2, j=4, i=8], f32> -> <[i=8, b=2, j=4], f32>
// CHECK: dm.rename %[[T]] {from = "j", to = "k"} : <[i=8, b=2, j=4], f32> -> <[i=8, b=2, k=4], f32>
func.func @transpose_rename(%x: !dm.tensor<[b=2, j=4, i=8], f32>) {
  %0 = dm.transpose %x : !dm.tensor<[b=2, j=4, i=8], f32> -> !dm.tensor<[i=8, b=2, j=4], f32>
  %1 = dm.rename %0 {from = "j", to = "k"} : !dm.tensor<[i=8, b=2, j=4], f32> -> !dm.tensor<[i=8, b=2, k=4], f32>
  return
}

// Variadic operand and result types print with their `!dm.` prefix.
// CHECK-LABEL: func.func @stack_unstack
// CHECK-SAME: (%[[A:[^:]*]]: {{.*}}, %[[B:[^:]*]]: {{.*}}, %[[C:[^:]*]]: {{.*}})
// CHECK: %[[S:.*]] = dm.stack %[[A]], %[[B]], %[[C]] {dim = "s"} : !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32> -> <[s=3, h=2, p=4], f32>
// CHECK: %{{.*}}:3 = dm.unstack %[[S]] {dim = "s"} : <[s=3, h=2, p=4], f32> -> !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32>
func.func @stack_unstack(%a: !dm.tensor<[h=2, p=4], f32>, %b: !dm.tensor<[h=2, p=4], f32>, %c: !dm.tensor<[h=2, p=4], f32>) {
  %0 = dm.stack %a, %b, %c {dim = "s"} : !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32> -> !dm.tensor<[s=3, h=2, p=4], f32>
  %1:3 = dm.unstack %0 {dim = "s"} : !dm.tensor<[s=3, h=2, p=4], f32> -> !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32>
  return
}

// Renaming may swap names: j of size 3 becomes k and k of size 5 becomes j.
// CHECK-LABEL: func.func @rename_swap
// CHECK: dm.rename %{{.*}} {from = "jk", to = "kj"} : <[j=3, k=5], f32> -> <[k=3, j=5], f32>
func.func @rename_swap(%x: !dm.tensor<[j=3, k=5], f32>) -> !dm.tensor<[k=3, j=5], f32> {
  %0 = dm.rename %x {from = "jk", to = "kj"} : !dm.tensor<[j=3, k=5], f32> -> !dm.tensor<[k=3, j=5], f32>
  return %0 : !dm.tensor<[k=3, j=5], f32>
}
