// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-default-layouts))' | FileCheck %s
// The rewritten IR parses and verifies again (kernel bodies, view types).
// RUN: dmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dm-default-layouts))' | dmc-opt --split-input-file --verify-each | FileCheck %s

// dm-default-layouts gives every contraction layouts that the cuBLASLt
// mapping accepts. Preferred: the contraction writes another layout; then the
// kernel producing an operand writes another layout (also through views);
// only where no producer can (an argument, a returned tensor) a transpose
// kernel. Arguments and results keep their layouts.

// a.v -> [b, j, h, p] has its batch dims b, h apart in D: the contraction
// writes [b, h, j, p] instead, and the kernel reading it transposes inside
// its body (free: codegen addresses each tensor by its own layout).

// CHECK-LABEL: func.func @output_absorbs
// CHECK-NEXT: %[[O:.*]] = dm.contract %arg0, %arg1 : <[b=2, h=3, j=4, k=4], f32>, <[b=2, h=3, k=4, p=8], f32> -> <[b=2, h=3, j=4, p=8], f32>
// CHECK-NEXT: dm.kernel "scale"(%[[O]]) : (!dm.tensor<[b=2, h=3, j=4, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32>
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[b=2, h=3, j=4, p=8], f32>):
// CHECK-NEXT: %[[T:.*]] = dm.transpose %[[A]] : <[b=2, h=3, j=4, p=8], f32> -> <[b=2, j=4, h=3, p=8], f32>
// CHECK-NEXT: dm.scale %[[T]]
// CHECK-NOT: dm.kernel "transpose"
func.func @output_absorbs(%p: !dm.tensor<[b=2, h=3, j=4, k=4], f32>, %v: !dm.tensor<[b=2, h=3, k=4, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32> {
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=3, j=4, k=4], f32>, !dm.tensor<[b=2, h=3, k=4, p=8], f32> -> !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  %r = dm.kernel "scale"(%o) : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, h=3, p=8], f32>):
    %s = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  }
  return %r : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
}

// -----

// q [b, j, h, p] (batch b, h apart) is written by a kernel: the kernel
// writes [b, h, j, p] through a transpose before its yield.

// CHECK-LABEL: func.func @producer_absorbs
// CHECK-NEXT: %[[Q:.*]] = dm.kernel "scale"(%arg0) : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, h=3, j=4, p=8], f32>
// CHECK: %[[S:.*]] = dm.scale
// CHECK-NEXT: %[[T:.*]] = dm.transpose %[[S]] : <[b=2, j=4, h=3, p=8], f32> -> <[b=2, h=3, j=4, p=8], f32>
// CHECK-NEXT: dm.yield %[[T]]
// CHECK: dm.contract %[[Q]], %arg1 : <[b=2, h=3, j=4, p=8], f32>, <[b=2, h=3, k=4, p=8], f32> -> <[b=2, h=3, j=4, k=4], f32>
// CHECK-NOT: dm.kernel "transpose"
func.func @producer_absorbs(%x: !dm.tensor<[b=2, j=4, h=3, p=8], f32>, %k: !dm.tensor<[b=2, h=3, k=4, p=8], f32>) -> !dm.tensor<[b=2, h=3, j=4, k=4], f32> {
  %q = dm.kernel "scale"(%x) : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, h=3, p=8], f32>):
    %s = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  }
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=4, h=3, p=8], f32>, !dm.tensor<[b=2, h=3, k=4, p=8], f32> -> !dm.tensor<[b=2, h=3, j=4, k=4], f32>
  return %s : !dm.tensor<[b=2, h=3, j=4, k=4], f32>
}

// -----

// Through views: q and k are slices of one stacked kernel output (k also
// renamed, q saved). The stacked tensor moves to [s, b, h, j, p] (its stack
// dim stays outermost, so the slices stay contiguous) and every view follows.

