//===- Interpreter.h - reference evaluation of dm functions on the CPU ----===//
//
// Evaluates any function of dm ops, before or after any pass, in fp32 or
// fp64. Dropout masks come from Philox exactly as documented in
// runtime/format/device/Philox.h, so GPU kernels can reproduce them bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_INTERPRETER_H
#define DMC_COMPILER_INTERPRETER_H

#include "compiler/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace dmc {

enum class Precision { F32, F64 };

struct InterpreterOptions {
  Precision precision = Precision::F32;
  /// The run's dropout seed (the Philox key).
  uint64_t seed = 0;
};

/// Runs `f` on `args` (one per argument, dims and shape as the argument's
/// type). Returns one tensor per result.
llvm::Expected<std::vector<HostTensor>> interpret(mlir::func::FuncOp f,
                                                  const std::vector<HostTensor> &args,
                                                  const InterpreterOptions &options);

/// Runs the single op `op` (any dm op, or a dm.kernel) on `operands`, one per
/// operand with its type's dims. Returns one tensor per result.
llvm::Expected<std::vector<HostTensor>> interpretOp(mlir::Operation *op,
                                                    const std::vector<HostTensor> &operands,
                                                    const InterpreterOptions &options);

/// An empty tensor with the dims and shape of a dm tensor type.
HostTensor allocateFor(mlir::Type type);

} // namespace dmc

#endif // DMC_COMPILER_INTERPRETER_H
