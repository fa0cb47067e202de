//===- SaveDropoutBits.h - backward kernels read saved dropout masks ------===//
#ifndef DMC_PASSES_SAVEDROPOUTBITS_H
#define DMC_PASSES_SAVEDROPOUTBITS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dmc {

/// dm-save-dropout-bits on `f` (Passes.td says what changes and when): also
/// run by `dmc compile --config` after the configuration's epilogues, where
/// the pass pipeline's config stage does not run, so that the keep bits'
/// tensors exist and take the names and layouts config.json gives them. With
/// `remarks`, each dropout drawn again gets a remark saying why.
void saveDropoutBits(mlir::func::FuncOp f, bool remarks = false);

} // namespace dmc

#endif // DMC_PASSES_SAVEDROPOUTBITS_H
