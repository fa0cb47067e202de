// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-autodiff))' | FileCheck %s

// dm-autodiff appends the backward of each forward op (its gradient rule, in
// reverse order), one `d<result>` grad_output argument per result and one
// `<arg>.grad` grad result per float argument. Error cases are in
// dm-autodiff-errors.mlir.

// dA and dB of a contraction are contractions of the upstream gradient with
// the other operand, with the forward's scale. Forward op results read by the
// backward go through dm.save; block arguments are read directly.

// CHECK-LABEL: func.func @contract
// CHECK-SAME: (%[[X:[^:]*]]: !dm.tensor<[b=2, i=8], f32> {dm.name = "x", dm.role = "input"},
// CHECK-SAME: %[[W:[^:]*]]: !dm.tensor<[u=4, i=8], f32> {dm.name = "w", dm.role = "param"},
// CHECK-SAME: %[[V:[^:]*]]: !dm.tensor<[o=3, u=4], f32> {dm.name = "v", dm.role = "param"},
// CHECK-SAME: %[[DY:[^:]*]]: !dm.tensor<[b=2, o=3], f32> {dm.name = "dy", dm.role = "grad_output"})
// CHECK-SAME: -> (!dm.tensor<[b=2, o=3], f32> {dm.name = "y", dm.role = "output"},
// CHECK-SAME: !dm.tensor<[b=2, i=8], f32> {dm.name = "x.grad", dm.role = "grad"},
// CHECK-SAME: !dm.tensor<[u=4, i=8], f32> {dm.name = "w.grad", dm.role = "grad"},
// CHECK-SAME: !dm.tensor<[o=3, u=4], f32> {dm.name = "v.grad", dm.role = "grad"})
// CHECK-SAME: attributes {dm.training}
// CHECK-NEXT: %[[H:.*]] = dm.contract %[[X]], %[[W]] {scale = 5.000000e-01 : f64} : <[b=2, i=8], f32>, <[u=4, i=8], f32> -> <[b=2, u=4], f32>
// CHECK-NEXT: %[[HS:.*]] = dm.save %[[H]] : <[b=2, u=4], f32>
// CHECK-NEXT: %[[Y:.*]] = dm.contract %[[H]], %[[V]] : <[b=2, u=4], f32>, <[o=3, u=4], f32> -> <[b=2, o=3], f32>
// CHECK-NEXT: %[[DH:.*]] = dm.contract %[[DY]], %[[V]] : <[b=2, o=3], f32>, <[o=3, u=4], f32> -> <[b=2, u=4], f32>
// CHECK-NEXT: %[[DV:.*]] = dm.contract %[[HS]], %[[DY]] : <[b=2, u=4], f32>, <[b=2, o=3], f32> -> <[o=3, u=4], f32>
// CHECK-NEXT: %[[DX:.*]] = dm.contract %[[DH]], %[[W]] {scale = 5.000000e-01 : f64} : <[b=2, u=4], f32>, <[u=4, i=8], f32> -> <[b=2, i=8], f32>
// CHECK-NEXT: %[[DW:.*]] = dm.contract %[[X]], %[[DH]] {scale = 5.000000e-01 : f64} : <[b=2, i=8], f32>, <[b=2, u=4], f32> -> <[u=4, i=8], f32>
// CHECK-NEXT: return %[[Y]], %[[DX]], %[[DW]], %[[DV]] :
func.func @contract(%x: !dm.tensor<[b=2, i=8], f32> {dm.name = "x", dm.role = "input"},
                    %w: !dm.tensor<[u=4, i=8], f32> {dm.name = "w", dm.role = "param"},
                    %v: !dm.tensor<[o=3, u=4], f32> {dm.name = "v", dm.role = "param"})
    -> (!dm.tensor<[b=2, o=3], f32> {dm.name = "y", dm.role = "output"}) {
  %h = dm.contract %x, %w {scale = 0.5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4], f32>
  %y = dm.contract %h, %v : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[o=3, u=4], f32> -> !dm.tensor<[b=2, o=3], f32>
  return %y : !dm.tensor<[b=2, o=3], f32>
}

// -----

// A value with two uses gets the sum of both gradients.

