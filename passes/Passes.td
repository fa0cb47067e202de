//===- Passes.td - dm passes --------------------------------*- tablegen -*-===//
#ifndef DMC_PASSES_TD
#define DMC_PASSES_TD

include "mlir/Pass/PassBase.td"

def DmAutodiff : Pass<"dm-autodiff", "mlir::func::FuncOp"> {
  let summary = "Forward graph -> training graph (forward + backward)";
  let description = [{
    Appends to the function the backward of its forward ops: one upstream
    gradient argument per result (named `d<result>`, role `grad_output`) and
    one gradient result per float argument (named `<arg>.grad`, role `grad`).
    Gradients are built by each op's DmGradientOpInterface in reverse order
    and summed where a value has several uses. Forward results the backward
    reads pass through one `dm.save` each (the saved activations). Dropout
    masks are regenerated from the same Philox counters, never stored. The
    function gets the unit attribute `dm.training`.
  }];
  let dependentDialects = ["::dmc::dm::DmDialect"];
}

#endif // DMC_PASSES_TD
