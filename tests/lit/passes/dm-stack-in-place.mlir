// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-stack-in-place{remarks=true}))' --verify-diagnostics | FileCheck %s
// The rewritten IR parses and verifies again.
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-stack-in-place))' | dmc-opt --split-input-file --verify-each | FileCheck %s

// dm-stack-in-place: a kernel stacking slices that kernels addressing their
// results by strides (dm.fused) wrote loses the stack, which becomes a view
// (dm.in_place) in the layout the kernel wrote it; the kernel's column sum
// reads the stacked tensor and the kernel is named after what is left.
// Tensor names stay: the stacked tensor is still t6, the sum t7.

// CHECK-LABEL: func.func @gradients_in_place
// CHECK: %[[A:.*]]:2 = dm.kernel "grad_kv"
// CHECK: %[[Q:.*]] = dm.kernel "grad_q"
// CHECK: %[[K:.*]] = dm.rename %[[A]]#0
// CHECK: %[[V:.*]] = dm.rename %[[A]]#1
// CHECK: %[[S:.*]] = dm.stack %[[Q]], %[[K]], %[[V]] {dim = "s", dm.in_place, dm.tensor_names = ["t6"]} : {{.*}} -> <[b=2, j=4, s=3, p=8], bf16>
// CHECK: %[[R:.*]] = dm.kernel "reduce_sum"(%[[S]]) {dm.tensor_names = ["t7"]} : (!dm.tensor<[b=2, j=4, s=3, p=8], bf16>) -> !dm.tensor<[s=3, p=8], bf16>
// CHECK-NEXT: ^bb0(%[[ARG:.*]]: !dm.tensor<[b=2, j=4, s=3, p=8], bf16>):
// CHECK-NEXT: %[[T:.*]] = dm.transpose %[[ARG]] : <[b=2, j=4, s=3, p=8], bf16> -> <[s=3, b=2, j=4, p=8], bf16>
// CHECK-NEXT: %[[SUM:.*]] = dm.reduce_sum %[[T]]
// CHECK-NEXT: dm.yield %[[SUM]]
// CHECK: return %[[S]], %[[R]]
func.func @gradients_in_place(%x: !dm.tensor<[b=2, j=4, p=8], bf16>) -> (!dm.tensor<[b=2, j=4, s=3, p=8], bf16>, !dm.tensor<[s=3, p=8], bf16>) {
  %kv:2 = dm.kernel "grad_kv"(%x) {dm.fused = "attention_grad_kv"} : (!dm.tensor<[b=2, j=4, p=8], bf16>) -> (!dm.tensor<[b=2, k=4, p=8], bf16>, !dm.tensor<[b=2, k=4, p=8], bf16>) {
  ^bb0(%a: !dm.tensor<[b=2, j=4, p=8], bf16>):
    %r = dm.rename %a {from = "j", to = "k"} : <[b=2, j=4, p=8], bf16> -> <[b=2, k=4, p=8], bf16>
    dm.yield %r, %r : !dm.tensor<[b=2, k=4, p=8], bf16>, !dm.tensor<[b=2, k=4, p=8], bf16>
  }
  %q = dm.kernel "grad_q"(%x) {dm.fused = "attention_grad_q"} : (!dm.tensor<[b=2, j=4, p=8], bf16>) -> !dm.tensor<[b=2, j=4, p=8], bf16> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, p=8], bf16>):
    dm.yield %a : !dm.tensor<[b=2, j=4, p=8], bf16>
  }
  %k = dm.rename %kv#0 {from = "k", to = "j"} : <[b=2, k=4, p=8], bf16> -> <[b=2, j=4, p=8], bf16>
  %v = dm.rename %kv#1 {from = "k", to = "j"} : <[b=2, k=4, p=8], bf16> -> <[b=2, j=4, p=8], bf16>
  %st:2 = dm.kernel "stack_reduce_sum"(%q, %k, %v) : (!dm.tensor<[b=2, j=4, p=8], bf16>, !dm.tensor<[b=2, j=4, p=8], bf16>, !dm.tensor<[b=2, j=4, p=8], bf16>) -> (!dm.tensor<[b=2, j=4, s=3, p=8], bf16>, !dm.tensor<[s=3, p=8], bf16>) {
  ^bb0(%a: !dm.tensor<[b=2, j=4, p=8], bf16>, %b: !dm.tensor<[b=2, j=4, p=8], bf16>, %c: !dm.tensor<[b=2, j=4, p=8], bf16>):
    %s = dm.stack %a, %b, %c {dim = "s"} : !dm.tensor<[b=2, j=4, p=8], bf16>, !dm.tensor<[b=2, j=4, p=8], bf16>, !dm.tensor<[b=2, j=4, p=8], bf16> -> <[s=3, b=2, j=4, p=8], bf16>
    %sum = dm.reduce_sum %s : <[s=3, b=2, j=4, p=8], bf16> -> <[s=3, p=8], bf16>
    %t = dm.transpose %s : <[s=3, b=2, j=4, p=8], bf16> -> <[b=2, j=4, s=3, p=8], bf16>
    dm.yield %t, %sum : !dm.tensor<[b=2, j=4, s=3, p=8], bf16>, !dm.tensor<[s=3, p=8], bf16>
  }
  return %st#0, %st#1 : !dm.tensor<[b=2, j=4, s=3, p=8], bf16>, !dm.tensor<[s=3, p=8], bf16>
}

