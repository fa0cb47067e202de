//===- DmDialect.h - the dm dialect: types, interfaces, ops ---------------===//
//
// The one header users of the dialect include.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_IR_DMDIALECT_H
#define DMC_IR_DMDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/ActivationKind.h"
#include "runtime/format/GemmDescriptor.h"

#include <string>

#include "ir/DmDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ir/DmTypes.h.inc"

namespace dmc::dm {

/// What a gradient rule may ask of the autodiff pass.
class GradientContext {
public:
  virtual ~GradientContext() = default;
  /// `forward` as the backward reads it: results of forward ops go through
  /// one `dm.save` each; block arguments are returned unchanged.
  virtual mlir::Value saved(mlir::Value forward) = 0;
};

/// The interpreter's view of one op's evaluation (EvaluableOpInterface;
/// defined in compiler/evaluation/Evaluation.h).
class Evaluation;
/// Code generation's view of one op's lowering to kernel nodes
/// (PointwiseLoweringOpInterface; defined in codegen/lowering/PointwiseLowering.h).
class PointwiseLowering;

/// Names of the dims of the tensor operands absent from the first result.
std::string defaultReductionDims(mlir::Operation *op);
/// Every dimension name has one size across the op's tensor operands and results.
mlir::LogicalResult verifyConsistentDims(mlir::Operation *op);

} // namespace dmc::dm

#include "ir/DmInterfaces.h.inc"

#define GET_OP_CLASSES
#include "ir/DmOps.h.inc"

#endif // DMC_IR_DMDIALECT_H
