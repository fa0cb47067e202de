// RUN: dmc-opt %s --split-input-file --verify-diagnostics

func.func @unknown(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>) {
  // expected-error @+1 {{epilogue "gelu_bias" is not one of none, bias, bgrada, bgradb, accumulate}}
  %c = dm.contract %x, %w {epilogue = "gelu_bias"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return
}

// -----

func.func @bias_missing(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>) {
  // expected-error @+1 {{epilogue "bias" needs a bias operand}}
  %c = dm.contract %x, %w {epilogue = "bias"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return
}

// -----

func.func @bias_without_epilogue(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %v: !dm.tensor<[u=6], f32>) {
  // expected-error @+1 {{epilogue "none" takes no bias operand}}
  %c = dm.contract %x, %w bias %v : !dm.tensor<[u=6], f32> : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return
}

// -----

func.func @bias_dim(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %v: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{bias dimension 'i' is not a dimension of the result}}
  %c = dm.contract %x, %w bias %v : !dm.tensor<[i=8], f32> {epilogue = "bias"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return
}

// -----

func.func @grad_missing(%x: !dm.tensor<[b=2, i=8], f32>, %dy: !dm.tensor<[b=2, u=6], f32>) {
  // expected-error @+1 {{epilogue "bgradb" needs a bias_grad result}}
  %c = dm.contract %x, %dy {epilogue = "bgradb"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, u=6], f32> -> !dm.tensor<[u=6, i=8], f32>
  return
}

// -----

func.func @grad_dim(%x: !dm.tensor<[b=2, i=8], f32>, %dy: !dm.tensor<[b=2, u=6], f32>) {
  // expected-error @+1 {{bias_grad dimension 'i' is not a dimension of rhs}}
  %c:2 = dm.contract %x, %dy {epilogue = "bgradb"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, u=6], f32> -> !dm.tensor<[u=6, i=8], f32>, !dm.tensor<[i=8], f32>
  return
}

// -----

func.func @addend_missing_a_dim(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %v: !dm.tensor<[u=6], f32>) {
  // expected-error @+1 {{the addend of epilogue "accumulate" must have the result's dimensions 'bu', got 'u'}}
  %c = dm.contract %x, %w bias %v : !dm.tensor<[u=6], f32> {epilogue = "accumulate"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return
}

// -----

func.func @addend_of_another_size(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>, %v: !dm.tensor<[u=6, b=3], f32>) {
  // expected-error @+1 {{dimension 'b' has size 2 in operand 0 but 3 in operand 2}}
  %c = dm.contract %x, %w bias %v : !dm.tensor<[u=6, b=3], f32> {epilogue = "accumulate"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return
}

// -----

func.func @addend_missing(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=6, i=8], f32>) {
  // expected-error @+1 {{epilogue "accumulate" needs a bias operand}}
  %c = dm.contract %x, %w {epilogue = "accumulate"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=6, i=8], f32> -> !dm.tensor<[b=2, u=6], f32>
  return
}
