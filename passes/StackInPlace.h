//===- StackInPlace.h - producers write straight into a stacked tensor ---===//
#ifndef DMC_PASSES_STACKINPLACE_H
#define DMC_PASSES_STACKINPLACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dmc {

/// dm-stack-in-place on `f` (Passes.td says what moves and when): also run
/// by `dmc compile --config` after the configuration's layouts, where the
/// pass pipeline's config stage does not run. With `remarks`, each stack
/// left as a copy gets a remark saying why.
void moveStacksInPlace(mlir::func::FuncOp f, bool remarks = false);

} // namespace dmc

#endif // DMC_PASSES_STACKINPLACE_H
