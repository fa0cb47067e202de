// RUN: dmc-opt %s --split-input-file --verify-diagnostics

// One case per verifier rule of dm.kernel and dm.yield.

func.func @fewer_args(%x: !dm.tensor<[i=8], f32>, %y: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.kernel' op has 2 inputs but its body takes 1 arguments}}
  dm.kernel "k"(%x, %y) : (!dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>) -> () {
  ^bb0(%a: !dm.tensor<[i=8], f32>):
    dm.yield
  }
  return
}

// -----

func.func @more_args(%x: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.kernel' op has 1 inputs but its body takes 2 arguments}}
  dm.kernel "k"(%x) : (!dm.tensor<[i=8], f32>) -> () {
  ^bb0(%a: !dm.tensor<[i=8], f32>, %b: !dm.tensor<[i=8], f32>):
    dm.yield
  }
  return
}

// -----

func.func @arg_type(%x: !dm.tensor<[i=8], f32>, %y: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.kernel' op input 1 has type '!dm.tensor<[i=8], f32>' but body argument 1 has type '!dm.tensor<[i=8], bf16>'}}
  dm.kernel "k"(%x, %y) : (!dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>) -> () {
  ^bb0(%a: !dm.tensor<[i=8], f32>, %b: !dm.tensor<[i=8], bf16>):
    dm.yield
  }
  return
}

// -----

func.func @yield_type(%x: !dm.tensor<[i=8], f32>) -> !dm.tensor<[j=8], f32> {
  // expected-error @+1 {{'dm.kernel' op yields 1 values whose types differ from the kernel's outputs}}
  %0 = dm.kernel "k"(%x) : (!dm.tensor<[i=8], f32>) -> !dm.tensor<[j=8], f32> {
  ^bb0(%a: !dm.tensor<[i=8], f32>):
    dm.yield %a : !dm.tensor<[i=8], f32>
  }
  return %0 : !dm.tensor<[j=8], f32>
}

// -----

func.func @yield_count(%x: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  // expected-error @+1 {{'dm.kernel' op yields 2 values whose types differ from the kernel's outputs}}
  %0 = dm.kernel "k"(%x) : (!dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  ^bb0(%a: !dm.tensor<[i=8], f32>):
    dm.yield %a, %a : !dm.tensor<[i=8], f32>, !dm.tensor<[i=8], f32>
  }
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

func.func @missing_yield(%x: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  // expected-error @+1 {{'dm.kernel' op body must end in dm.yield}}
  %0 = dm.kernel "k"(%x) : (!dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  ^bb0(%a: !dm.tensor<[i=8], f32>):
    %1 = dm.scale %a {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
  }
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

func.func @wrong_terminator(%x: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  // expected-error @+1 {{'dm.kernel' op body must end in dm.yield}}
  %0 = dm.kernel "k"(%x) : (!dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  ^bb0(%a: !dm.tensor<[i=8], f32>):
    func.return %a : !dm.tensor<[i=8], f32>
  }
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

func.func @yield_outside(%x: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.yield' op expects parent op 'dm.kernel'}}
  dm.yield %x : !dm.tensor<[i=8], f32>
}

// -----

// Isolated from above: the body reads only its arguments.
func.func @reads_outside(%x: !dm.tensor<[i=8], f32>) -> !dm.tensor<[i=8], f32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = dm.kernel "k"() : () -> !dm.tensor<[i=8], f32> {
    // expected-error @+1 {{using value defined outside the region}}
    %1 = dm.scale %x {factor = 2.0 : f64} : !dm.tensor<[i=8], f32>
    dm.yield %1 : !dm.tensor<[i=8], f32>
  }
  return %0 : !dm.tensor<[i=8], f32>
}

// -----

func.func @no_body(%x: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.kernel' op expects a non-empty block}}
  dm.kernel "k"(%x) : (!dm.tensor<[i=8], f32>) -> () {
  }
  return
}
