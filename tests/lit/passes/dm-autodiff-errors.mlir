// RUN: dmc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(dm-autodiff))'

// Functions dm-autodiff refuses, each with the error it reports. (Kept apart
// from dm-autodiff.mlir, whose FileCheck RUN line needs every case to pass.)

// expected-error @+1 {{function is already a training graph}}
func.func @already_trained(%x: !dm.tensor<[i=8], f32> {dm.name = "x", dm.role = "input"})
    -> (!dm.tensor<[i=8], f32> {dm.name = "y", dm.role = "output"}) attributes {dm.training} {
  %0 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

// expected-error @+1 {{argument 'w' receives no gradient (is it used?)}}
func.func @unused_float_argument(%x: !dm.tensor<[i=8], f32> {dm.name = "x", dm.role = "input"},
                                 %w: !dm.tensor<[i=8], f32> {dm.name = "w", dm.role = "param"})
    -> (!dm.tensor<[i=8], f32> {dm.name = "y", dm.role = "output"}) {
  %0 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

func.func @no_gradient_rule(%x: !dm.tensor<[i=8], f32> {dm.name = "x", dm.role = "input"})
    -> (!dm.tensor<[i=8], f32> {dm.name = "y", dm.role = "output"}) {
  // expected-error @+1 {{'dm.save' op has no gradient rule}}
  %0 = dm.save %x : !dm.tensor<[i=8], f32>
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

func.func @unused_slice(%x: !dm.tensor<[s=2, i=8], f32> {dm.name = "x", dm.role = "input"})
    -> (!dm.tensor<[i=8], f32> {dm.name = "y", dm.role = "output"}) {
  // expected-error @+1 {{'dm.unstack' op result 0 has no gradient; every slice of an unstack must be used}}
  %0:2 = dm.unstack %x {dim = "s"} : !dm.tensor<[s=2, i=8], f32> -> !dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>
  return %0#1 : !dm.tensor<[i=8], f32>
}

// -----

func.func @gradient_through_mean(%x: !dm.tensor<[b=2, i=8], f32> {dm.name = "x", dm.role = "input"},
                                 %g: !dm.tensor<[i=8], f32> {dm.name = "g", dm.role = "param"})
    -> (!dm.tensor<[b=2], f32> {dm.name = "mean", dm.role = "output"}) {
  // expected-error @+1 {{'dm.layernorm' op gradients through mean or rstd are not supported}}
  %y, %mean, %rstd = dm.layernorm %x, %g, %g {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2], f32>
  return %mean : !dm.tensor<[b=2], f32>
}

// -----

// An argument without dm.name is called arg<N>.
// expected-error @+1 {{argument 'arg1' receives no gradient (is it used?)}}
func.func @unnamed_unused(%x: !dm.tensor<[i=8], f32>, %w: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  %0 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
  return %0 : !dm.tensor<[i=8], f32>
}
