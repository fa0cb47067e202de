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

#endif // DM_INTERFACES_TD
