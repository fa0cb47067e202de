//===- KernelBody.h - building a dm.kernel and its region -----------------===//
#ifndef DMC_PASSES_KERNELBODY_H
#define DMC_PASSES_KERNELBODY_H

#include "ir/DmDialect.h"

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

} // namespace dmc

#endif // DMC_PASSES_KERNELBODY_H