// CHECK-LABEL: func.func @two_uses
// CHECK-SAME: (%[[X:[^:]*]]: {{.*}}, %[[DY:[^:]*]]: !dm.tensor<[i=8], f32> {dm.name = "dy", dm.role = "grad_output"})
// CHECK: %[[S:.*]] = dm.scale %[[X]] {factor = 3.000000e+00 : f64}
// CHECK: %[[Y:.*]] = dm.add %[[S]], %[[X]]
// CHECK: %[[DS:.*]] = dm.scale %[[DY]] {factor = 3.000000e+00 : f64} : <[i=8], f32>
// CHECK: %[[DX:.*]] = dm.add %[[DY]], %[[DS]] : <[i=8], f32>
// CHECK: return %[[Y]], %[[DX]] :
func.func @two_uses(%x: !dm.tensor<[i=8], f32> {dm.name = "x", dm.role = "input"})
    -> (!dm.tensor<[i=8], f32> {dm.name = "y", dm.role = "output"}) {
  %0 = dm.scale %x {factor = 3.0 : f64} : !dm.tensor<[i=8], f32>
  %1 = dm.add %0, %x : !dm.tensor<[i=8], f32>
  return %1 : !dm.tensor<[i=8], f32>
}

// -----

// Dropout's backward is a dropout with the same id and p: the mask is
// regenerated from the Philox counters, nothing is saved.

// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[DY:[^:]*]]: !dm.tensor<[b=2, i=8], bf16> {dm.name = "dy", dm.role = "grad_output"}
// CHECK-NOT: dm.save
// CHECK: dm.dropout %{{.*}} {id = 7 : i64, order = "{{[a-z]+}}", p = 2.500000e-01 : f64}
// CHECK-NEXT: %[[Y:.*]] = dm.dropout %{{.*}} {id = 9 : i64, order = "{{[a-z]+}}", p = 5.000000e-01 : f64}
// CHECK-NEXT: %[[D1:.*]] = dm.dropout %[[DY]] {id = 9 : i64, order = "bi", p = 5.000000e-01 : f64} : <[b=2, i=8], bf16>
// CHECK-NEXT: %[[D0:.*]] = dm.dropout %[[D1]] {id = 7 : i64, order = "bi", p = 2.500000e-01 : f64} : <[b=2, i=8], bf16>
// CHECK-NEXT: return %[[Y]], %[[D0]] :
func.func @dropout(%x: !dm.tensor<[b=2, i=8], bf16> {dm.name = "x", dm.role = "input"})
    -> (!dm.tensor<[b=2, i=8], bf16> {dm.name = "y", dm.role = "output"}) {
  %0 = dm.dropout %x {p = 0.25 : f64, id = 7 : i64, order = "bi"} : !dm.tensor<[b=2, i=8], bf16>
  %1 = dm.dropout %0 {p = 0.5 : f64, id = 9 : i64, order = "bi"} : !dm.tensor<[b=2, i=8], bf16>
  return %1 : !dm.tensor<[b=2, i=8], bf16>
}

// -----

// Softmax's backward reads the saved softmax output; the causal mask's
// backward is the same mask filling 0 instead of -inf.

// CHECK-LABEL: func.func @softmax_causal
// CHECK-SAME: %[[DP:[^:]*]]: !dm.tensor<[j=4, k=4], f32> {dm.name = "dp", dm.role = "grad_output"}
// CHECK-SAME: {dm.name = "s.grad", dm.role = "grad"}
// CHECK-NEXT: %[[M:.*]] = dm.causal_mask %{{.*}} {fill = 0xFFF0000000000000 : f64, key = "k", query = "j"}
// CHECK-NEXT: %[[P:.*]] = dm.softmax %[[M]] {dim = "k"}
// CHECK-NEXT: %[[PS:.*]] = dm.save %[[P]] : <[j=4, k=4], f32>
// CHECK-NEXT: %[[DM:.*]] = dm.softmax_grad %[[PS]], %[[DP]] {dim = "k"} : <[j=4, k=4], f32>
// CHECK-NEXT: %[[DS:.*]] = dm.causal_mask %[[DM]] {fill = 0.000000e+00 : f64, key = "k", query = "j"} : <[j=4, k=4], f32>
// CHECK-NEXT: return %[[P]], %[[DS]] :
func.func @softmax_causal(%s: !dm.tensor<[j=4, k=4], f32> {dm.name = "s", dm.role = "input"})
    -> (!dm.tensor<[j=4, k=4], f32> {dm.name = "p", dm.role = "output"}) {
  %0 = dm.causal_mask %s {query = "j", key = "k", fill = 0xFFF0000000000000 : f64} : !dm.tensor<[j=4, k=4], f32>
  %1 = dm.softmax %0 {dim = "k"} : !dm.tensor<[j=4, k=4], f32>
  return %1 : !dm.tensor<[j=4, k=4], f32>
}