// -----

// A pure stack kernel disappears: the stack alone is left, in place.

// CHECK-LABEL: func.func @kernel_disappears
// CHECK: %[[S:.*]] = dm.stack {{.*}} {dim = "s", dm.in_place{{.*}}} : {{.*}} -> <[s=2, b=2, p=8], bf16>
// CHECK-NOT: dm.kernel "stack"
// CHECK: return %[[S]]
func.func @kernel_disappears(%x: !dm.tensor<[b=2, p=8], bf16>) -> !dm.tensor<[s=2, b=2, p=8], bf16> {
  %kv:2 = dm.kernel "two"(%x) {dm.fused = "attention_grad_kv"} : (!dm.tensor<[b=2, p=8], bf16>) -> (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>):
    dm.yield %a, %a : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>
  }
  %st = dm.kernel "stack"(%kv#0, %kv#1) : (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) -> !dm.tensor<[s=2, b=2, p=8], bf16> {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>, %b: !dm.tensor<[b=2, p=8], bf16>):
    %s = dm.stack %a, %b {dim = "s"} : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16> -> <[s=2, b=2, p=8], bf16>
    dm.yield %s : !dm.tensor<[s=2, b=2, p=8], bf16>
  }
  return %st : !dm.tensor<[s=2, b=2, p=8], bf16>
}

// -----

// Near misses, each left as a copy with its reason.

// CHECK-LABEL: func.func @not_strided_writer
// CHECK: dm.kernel "stack"
// CHECK-NOT: dm.in_place
func.func @not_strided_writer(%x: !dm.tensor<[b=2, p=8], bf16>) -> !dm.tensor<[s=2, b=2, p=8], bf16> {
  %kv:2 = dm.kernel "loop_nest"(%x) : (!dm.tensor<[b=2, p=8], bf16>) -> (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>):
    dm.yield %a, %a : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>
  }
  // expected-remark @below {{stack copied, not in place: a slice is not the result of a kernel addressing its results by strides}}
  %st = dm.kernel "stack"(%kv#0, %kv#1) : (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) -> !dm.tensor<[s=2, b=2, p=8], bf16> {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>, %b: !dm.tensor<[b=2, p=8], bf16>):
    %s = dm.stack %a, %b {dim = "s"} : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16> -> <[s=2, b=2, p=8], bf16>
    dm.yield %s : !dm.tensor<[s=2, b=2, p=8], bf16>
  }
  return %st : !dm.tensor<[s=2, b=2, p=8], bf16>
}

// -----

// CHECK-LABEL: func.func @slice_read_elsewhere
// CHECK: dm.kernel "stack"
// CHECK-NOT: dm.in_place
func.func @slice_read_elsewhere(%x: !dm.tensor<[b=2, p=8], bf16>) -> (!dm.tensor<[s=2, b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) {
  %kv:2 = dm.kernel "two"(%x) {dm.fused = "attention_grad_kv"} : (!dm.tensor<[b=2, p=8], bf16>) -> (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>):
    dm.yield %a, %a : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>
  }
  // expected-remark @below {{stack copied, not in place: a slice has readers besides the stack}}
  %st = dm.kernel "stack"(%kv#0, %kv#1) : (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) -> !dm.tensor<[s=2, b=2, p=8], bf16> {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>, %b: !dm.tensor<[b=2, p=8], bf16>):
    %s = dm.stack %a, %b {dim = "s"} : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16> -> <[s=2, b=2, p=8], bf16>
    dm.yield %s : !dm.tensor<[s=2, b=2, p=8], bf16>
  }
  return %st, %kv#1 : !dm.tensor<[s=2, b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>
}

// -----

// CHECK-LABEL: func.func @stacked_not_written
// CHECK: dm.kernel "stack_reduce_sum"
// CHECK-NOT: dm.in_place
func.func @stacked_not_written(%x: !dm.tensor<[b=2, p=8], bf16>) -> !dm.tensor<[s=2, p=8], bf16> {
  %kv:2 = dm.kernel "two"(%x) {dm.fused = "attention_grad_kv"} : (!dm.tensor<[b=2, p=8], bf16>) -> (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>):
    dm.yield %a, %a : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>
  }
  // expected-remark @below {{stack copied, not in place: the stacked tensor is not a result of the kernel}}
  %st = dm.kernel "stack_reduce_sum"(%kv#0, %kv#1) : (!dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16>) -> !dm.tensor<[s=2, p=8], bf16> {
  ^bb0(%a: !dm.tensor<[b=2, p=8], bf16>, %b: !dm.tensor<[b=2, p=8], bf16>):
    %s = dm.stack %a, %b {dim = "s"} : !dm.tensor<[b=2, p=8], bf16>, !dm.tensor<[b=2, p=8], bf16> -> <[s=2, b=2, p=8], bf16>
    %sum = dm.reduce_sum %s : <[s=2, b=2, p=8], bf16> -> <[s=2, p=8], bf16>
    dm.yield %sum : !dm.tensor<[s=2, p=8], bf16>
  }
  return %st : !dm.tensor<[s=2, p=8], bf16>
}
