//===- Passes.h - dm pass declarations and registration -------------------===//
#ifndef DMC_PASSES_PASSES_H
#define DMC_PASSES_PASSES_H

#include "ir/DmDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace dmc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace dmc

#endif // DMC_PASSES_PASSES_H