// -----

// Layernorm's backward: layernorm_grad_input and layernorm_grad_params, both
// reading the saved mean and rstd.

// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:[^:]*]]: {{.*}}, %[[G:[^:]*]]: {{.*}}, %[[B:[^:]*]]: {{.*}}, %[[DY:[^:]*]]: !dm.tensor<[b=2, i=8], bf16> {dm.name = "dy", dm.role = "grad_output"})
// CHECK-SAME: {dm.name = "x.grad", dm.role = "grad"}, !dm.tensor<[i=8], bf16> {dm.name = "ln.gamma.grad", dm.role = "grad"}, !dm.tensor<[i=8], bf16> {dm.name = "ln.beta.grad", dm.role = "grad"})
// CHECK-NEXT: %[[Y:.*]], %[[MEAN:.*]], %[[RSTD:.*]] = dm.layernorm %[[X]], %[[G]], %[[B]] {dims = "i", eps = 1.000000e-05 : f64}
// CHECK-DAG: %[[RS:.*]] = dm.save %[[RSTD]] : <[b=2], f32>
// CHECK-DAG: %[[MS:.*]] = dm.save %[[MEAN]] : <[b=2], f32>
// CHECK: %[[DX:.*]] = dm.layernorm_grad_input %[[DY]], %[[X]], %[[MS]], %[[RS]], %[[G]] {dims = "i"} : <[b=2, i=8], bf16>, <[b=2], f32>, <[i=8], bf16>
// CHECK-NEXT: %[[DG:.*]], %[[DB:.*]] = dm.layernorm_grad_params %[[DY]], %[[X]], %[[MS]], %[[RS]] : <[b=2, i=8], bf16>, <[b=2], f32> -> <[i=8], bf16>
// CHECK-NEXT: return %[[Y]], %[[DX]], %[[DG]], %[[DB]] :
func.func @layernorm(%x: !dm.tensor<[b=2, i=8], bf16> {dm.name = "x", dm.role = "input"},
                     %g: !dm.tensor<[i=8], bf16> {dm.name = "ln.gamma", dm.role = "param"},
                     %be: !dm.tensor<[i=8], bf16> {dm.name = "ln.beta", dm.role = "param"})
    -> (!dm.tensor<[b=2, i=8], bf16> {dm.name = "y", dm.role = "output"}) {
  %y, %mean, %rstd = dm.layernorm %x, %g, %be {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], bf16>, !dm.tensor<[i=8], bf16> -> !dm.tensor<[b=2], f32>
  return %y : !dm.tensor<[b=2, i=8], bf16>
}

// -----

// bias_add passes the gradient through to x and sums it over the bias's
// missing dimensions for the bias.

// CHECK-LABEL: func.func @bias_add
// CHECK-SAME: %[[DY:[^:]*]]: !dm.tensor<[b=2, u=4], f32> {dm.name = "dy", dm.role = "grad_output"}
// CHECK-NEXT: %[[Y:.*]] = dm.bias_add
// CHECK-NEXT: %[[DB:.*]] = dm.reduce_sum %[[DY]] : <[b=2, u=4], f32> -> <[u=4], f32>
// CHECK-NEXT: return %[[Y]], %[[DY]], %[[DB]] :
func.func @bias_add(%x: !dm.tensor<[b=2, u=4], f32> {dm.name = "x", dm.role = "input"},
                    %bias: !dm.tensor<[u=4], f32> {dm.name = "b1", dm.role = "param"})
    -> (!dm.tensor<[b=2, u=4], f32> {dm.name = "y", dm.role = "output"}) {
  %0 = dm.bias_add %x, %bias : !dm.tensor<[b=2, u=4], f32>, !dm.tensor<[u=4], f32>
  return %0 : !dm.tensor<[b=2, u=4], f32>
}

// -----

// Layout ops invert: rename back, transpose back, unstack a stack. Several
// results each get their own grad_output argument.

