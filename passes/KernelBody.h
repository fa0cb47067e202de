//===- KernelBody.h - building a dm.kernel and its region -----------------===//
#ifndef DMC_PASSES_KERNELBODY_H
#define DMC_PASSES_KERNELBODY_H

#include "ir/DmDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace dmc {

/// A dm.kernel named `name` with one block argument per input and the
/// results `results`, created at `b`'s insertion point. `body` fills the
/// region (`map` takes each input to its block argument) and returns the
/// values to yield.
dm::KernelOp buildKernelOp(
    mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name, mlir::ValueRange inputs,
    mlir::TypeRange results,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &, mlir::IRMapping &)>
        body);

/// Drops from `k` the outputs that yield a block argument (readers get the
/// kernel's input) or that `replaced` maps by result number (readers get that
/// value), then the ops and inputs nothing needs; erases `k` when no output
/// is left. The rebuilt kernel is named after its remaining members and keeps
/// the names stamped for its remaining results (passes/TensorNames.h).
void pruneKernel(dm::KernelOp k, const llvm::DenseMap<unsigned, mlir::Value> &replaced);

/// The dimension letters no tensor of `func` uses (for the words of dropout
/// keep bits), in the order they are taken.
std::string unusedDimLetters(mlir::func::FuncOp func);
/// The first of them; 0 when every candidate is taken.
char unusedDimLetter(mlir::func::FuncOp func);

} // namespace dmc

#endif // DMC_PASSES_KERNELBODY_H
