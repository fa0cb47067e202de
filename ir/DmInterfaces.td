//===- DmInterfaces.td - iteration space and gradient -------*- tablegen -*-===//
#ifndef DM_INTERFACES_TD
#define DM_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Dm_IterationSpaceOpInterface : OpInterface<"IterationSpaceOpInterface"> {
  let cppNamespace = "::dmc::dm";
  let description = [{
    The loop nest an op performs, in terms of dimension names. The iteration
    space is the union of the names of all tensor operands and results; the
    reduction dims are the ones whose loop accumulates (summed or normalized
    over). Dims private to an operand are derived (see IterationSpace.h).
    Classification, fusion legality, flop/byte counting and loop nests read
    this interface, never op names.
  }];
  let methods = [
    InterfaceMethod<"Names of the reduction dimensions.",
      "std::string", "getReductionDims", (ins), [{}], [{
        return ::dmc::dm::defaultReductionDims($_op.getOperation());
      }]>,
    InterfaceMethod<"Floating-point operations per point of the iteration space.",
      "double", "getFlopPerPoint", (ins), [{}], [{ return 1.0; }]>,
    InterfaceMethod<[{Whether a letter names the same dimension in the operands
      and the results (false for ops that rename dimensions).}],
      "bool", "sharesDimNames", (ins), [{}], [{ return true; }]>,
    InterfaceMethod<[{Whether the op only reinterprets memory (renames, slices
      of an outer dimension, saved activations): it moves no data and belongs
      to no kernel.}],
      "bool", "isView", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{Whether results depend on the logical index of each
      element (dropout): such ops cannot be rewritten over a stacked tensor.}],
      "bool", "readsElementIndex", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{How many leading operands span the iteration space; the
      rest (a contraction's epilogue bias) add no dims and are private to no
      loop.}],
      "unsigned", "getNumSpaceOperands", (ins), [{}], [{
        return $_op->getNumOperands();
      }]>,
    InterfaceMethod<[{Dims of the op's tensors that pack many points of the
      space into one element (the words of dropout keep bits): they are not
      loops of the space, which runs over the packed dims instead.}],
      "std::string", "getPackedDims", (ins), [{}], [{ return std::string(); }]>,
    InterfaceMethod<"A short name for kernel names and reports.",
      "std::string", "getShortName", (ins), [{}], [{
        return $_op->getName().stripDialect().str();
      }]>,
  ];
  let verify = [{ return ::dmc::dm::verifyConsistentDims($_op); }];
}

def Dm_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::dmc::dm";
  let description = [{
    The backward rule of a forward op: given the gradients of its results
    (null where no gradient flows), build the gradients of its operands (null
    where the operand is not differentiable). Forward values the rule reads
    go through `ctx.saved(v)`, which makes saved activations explicit.
  }];
  let methods = [
    InterfaceMethod<"Build the operand gradients.",
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$b, "::dmc::dm::GradientContext &":$ctx,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

def Dm_EvaluableOpInterface : OpInterface<"EvaluableOpInterface"> {
  let cppNamespace = "::dmc::dm";
  let description = [{
    What an op computes, on host tensors: the reference interpreter's
    semantics of the op. Implemented outside the dialect, by external models
    the interpreter attaches (compiler/evaluation/), so the dialect stays free
    of host kernels; `Evaluation` (compiler/evaluation/Evaluation.h) gives
    the operands' values, the results to fill, the precision and the seed.
  }];
  let methods = [
    InterfaceMethod<"Compute the op's results from its operands' values.",
      "void", "evaluate", (ins "::dmc::dm::Evaluation &":$eval)>,
  ];
}

def Dm_PointwiseLoweringOpInterface : OpInterface<"PointwiseLoweringOpInterface"> {
  let cppNamespace = "::dmc::dm";
  let description = [{
    How an op inside a generated (row or elementwise) kernel becomes nodes of
    its node graph: loads, fp32 maps and reductions over the kernel's rows
    (codegen/NodeGraph.h). Implemented outside the dialect, by external
    models code generation attaches (codegen/lowering/); `PointwiseLowering`
    (codegen/lowering/PointwiseLowering.h) gives the operands' nodes and
    builds new ones. A failure leaves the reason in the lowering.
  }];
  let methods = [
    InterfaceMethod<"Add the op's nodes and bind its results to them.",
      "::mlir::LogicalResult", "lowerToNodes", (ins "::dmc::dm::PointwiseLowering &":$lowering)>,
  ];
}

#endif // DM_INTERFACES_TD