// CHECK-LABEL: func.func @layout
// CHECK-SAME: %[[DQK:[^:]*]]: !dm.tensor<[p=4, s=2, h=2], f32> {dm.name = "dqk", dm.role = "grad_output"}
// CHECK-SAME: %[[DXK:[^:]*]]: !dm.tensor<[b=2, k=3], f32> {dm.name = "dxk", dm.role = "grad_output"}
// CHECK-SAME: {dm.name = "qk", dm.role = "output"}, !dm.tensor<[b=2, k=3], f32> {dm.name = "xk", dm.role = "output"}
// CHECK-SAME: {dm.name = "q.grad", dm.role = "grad"}, !dm.tensor<[h=2, p=4], f32> {dm.name = "k.grad", dm.role = "grad"}, !dm.tensor<[b=2, j=3], f32> {dm.name = "x.grad", dm.role = "grad"}
// CHECK: %[[DX:.*]] = dm.rename %[[DXK]] {from = "k", to = "j"} : <[b=2, k=3], f32> -> <[b=2, j=3], f32>
// CHECK-NEXT: %[[DT:.*]] = dm.transpose %[[DQK]] : <[p=4, s=2, h=2], f32> -> <[s=2, h=2, p=4], f32>
// CHECK-NEXT: %[[DS:.*]]:2 = dm.unstack %[[DT]] {dim = "s"} : <[s=2, h=2, p=4], f32> -> !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32>
// CHECK-NEXT: return %{{.*}}, %{{.*}}, %[[DS]]#0, %[[DS]]#1, %[[DX]] :
func.func @layout(%q: !dm.tensor<[h=2, p=4], f32> {dm.name = "q", dm.role = "input"},
                  %k: !dm.tensor<[h=2, p=4], f32> {dm.name = "k", dm.role = "input"},
                  %x: !dm.tensor<[b=2, j=3], f32> {dm.name = "x", dm.role = "input"})
    -> (!dm.tensor<[p=4, s=2, h=2], f32> {dm.name = "qk", dm.role = "output"},
        !dm.tensor<[b=2, k=3], f32> {dm.name = "xk", dm.role = "output"}) {
  %0 = dm.stack %q, %k {dim = "s"} : !dm.tensor<[h=2, p=4], f32>, !dm.tensor<[h=2, p=4], f32> -> !dm.tensor<[s=2, h=2, p=4], f32>
  %1 = dm.transpose %0 : !dm.tensor<[s=2, h=2, p=4], f32> -> !dm.tensor<[p=4, s=2, h=2], f32>
  %2 = dm.rename %x {from = "j", to = "k"} : !dm.tensor<[b=2, j=3], f32> -> !dm.tensor<[b=2, k=3], f32>
  return %1, %2 : !dm.tensor<[p=4, s=2, h=2], f32>, !dm.tensor<[b=2, k=3], f32>
}

// -----

// Integer arguments (key padding lengths) get no gradient; a result without
// dm.name is called result<N>, its upstream gradient d result<N>.

// CHECK-LABEL: func.func @key_padding
// CHECK-SAME: (%[[S:[^:]*]]: {{.*}}, %[[L:[^:]*]]: !dm.tensor<[b=2], i32> {dm.name = "lengths", dm.role = "input"},
// CHECK-SAME: %[[D:[^:]*]]: !dm.tensor<[b=2, k=4], f32> {dm.name = "dresult0", dm.role = "grad_output"})
// CHECK-SAME: -> (!dm.tensor<[b=2, k=4], f32> {dm.name = "result0", dm.role = "output"}, !dm.tensor<[b=2, k=4], f32> {dm.name = "s.grad", dm.role = "grad"})
// CHECK-NEXT: %[[Y:.*]] = dm.key_padding_mask %[[S]], %[[L]] {fill = 0xFFF0000000000000 : f64, key = "k"}
// CHECK-NEXT: %[[DS:.*]] = dm.key_padding_mask %[[D]], %[[L]] {fill = 0.000000e+00 : f64, key = "k"}
// CHECK-NEXT: return %[[Y]], %[[DS]] :
func.func @key_padding(%s: !dm.tensor<[b=2, k=4], f32> {dm.name = "s", dm.role = "input"},
                       %len: !dm.tensor<[b=2], i32> {dm.name = "lengths", dm.role = "input"})
    -> !dm.tensor<[b=2, k=4], f32> {
  %0 = dm.key_padding_mask %s, %len {key = "k", fill = 0xFFF0000000000000 : f64} : !dm.tensor<[b=2, k=4], f32>, !dm.tensor<[b=2], i32>
  return %0 : !dm.tensor<[b=2, k=4], f32>
}
