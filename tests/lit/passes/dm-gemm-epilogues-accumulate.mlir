// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues))' | FileCheck %s
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues))' | dmc-opt --split-input-file --verify-each | FileCheck %s
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues{addends=false}))' | FileCheck %s --check-prefix=OFF

// dm-gemm-epilogues' "accumulate": a kernel that adds another tensor, laid out
// as the contraction's result, to that result (a residual, a second gradient
// contribution) runs inside the cuBLASLt call: the addend becomes C, beta 1.

// The add is the kernel's only member: the kernel disappears (576 bytes: the
// product and the addend read, the sum written) and the GEMM reads the addend
// (192): 384 saved.

// CHECK-LABEL: func.func @add_kernel_disappears
// CHECK-NEXT: %[[C:.*]] = dm.contract %arg0, %arg1 bias %arg2 : !dm.tensor<[b=2, j=4, u=6], f32> {dm.epilogue_saved = 384 : i64, {{.*}}epilogue = "accumulate"} : <[b=2, j=4, i=8], f32>, <[u=6, i=8], f32> -> <[b=2, j=4, u=6], f32>
// CHECK-NEXT: return %[[C]]
// OFF-LABEL: func.func @add_kernel_disappears
// OFF-NEXT: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>
// OFF-NEXT: dm.kernel "add"
func.func @add_kernel_disappears(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %r: !dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y = dm.kernel "add"(%r, %c) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  ^bb0(%v: !dm.tensor<[b=2, j=4, u=6], f32>, %a: !dm.tensor<[b=2, j=4, u=6], f32>):
    %s = dm.add %v, %a : !dm.tensor<[b=2, j=4, u=6], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y : !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// The kernel also writes the sum (read by later steps) and goes on with it:
// the contraction writes the sum now, the kernel reads it instead of the
// product and the addend and keeps its activation (192 saved: the sum's write
// and the addend's read leave the kernel, the GEMM reads the addend).

// CHECK-LABEL: func.func @sum_also_read_inside
// CHECK-NEXT: %[[C:.*]] = dm.contract %arg0, %arg1 bias %arg2 : !dm.tensor<[b=2, j=4, u=6], f32> {dm.epilogue_saved = 192 : i64, {{.*}}epilogue = "accumulate"}
// CHECK-NEXT: %[[K:.*]] = dm.kernel "relu"(%[[C]])
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[b=2, j=4, u=6], f32>):
// CHECK-NEXT: %[[G:.*]] = dm.activation %[[A]]
// CHECK: return %[[C]], %[[K]]
func.func @sum_also_read_inside(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %r: !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y:2 = dm.kernel "add_activation"(%c, %r) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[b=2, j=4, u=6], f32>):
    %s = dm.add %a, %v : !dm.tensor<[b=2, j=4, u=6], f32>
    %g = dm.activation %s {kind = "relu"} : !dm.tensor<[b=2, j=4, u=6], f32>
    dm.yield %s, %g : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y#0, %y#1 : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// Near miss: the kernel writes only the activation of the sum, so it must
// still read the sum; folding would only move the addend's read into the GEMM.

// CHECK-LABEL: func.func @add_saves_nothing
// CHECK-NEXT: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>
// CHECK-NEXT: dm.kernel "add_activation"
// CHECK: dm.add
func.func @add_saves_nothing(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %r: !dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y = dm.kernel "add_activation"(%c, %r) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[b=2, j=4, u=6], f32>):
    %s = dm.add %a, %v : !dm.tensor<[b=2, j=4, u=6], f32>
    %g = dm.activation %s {kind = "relu"} : !dm.tensor<[b=2, j=4, u=6], f32>
    dm.yield %g : !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y : !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// Near miss: the addend is computed inside the kernel (an activation of the
// kernel's input), so there is no tensor for cuBLASLt to read as C.

// CHECK-LABEL: func.func @addend_computed_inside
// CHECK-NEXT: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>
// CHECK-NEXT: dm.kernel "activation_add"
func.func @addend_computed_inside(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %r: !dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y = dm.kernel "activation_add"(%c, %r) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[b=2, j=4, u=6], f32>):
    %g = dm.activation %v {kind = "relu"} : !dm.tensor<[b=2, j=4, u=6], f32>
    %s = dm.add %a, %g : !dm.tensor<[b=2, j=4, u=6], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y : !dm.tensor<[b=2, j=4, u=6], f32>
}

// -----

// Near miss: the addend is stored in another layout ([b, u, j]); the kernel
// transposes it, and C must share D's layout.

// CHECK-LABEL: func.func @addend_in_another_layout
// CHECK-NEXT: dm.contract %arg0, %arg1 : <[b=2, j=4, i=8], f32>
// CHECK-NEXT: dm.kernel "add"
func.func @addend_in_another_layout(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %r: !dm.tensor<[b=2, u=6, j=4], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %c = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  %y = dm.kernel "add"(%c, %r) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, u=6, j=4], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %v: !dm.tensor<[b=2, u=6, j=4], f32>):
    %t = dm.transpose %v : !dm.tensor<[b=2, u=6, j=4], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
    %s = dm.add %a, %t : !dm.tensor<[b=2, j=4, u=6], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, u=6], f32>
  }
  return %y : !dm.tensor<[b=2, j=4, u=6], f32>
}
