// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues))' | FileCheck %s
// The rewritten IR parses and verifies again.
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues))' | dmc-opt --split-input-file --verify-each | FileCheck %s

// dm-gemm-epilogues folds a bias add of a contraction's result, or a sum of
// an operand down to the dims the result keeps (a bias gradient), into the
// contraction's cuBLASLt call, where the kernel holding it then moves fewer
// bytes.

// The bias add is the kernel's only member: the kernel disappears (384 bytes:
// the product read and the sum written) and its reader reads the contraction.

// CHECK-LABEL: func.func @bias_kernel_disappears
// CHECK-NEXT: %[[C:.*]] = dm.contract %arg0, %arg1 bias %arg2 : !dm.tensor<[u=6], f32> {dm.epilogue_saved = 384 : i64, dm.tensor_names = ["t3"], epilogue = "bias"} : <[b=2, j=4, i=8], f32>, <[u=6, i=8], f32> -> <[b=2, j=4, u=6], f32>
// CHECK-NEXT: return %[[C]]
func.func @bias_kernel_disappears(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %bias: !dm.tensor<[u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y = dm.kernel "bias"(%c, %bias) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[u=6], f32>):
    %s = dm.bias_add %a, %v : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y : !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// The kernel also writes the biased value (saved for the activation's
// gradient): the contraction writes it now (saving its 192 bytes), and the
// kernel keeps the rest, renamed after what is left; tensors keep the names
// they had (t5 stays t5 though t4 is gone).

// CHECK-LABEL: func.func @bias_output_moves
// CHECK-NEXT: %[[C:.*]] = dm.contract %arg0, %arg1 bias %arg2 : !dm.tensor<[u=6], f32> {dm.epilogue_saved = 192 : i64, {{.*}}epilogue = "bias"
// CHECK-NEXT: %[[K:.*]] = dm.kernel "relu"(%[[C]]) {dm.tensor_names = ["t5"]} : (!dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32>
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[b=2, j=4, u=6], f32>):
// CHECK-NEXT: %[[G:.*]] = dm.activation %[[A]]
// CHECK-NEXT: dm.yield %[[G]]
// CHECK: return %[[C]], %[[K]]
func.func @bias_output_moves(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %bias: !dm.tensor<[u=6], f32>) -> (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y:2 = dm.kernel "bias_activation"(%c, %bias) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>) -> (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[u=6], f32>):
    %s = dm.bias_add %a, %v : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>
    %g = dm.activation %s {kind = "relu"} : !dm.tensor<[b=2, j=4, u=6], f32>
    dm.yield %s, %g : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y#0, %y#1 : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// Near miss: the kernel must still read the product to apply its activation,
// and writes only the activation: folding would only move the bias read.

// CHECK-LABEL: func.func @bias_saves_nothing
// CHECK-NEXT: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>, <[u=6, i=8], f32> -> <[b=2, j=4, u=6], f32>
// CHECK-NEXT: dm.kernel "bias_activation"
// CHECK: dm.bias_add
func.func @bias_saves_nothing(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %bias: !dm.tensor<[u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y = dm.kernel "bias_activation"(%c, %bias) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[u=6], f32>):
    %s = dm.bias_add %a, %v : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>
    %g = dm.activation %s {kind = "relu"} : !dm.tensor<[b=2, j=4, u=6], f32>
    dm.yield %g : !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y : !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// Near miss: a bias along the result's outer dims (j) is not a cuBLASLt bias
// (a vector along D's rows, its innermost dims): no fold.

// CHECK-LABEL: func.func @bias_on_outer_dim
// CHECK-NEXT: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>
// CHECK-NEXT: dm.kernel "bias"
func.func @bias_on_outer_dim(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %bias: !dm.tensor<[j=4], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y = dm.kernel "bias"(%c, %bias) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[j=4], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[j=4], f32>):
    %s = dm.bias_add %a, %v : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[j=4], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y : !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// dW = x^T dy and db = sum of dy over (b, j): the reduction's kernel, which
// reads dy only for it, disappears; the contraction also writes db (its
// operand b is dy: bgradb), keeping the name of the sum it replaces (a layer
// result: the bundle names it after the function's result).

// CHECK-LABEL: func.func @bias_gradient
// CHECK-NEXT: %[[W:.*]], %[[DB:.*]] = dm.contract %arg0, %arg1 {dm.epilogue_saved = 192 : i64, dm.tensor_names = ["t3", "t2"], epilogue = "bgradb"} : <[b=2, j=4, i=8], f32>, <[b=2, j=4, u=6], f32> -> <[u=6, i=8], f32>, !dm.tensor<[u=6], f32>
// CHECK-NEXT: return %[[W]], %[[DB]]
func.func @bias_gradient(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %dy: !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[u=6, i=8], f32>, !dm.tensor<[u=6], f32>) {
  %db = dm.kernel "reduce_sum"(%dy) : (!dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>):
    %s = dm.reduce_sum %a : !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[u=6], f32>
    dm.yield %s : !dm.tensor<[u=6], f32>
  }
  %dw = dm.contract %x, %dy : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[u=6, i=8], f32>
  return %dw, %db : !dm.tensor<[u=6, i=8], f32>, !dm.tensor<[u=6], f32>
}

// -----

// Near miss: the sum keeps a dim the result does not (j): not a bias
// gradient of this contraction.

// CHECK-LABEL: func.func @sum_over_other_dims
// CHECK-NEXT: dm.kernel "reduce_sum"
// CHECK: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>, <[b=2, j=4, u=6], f32> -> <[u=6, i=8], f32>
func.func @sum_over_other_dims(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %dy: !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[u=6, i=8], f32>, !dm.tensor<[j=4, u=6], f32>) {
  %db = dm.kernel "reduce_sum"(%dy) : (!dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[j=4, u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>):
    %s = dm.reduce_sum %a : !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[j=4, u=6], f32>
    dm.yield %s : !dm.tensor<[j=4, u=6], f32>
  }
  %dw = dm.contract %x, %dy : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[u=6, i=8], f32>
  return %dw, %db : !dm.tensor<[u=6, i=8], f32>, !dm.tensor<[j=4, u=6], f32>
}

// -----

// Near miss: the bias gradient is read (by a kernel) before the contraction
// runs, so the contraction cannot be the one writing it.

// CHECK-LABEL: func.func @gradient_read_early
// CHECK-NEXT: dm.kernel "reduce_sum"
// CHECK: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>, <[b=2, j=4, u=6], f32> -> <[u=6, i=8], f32>
func.func @gradient_read_early(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %dy: !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[u=6, i=8], f32>, !dm.tensor<[u=6], f32>) {
  %db = dm.kernel "reduce_sum"(%dy) : (!dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>):
    %s = dm.reduce_sum %a : !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[u=6], f32>
    dm.yield %s : !dm.tensor<[u=6], f32>
  }
  %d2 = dm.kernel "scale"(%db) : (!dm.tensor<[u=6], f32>) -> !dm.tensor<[u=6], f32> {
  ^bb0(%a: !dm.tensor<[u=6], f32>):
    %s = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[u=6], f32>
    dm.yield %s : !dm.tensor<[u=6], f32>
  }
  %dw = dm.contract %x, %dy : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[u=6, i=8], f32>
  return %dw, %d2 : !dm.tensor<[u=6, i=8], f32>, !dm.tensor<[u=6], f32>
}