// CHECK-LABEL: func.func @through_views
// CHECK-NEXT: dm.kernel "scale"(%arg0) : (!dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[s=2, b=2, h=3, j=4, p=8], f32>
// CHECK: dm.unstack %{{.*}} {dim = "s"} : <[s=2, b=2, h=3, j=4, p=8], f32> -> !dm.tensor<[b=2, h=3, j=4, p=8], f32>, !dm.tensor<[b=2, h=3, j=4, p=8], f32>
// CHECK-NEXT: dm.save %{{.*}} : <[b=2, h=3, j=4, p=8], f32>
// CHECK-NEXT: dm.rename %{{.*}} {from = "j", to = "k"} : <[b=2, h=3, j=4, p=8], f32> -> <[b=2, h=3, k=4, p=8], f32>
// CHECK-NEXT: dm.contract %{{.*}}, %{{.*}} : <[b=2, h=3, j=4, p=8], f32>, <[b=2, h=3, k=4, p=8], f32> -> <[b=2, h=3, j=4, k=4], f32>
// CHECK-NOT: dm.kernel "transpose"
func.func @through_views(%x: !dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, h=3, j=4, k=4], f32> {
  %qk = dm.kernel "scale"(%x) : (!dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32> {
  ^bb0(%a: !dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32>):
    %s = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32>
    dm.yield %s : !dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32>
  }
  %parts:2 = dm.unstack %qk {dim = "s"} : !dm.tensor<[s=2, b=2, j=4, h=3, p=8], f32> -> !dm.tensor<[b=2, j=4, h=3, p=8], f32>, !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  %q = dm.save %parts#0 : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  %k = dm.rename %parts#1 {from = "j", to = "k"} : !dm.tensor<[b=2, j=4, h=3, p=8], f32> -> !dm.tensor<[b=2, k=4, h=3, p=8], f32>
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=4, h=3, p=8], f32>, !dm.tensor<[b=2, k=4, h=3, p=8], f32> -> !dm.tensor<[b=2, h=3, j=4, k=4], f32>
  return %s : !dm.tensor<[b=2, h=3, j=4, k=4], f32>
}

// -----

// q is a function argument (the caller's layout): a transpose kernel.

// CHECK-LABEL: func.func @argument_needs_transpose
// CHECK-NEXT: %[[T:.*]] = dm.kernel "transpose"(%arg0) {dm.inserted = "operand"} : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, h=3, j=4, p=8], f32>
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[b=2, j=4, h=3, p=8], f32>):
// CHECK-NEXT: %[[X:.*]] = dm.transpose %[[A]]
// CHECK-NEXT: dm.yield %[[X]]
// CHECK-NEXT: }
// CHECK-NEXT: dm.contract %[[T]], %arg1 : <[b=2, h=3, j=4, p=8], f32>, <[b=2, h=3, k=4, p=8], f32> -> <[b=2, h=3, j=4, k=4], f32>
// CHECK-NEXT: return
func.func @argument_needs_transpose(%q: !dm.tensor<[b=2, j=4, h=3, p=8], f32>, %k: !dm.tensor<[b=2, h=3, k=4, p=8], f32>) -> !dm.tensor<[b=2, h=3, j=4, k=4], f32> {
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=4, h=3, p=8], f32>, !dm.tensor<[b=2, h=3, k=4, p=8], f32> -> !dm.tensor<[b=2, h=3, j=4, k=4], f32>
  return %s : !dm.tensor<[b=2, h=3, j=4, k=4], f32>
}

// -----

// q is read by two contractions: the kernel writes [j, b, h, p], which both
// map (q.w with b as a broadcast batch), rather than a transpose for one.

// CHECK-LABEL: func.func @two_consumers
// CHECK-NEXT: %[[Q:.*]] = dm.kernel "scale"(%arg0) : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[j=4, b=2, h=3, p=8], f32>
// CHECK: dm.contract %[[Q]], %arg2 : <[j=4, b=2, h=3, p=8], f32>, <[i=5, h=3, p=8], f32> -> <[b=2, j=4, i=5], f32>
// CHECK-NEXT: dm.contract %[[Q]], %arg1 : <[j=4, b=2, h=3, p=8], f32>, <[b=2, h=3, k=4, p=8], f32> -> <[b=2, h=3, j=4, k=4], f32>
// CHECK-NOT: dm.kernel "transpose"
func.func @two_consumers(%x: !dm.tensor<[b=2, j=4, h=3, p=8], f32>, %k: !dm.tensor<[b=2, h=3, k=4, p=8], f32>, %w: !dm.tensor<[i=5, h=3, p=8], f32>) -> (!dm.tensor<[b=2, h=3, j=4, k=4], f32>, !dm.tensor<[b=2, j=4, i=5], f32>) {
  %q = dm.kernel "scale"(%x) : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, h=3, p=8], f32>):
    %s = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  }
  %y = dm.contract %q, %w : !dm.tensor<[b=2, j=4, h=3, p=8], f32>, !dm.tensor<[i=5, h=3, p=8], f32> -> !dm.tensor<[b=2, j=4, i=5], f32>
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=4, h=3, p=8], f32>, !dm.tensor<[b=2, h=3, k=4, p=8], f32> -> !dm.tensor<[b=2, h=3, j=4, k=4], f32>
  return %s, %y : !dm.tensor<[b=2, h=3, j=4, k=4], f32>, !dm.tensor<[b=2, j=4, i=5], f32>
}

