//===- GraphSummary.h - `dmc graph --emit=summary` ------------------------===//
#ifndef DMC_COMPILER_GRAPHSUMMARY_H
#define DMC_COMPILER_GRAPHSUMMARY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace dmc {

/// Ops of a training graph that depend on an upstream gradient (role
/// grad_output) are backward; all others are forward.
llvm::DenseSet<mlir::Operation *> backwardOps(mlir::func::FuncOp f);

/// Prints op counts by kind and by class, parameters, analytic flop (forward
/// and backward) and saved activations.
void printSummary(mlir::func::FuncOp f, llvm::raw_ostream &os);

} // namespace dmc

#endif // DMC_COMPILER_GRAPHSUMMARY_H
