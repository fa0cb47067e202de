//===- Evaluation.h - what an op's evaluation sees of the interpreter -----===//
//
// The reference semantics of every dm op live behind dm::EvaluableOpInterface
// (ir/DmInterfaces.td), implemented by external models in this folder, one
// file per kind of op: ElementwiseEvaluation.cpp, NormalizationEvaluation.cpp,
// StructureEvaluation.cpp. The interpreter (compiler/Interpreter.cpp) attaches
// them to its context, binds values and rounds stored results; a model only
// computes an op's results from its operands through compiler/HostKernels.h.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_EVALUATION_EVALUATION_H
#define DMC_COMPILER_EVALUATION_EVALUATION_H

#include "compiler/HostTensor.h"
#include "ir/DmDialect.h"

namespace dmc::dm {

/// One op's evaluation, as the interpreter offers it to the op's model.
class Evaluation {
public:
  virtual ~Evaluation() = default;
  /// The value of `v` (an operand of the op being evaluated).
  virtual const HostTensor &operand(mlir::Value v) = 0;
  /// Result `n` of `op`, freshly allocated with its type's dims and shape.
  virtual HostTensor &result(mlir::Operation *op, unsigned n = 0) = 0;
  /// Arithmetic in fp64 (Precision::F64); fp32 otherwise.
  virtual bool inDouble() const = 0;
  /// The run's dropout seed (the Philox key).
  virtual uint64_t seed() const = 0;
};

} // namespace dmc::dm

namespace dmc::evaluation {

/// Attaches every op's EvaluableOpInterface model to `ctx` (loading the dm
/// dialect); attaching again is a no-op.
void attachEvaluationModels(mlir::MLIRContext &ctx);

} // namespace dmc::evaluation

#endif // DMC_COMPILER_EVALUATION_EVALUATION_H