// -----

// q is written by a kernel but also returned (the caller's layout): the
// kernel keeps its layout and a transpose kernel feeds the contraction.

// CHECK-LABEL: func.func @returned_needs_transpose
// CHECK-NEXT: %[[Q:.*]] = dm.kernel "scale"(%arg0) : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32>
// CHECK: %[[T:.*]] = dm.kernel "transpose"(%[[Q]]) {dm.inserted = "operand"} : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, h=3, j=4, p=8], f32>
// CHECK: dm.contract %[[T]], %arg1 : <[b=2, h=3, j=4, p=8], f32>, <[b=2, h=3, k=4, p=8], f32> -> <[b=2, h=3, j=4, k=4], f32>
// CHECK-NEXT: return %{{.*}}, %[[Q]]
func.func @returned_needs_transpose(%x: !dm.tensor<[b=2, j=4, h=3, p=8], f32>, %k: !dm.tensor<[b=2, h=3, k=4, p=8], f32>) -> (!dm.tensor<[b=2, h=3, j=4, k=4], f32>, !dm.tensor<[b=2, j=4, h=3, p=8], f32>) {
  %q = dm.kernel "scale"(%x) : (!dm.tensor<[b=2, j=4, h=3, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32> {
  ^bb0(%a: !dm.tensor<[b=2, j=4, h=3, p=8], f32>):
    %s = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
    dm.yield %s : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  }
  %s = dm.contract %q, %k : !dm.tensor<[b=2, j=4, h=3, p=8], f32>, !dm.tensor<[b=2, h=3, k=4, p=8], f32> -> !dm.tensor<[b=2, h=3, j=4, k=4], f32>
  return %s, %q : !dm.tensor<[b=2, h=3, j=4, k=4], f32>, !dm.tensor<[b=2, j=4, h=3, p=8], f32>
}

// -----

// The result is returned (the caller's layout) and no layout of it with the
// batch dims b, h adjacent is [b, j, h, p]: the contraction writes
// [b, h, j, p] and a transpose kernel restores the result's layout.

// CHECK-LABEL: func.func @result_needs_transpose
// CHECK-NEXT: %[[O:.*]] = dm.contract %arg0, %arg1 : <[b=2, h=3, j=4, k=4], f32>, <[b=2, h=3, k=4, p=8], f32> -> <[b=2, h=3, j=4, p=8], f32>
// CHECK-NEXT: %[[T:.*]] = dm.kernel "transpose"(%[[O]]) {dm.inserted = "result"} : (!dm.tensor<[b=2, h=3, j=4, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32>
// CHECK: return %[[T]]
func.func @result_needs_transpose(%p: !dm.tensor<[b=2, h=3, j=4, k=4], f32>, %v: !dm.tensor<[b=2, h=3, k=4, p=8], f32>) -> !dm.tensor<[b=2, j=4, h=3, p=8], f32> {
  %o = dm.contract %p, %v : !dm.tensor<[b=2, h=3, j=4, k=4], f32>, !dm.tensor<[b=2, h=3, k=4, p=8], f32> -> !dm.tensor<[b=2, j=4, h=3, p=8], f32>
  return %o : !dm.tensor<[b=2, j=4, h=3, p=8], f32>
}

// -----

// A contraction that maps as it is keeps its layouts.

// CHECK-LABEL: func.func @mappable_untouched
// CHECK-NEXT: dm.contract %arg0, %arg1 : <[b=2, j=4, i=5], f32>, <[u=6, i=5], f32> -> <[b=2, j=4, u=6], f32>
func.func @mappable_untouched(%x: !dm.tensor<[b=2, j=4, i=5], f32>, %w: !dm.tensor<[u=6, i=5], f32>) -> !dm.tensor<[b=2, j=4, u=6], f32> {
  %h = dm.contract %x, %w : !dm.tensor<[b=2, j=4, i=5], f32>, !dm.tensor<[u=6, i=5], f32> -> !dm.tensor<[b=2, j=4, u=6], f32>
  return %h : !dm.tensor<[b=2, j=4, u=6], f32>
}
