// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues))' | FileCheck %s --check-prefix=SAVING
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues{bias-grads=all}))' | FileCheck %s --check-prefix=ALL
// The rewritten IR parses and verifies again.
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-gemm-epilogues{bias-grads=all}))' | dmc-opt --split-input-file --verify-each | FileCheck %s --check-prefix=ALL

// dm-gemm-epilogues{bias-grads=all}: a bias gradient whose kernel moves as
// many bytes without it is folded too (by default it is not): here the sum
// of the operand lives in the kernel that writes the operand, which keeps
// writing it.

// SAVING-LABEL: func.func @sum_in_the_producer
// SAVING: dm.kernel "scale_reduce_sum"
// SAVING: dm.contract %arg0, %{{.*}}#0 : <[b=2, j=4, i=8], f32>, <[b=2, j=4, u=6], f32> -> <[u=6, i=8], f32>

// ALL-LABEL: func.func @sum_in_the_producer
// ALL: %[[G:.*]] = dm.kernel "scale"(%arg1)
// ALL: dm.scale
// ALL-NOT: dm.reduce_sum
// ALL: dm.yield
// ALL: %[[W:.*]], %[[DB:.*]] = dm.contract %arg0, %[[G]] {dm.epilogue_saved = 0 : i64, {{.*}}epilogue = "bgradb"}
// ALL-NEXT: return %[[W]], %[[DB]]
func.func @sum_in_the_producer(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %dy: !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[u=6, i=8], f32>, !dm.tensor<[u=6], f32>) {
  %g:2 = dm.kernel "scale_reduce_sum"(%dy) : (!dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>) {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>):
    %s = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[b=2, j=4, u=6], f32>
    %r = dm.reduce_sum %s : !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[u=6], f32>
    dm.yield %s, %r : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[u=6], f32>
  }
  %dw = dm.contract %x, %g#0 : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[b=2, j=4, u=6], f32> -> !dm.tensor<[u=6, i=8], f32>
  return %dw, %g#1 : !dm.tensor<[u=6, i=8], f32>, !dm.tensor<[u=6], f32>
}

// -----

// A view reading the bias gradient before the contraction (an unstack of
// stacked gradients) moves after it; the kernel keeps the stack.

// SAVING-LABEL: func.func @unstacked_gradients
// SAVING: dm.kernel "stack_reduce_sum"

// ALL-LABEL: func.func @unstacked_gradients
// ALL: %[[K:.*]] = dm.kernel "stack"(%arg1, %arg2)
// ALL-NOT: dm.reduce_sum
// ALL: %[[W:.*]], %[[DB:.*]] = dm.contract %arg0, %[[K]] {{.*}}epilogue = "bgradb"
// ALL-NEXT: %[[P:.*]]:2 = dm.unstack %[[DB]]
// ALL-NEXT: return %[[W]], %[[P]]#0, %[[P]]#1
func.func @unstacked_gradients(%x: !dm.tensor<[b=2, j=4, i=8], f32>, %d0: !dm.tensor<[b=2, j=4, u=6], f32>, %d1: !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[s=2, u=6, i=8], f32>, !dm.tensor<[u=6], f32>, !dm.tensor<[u=6], f32>) {
  %k:2 = dm.kernel "stack_reduce_sum"(%d0, %d1) : (!dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32>) -> (!dm.tensor<[b=2, j=4, s=2, u=6], f32>, !dm.tensor<[s=2, u=6], f32>) {
  ^bb0(%a: !dm.tensor<[b=2, j=4, u=6], f32>, %c: !dm.tensor<[b=2, j=4, u=6], f32>):
    %st = dm.stack %a, %c {dim = "s"} : !dm.tensor<[b=2, j=4, u=6], f32>, !dm.tensor<[b=2, j=4, u=6], f32> -> <[s=2, b=2, j=4, u=6], f32>
    %r = dm.reduce_sum %st : !dm.tensor<[s=2, b=2, j=4, u=6], f32> -> !dm.tensor<[s=2, u=6], f32>
    %t = dm.transpose %st : !dm.tensor<[s=2, b=2, j=4, u=6], f32> -> !dm.tensor<[b=2, j=4, s=2, u=6], f32>
    dm.yield %t, %r : !dm.tensor<[b=2, j=4, s=2, u=6], f32>, !dm.tensor<[s=2, u=6], f32>
  }
  %parts:2 = dm.unstack %k#1 {dim = "s"} : <[s=2, u=6], f32> -> !dm.tensor<[u=6], f32>, !dm.tensor<[u=6], f32>
  %dw = dm.contract %x, %k#0 : !dm.tensor<[b=2, j=4, i=8], f32>, !dm.tensor<[b=2, j=4, s=2, u=6], f32> -> !dm.tensor<[s=2, u=6, i=8], f32>
  return %dw, %parts#0, %parts#1 : !dm.tensor<[s=2, u=6, i=8], f32>, !dm.tensor<[u=6], f32>, !dm.tensor<[u=6], f32>
}
