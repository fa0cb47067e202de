// RUN: dmc-opt %s --split-input-file | FileCheck %s
// RUN: dmc-opt %s --split-input-file | dmc-opt --split-input-file | FileCheck %s
// RUN: dmc-opt %s --split-input-file --mlir-print-op-generic | dmc-opt --split-input-file | FileCheck %s

// dm.kernel / dm.yield round trip: custom form, the generic form, and the
// generic form printed back in the custom form. Verifier errors are in
// kernel-invalid.mlir.

// CHECK-LABEL: func.func @one_in_one_out
// CHECK-SAME: (%[[X:[^:]*]]: !dm.tensor<[i=8], f32>)
// CHECK-NEXT: %[[K:.*]] = dm.kernel "scale"(%[[X]]) : (!dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[i=8], f32>):
// CHECK-NEXT: %[[S:.*]] = dm.scale %[[A]] {factor = 2.000000e+00 : f64} : <[i=8], f32>
// CHECK-NEXT: dm.yield %[[S]] : !dm.tensor<[i=8], f32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]
func.func @one_in_one_out(%x: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  %0 = dm.kernel "scale"(%x) : (!dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  ^bb0(%a: !dm.tensor<[i=8], f32>):
    %1 = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
    dm.yield %1 : !dm.tensor<[i=8], f32>
  }
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

// Several inputs (an i32 one too) and outputs, extra attributes kept.

// CHECK-LABEL: func.func @many
// CHECK-SAME: (%[[X:[^:]*]]: {{![^>]*>}}, %[[B:[^:]*]]: {{![^>]*>}}, %[[L:[^:]*]]: {{![^>]*>}})
// CHECK-NEXT: %[[K:.*]]:2 = dm.kernel "bias_key_padding_mask"(%[[X]], %[[B]], %[[L]]) {note = "kept"} : (!dm.tensor<[b=2, k=8], f32>, !dm.tensor<[k=8], f32>, !dm.tensor<[b=2], i32>) -> (!dm.tensor<[b=2, k=8], f32>, !dm.tensor<[b=2, k=8], f32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: !dm.tensor<[b=2, k=8], f32>, %{{.*}}: !dm.tensor<[k=8], f32>, %{{.*}}: !dm.tensor<[b=2], i32>):
// CHECK-NEXT: dm.bias_add
// CHECK-NEXT: dm.key_padding_mask
// CHECK-NEXT: dm.yield %{{.*}}, %{{.*}} : !dm.tensor<[b=2, k=8], f32>, !dm.tensor<[b=2, k=8], f32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]#0, %[[K]]#1
func.func @many(%x: !dm.tensor<[b=2, k=8], f32>, %bias: !dm.tensor<[k=8], f32>, %len: !dm.tensor<[b=2], i32>)
    -> (!dm.tensor<[b=2, k=8], f32>, !dm.tensor<[b=2, k=8], f32>) {
  %0:2 = dm.kernel "bias_key_padding_mask"(%x, %bias, %len) {note = "kept"} : (!dm.tensor<[b=2, k=8], f32>, !dm.tensor<[k=8], f32>, !dm.tensor<[b=2], i32>) -> (!dm.tensor<[b=2, k=8], f32>, !dm.tensor<[b=2, k=8], f32>) {
  ^bb0(%a: !dm.tensor<[b=2, k=8], f32>, %c: !dm.tensor<[k=8], f32>, %l: !dm.tensor<[b=2], i32>):
    %1 = dm.bias_add %a, %c : !dm.tensor<[b=2, k=8], f32>, !dm.tensor<[k=8], f32>
    %2 = dm.key_padding_mask %1, %l {key = "k", fill = 0.0 : f64} : !dm.tensor<[b=2, k=8], f32>, !dm.tensor<[b=2], i32>
    dm.yield %1, %2 : !dm.tensor<[b=2, k=8], f32>, !dm.tensor<[b=2, k=8], f32>
  }
  return %0#0, %0#1 : !dm.tensor<[b=2, k=8], f32>, !dm.tensor<[b=2, k=8], f32>
}

// -----

// No inputs and no outputs: an empty yield.

// CHECK-LABEL: func.func @empty
// CHECK-NEXT: dm.kernel "nothing"() : () -> () {
// CHECK-NEXT: dm.yield{{$}}
// CHECK-NEXT: }
func.func @empty() {
  dm.kernel "nothing"() : () -> () {
    dm.yield
  }
  return
}

// -----

// The generic form parses to the same op.

// CHECK-LABEL: func.func @generic
// CHECK-NEXT: %[[K:.*]] = dm.kernel "add"(%{{.*}}, %{{.*}}) : (!dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: !dm.tensor<[i=8], f32>, %[[B:.*]]: !dm.tensor<[i=8], f32>):
// CHECK-NEXT: %[[S:.*]] = dm.add %[[A]], %[[B]]
// CHECK-NEXT: dm.yield %[[S]] : !dm.tensor<[i=8], f32>
func.func @generic(%x: !dm.tensor<[i=8], f32>, %y: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  %0 = "dm.kernel"(%x, %y) <{name = "add"}> ({
  ^bb0(%a: !dm.tensor<[i=8], f32>, %b: !dm.tensor<[i=8], f32>):
    %1 = "dm.add"(%a, %b) : (!dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32>
    "dm.yield"(%1) : (!dm.tensor<[i=8], f32>) -> ()
  }) : (!dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32>
  return %0 : !dm.tensor<[i=8], f32>
}
