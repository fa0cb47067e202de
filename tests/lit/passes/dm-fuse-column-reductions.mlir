// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-fuse,dm-fuse-column-reductions))' | FileCheck %s
// The merged IR parses and verifies again.
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-fuse,dm-fuse-column-reductions))' | dmc-opt --split-input-file --verify-each | FileCheck %s

// dm-fuse-column-reductions: a kernel of column sums (every reduction over
// the dims a row kernel keeps, results only leaving the kernel) joins the
// row kernel of the same space that reads the same tensors.

// Layer-norm backward: the input gradient's rows (reduced over i) and the
// parameter gradients (summed over b) read dy, x, mean and rstd: one kernel,
// the row kernel's results first.

// CHECK-LABEL: func.func @layernorm_backward
// CHECK-SAME: (%[[DY:[^:]*]]: {{![^>]*>}}, %[[X:[^:]*]]: {{![^>]*>}}, %[[M:[^:]*]]: {{![^>]*>}}, %[[R:[^:]*]]: {{![^>]*>}}, %[[G:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[K:.*]]:3 = dm.kernel "layernorm_dx_layernorm_dparams"(%[[DY]], %[[X]], %[[M]], %[[R]], %[[G]])
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: %[[DX:.*]] = dm.layernorm_grad_input
// CHECK-NEXT: %[[DG:.*]], %[[DB:.*]] = dm.layernorm_grad_params
// CHECK-NEXT: dm.yield %[[DX]], %[[DG]], %[[DB]] :
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]#0, %[[K]]#1, %[[K]]#2 :
func.func @layernorm_backward(%dy: !dm.tensor<[b=2, i=8], bf16>, %x: !dm.tensor<[b=2, i=8], bf16>, %mean: !dm.tensor<[b=2], f32>, %rstd: !dm.tensor<[b=2], f32>, %g: !dm.tensor<[i=8], bf16>)
    -> (!dm.tensor<[b=2, i=8], bf16>, !dm.tensor<[i=8], bf16>, !dm.tensor<[i=8], bf16>) {
  %dx = dm.layernorm_grad_input %dy, %x, %mean, %rstd, %g {dims = "i"} : !dm.tensor<[b=2, i=8], bf16>, !dm.tensor<[b=2], f32>, !dm.tensor<[i=8], bf16>
  %dg, %db = dm.layernorm_grad_params %dy, %x, %mean, %rstd : !dm.tensor<[b=2, i=8], bf16>, !dm.tensor<[b=2], f32> -> !dm.tensor<[i=8], bf16>
  return %dx, %dg, %db : !dm.tensor<[b=2, i=8], bf16>, !dm.tensor<[i=8], bf16>, !dm.tensor<[i=8], bf16>
}

// -----

// A column sum over a value the row kernel computes (its softmax output):
// the sum reads the row kernel's result inside the merged kernel.

// CHECK-LABEL: func.func @sum_of_row_result
// CHECK-NEXT: %[[K:.*]]:2 = dm.kernel "softmax_reduce_sum"
// CHECK: %[[P:.*]] = dm.softmax
// CHECK-NEXT: %[[S:.*]] = dm.reduce_sum %[[P]]
// CHECK-NEXT: dm.yield %[[P]], %[[S]] :
// CHECK: return %[[K]]#0, %[[K]]#1 :
func.func @sum_of_row_result(%s: !dm.tensor<[j=4, k=8], f32>) -> (!dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8], f32>) {
  %p = dm.softmax %s {dim = "k"} : !dm.tensor<[j=4, k=8], f32>
  %c = dm.reduce_sum %p : !dm.tensor<[j=4, k=8], f32> -> !dm.tensor<[k=8], f32>
  return %p, %c : !dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8], f32>
}

// -----

// Near-miss: the sum runs over b only, not over every dim the rows keep
// (b and j): the sets do not partition the space, two kernels stay.

// CHECK-LABEL: func.func @partial_column
// CHECK: dm.kernel "softmax"
// CHECK: dm.kernel "reduce_sum"
func.func @partial_column(%s: !dm.tensor<[b=2, j=4, k=8], f32>) -> (!dm.tensor<[b=2, j=4, k=8], f32>, !dm.tensor<[j=4, k=8], f32>) {
  %p = dm.softmax %s {dim = "k"} : !dm.tensor<[b=2, j=4, k=8], f32>
  %c = dm.reduce_sum %s : !dm.tensor<[b=2, j=4, k=8], f32> -> !dm.tensor<[j=4, k=8], f32>
  return %p, %c : !dm.tensor<[b=2, j=4, k=8], f32>, !dm.tensor<[j=4, k=8], f32>
}

// -----

// Near-miss: the sum also reads a tensor computed from the row kernel's
// result (two contractions later): merged at the sum's position, the
// softmax would come after the contraction that reads it. Two kernels stay.

// CHECK-LABEL: func.func @sum_after_rows
// CHECK: dm.kernel "softmax"
// CHECK: dm.contract
// CHECK: dm.contract
// CHECK: dm.kernel "add_reduce_sum"
func.func @sum_after_rows(%s: !dm.tensor<[j=4, k=8], f32>, %v: !dm.tensor<[k=8, n=2], f32>, %w: !dm.tensor<[n=2, k=8], f32>)
    -> (!dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8], f32>) {
  %p = dm.softmax %s {dim = "k"} : !dm.tensor<[j=4, k=8], f32>
  %t = dm.contract %p, %v : !dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8, n=2], f32> -> !dm.tensor<[j=4, n=2], f32>
  %u = dm.contract %t, %w : !dm.tensor<[j=4, n=2], f32>, !dm.tensor<[n=2, k=8], f32> -> !dm.tensor<[j=4, k=8], f32>
  %a = dm.add %s, %u : !dm.tensor<[j=4, k=8], f32>
  %c = dm.reduce_sum %a : !dm.tensor<[j=4, k=8], f32> -> !dm.tensor<[k=8], f32>
  return %p, %c : !dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8], f32>
}

// -----

// Near-miss: the sum feeds a bias add over the same space: dm-fuse already
// keeps them in one kernel with the sum over its rows (j), not final, so no
// column kernel is left; the softmax over k stays apart.

// CHECK-LABEL: func.func @row_reads_sum
// CHECK: dm.kernel "reduce_sum_bias"
// CHECK: dm.kernel "softmax"
func.func @row_reads_sum(%s: !dm.tensor<[j=4, k=8], f32>) -> !dm.tensor<[j=4, k=8], f32> {
  %c = dm.reduce_sum %s : !dm.tensor<[j=4, k=8], f32> -> !dm.tensor<[k=8], f32>
  %b = dm.bias_add %s, %c : !dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8], f32>
  %p = dm.softmax %b {dim = "k"} : !dm.tensor<[j=4, k=8], f32>
  return %p : !dm.tensor<[j=4, k=8], f32>
}

// -----

// Near-miss: the summed tensor is also an operand of a contraction that
// could produce the sum as its bias-gradient epilogue (dm.epilogue "bgrad"):
// the sum stays in its own kernel for dm-gemm-epilogues.

// CHECK-LABEL: func.func @bias_gradient
// CHECK: dm.kernel "softmax"
// CHECK: dm.kernel "reduce_sum"
// CHECK: dm.contract {{.*}}dm.epilogue = ["bgrad"]
func.func @bias_gradient(%s: !dm.tensor<[j=4, k=8], f32>, %g: !dm.tensor<[j=4, n=2], f32>)
    -> (!dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8], f32>, !dm.tensor<[k=8, n=2], f32>) {
  %p = dm.softmax %s {dim = "k"} : !dm.tensor<[j=4, k=8], f32>
  %c = dm.reduce_sum %s : !dm.tensor<[j=4, k=8], f32> -> !dm.tensor<[k=8], f32>
  %d = dm.contract %s, %g : !dm.tensor<[j=4, k=8], f32>, !dm.tensor<[j=4, n=2], f32> -> !dm.tensor<[k=8, n=2], f32>
  return %p, %c, %d : !dm.tensor<[j=4, k=8], f32>, !dm.tensor<[k=8], f32>, !dm.tensor<[k=8, n=2], f32>
}
