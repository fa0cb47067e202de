//===- Interpreter.h - reference evaluation of dm functions on the CPU ----===//
//
// Evaluates any function of dm ops, before or after any pass, in fp32 or
// fp64, or in "storage" precision: fp32 arithmetic, with every value the GPU
// writes to memory rounded to its tensor's element type (bf16/fp16 round to
// nearest even through runtime/format/device/Float16.h, as the generated kernels and
// cuBLASLt store them). Dropout masks come from Philox exactly as documented
// in runtime/format/device/Philox.h, so GPU kernels can reproduce them bit for bit.
// Only live tensors are held: each value is freed after its last use (a
// kernel region's too), so a full-size gpt2-medium reference run peaks at
// 5.3 GB instead of 10.2.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_INTERPRETER_H
#define DMC_COMPILER_INTERPRETER_H

#include "compiler/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace dmc {

enum class Precision {
  F32,
  F64,
  /// fp32 arithmetic; the arguments and the results of every op of the
  /// function body (not of the ops inside a dm.kernel, which stay in
  /// registers) are rounded to their element type. At --stage fuse these are
  /// exactly the tensors a compiled bundle stores: kernel and contraction
  /// outputs (views only rename memory; rounding is idempotent).
  Storage,
};

/// "f32", "f64", "storage" (as --precision spells them).
const char *precisionName(Precision p);

struct InterpreterOptions {
  Precision precision = Precision::F32;
  /// The run's dropout seed (the Philox key).
  uint64_t seed = 0;
  /// Testing only, Precision::Storage: the op of the function body with this
  /// index (in block order, counting every op) keeps its fp32 results, a
  /// planted fault that the storage checks must catch. -1: none.
  int plantUnroundedOp = -1;
  /// Ops inside a kernel marked dm.rounded (the score gradient of fused
  /// attention, which the kernel rounds for its tensor cores) store their
  /// results in their element type. Always so at Precision::Storage;
  /// per-kernel references (dmc compile --reference) set it at F32 too.
  bool roundKernelOperands = false;
  /// interpretOp of a dm.kernel: when set, one tensor per result, filled
  /// for a result yielded by a dm.contract marked dm.rescaled_rounding with
  /// the spread of rounding its products: sqrt(sum over the reduced dims of
  /// (scale a b)^2), the scale of the error that rounding each product's
  /// operand once (relative error <= u, independent) leaves in the sum; other
  /// results stay empty.
  std::vector<HostTensor> *roundingSpreads = nullptr;
};

/// `v` as a tensor of element type `element` stores it: bf16 / f16 / f32
/// round to nearest even (bf16 and f16 through float, as the GPU converts
/// its fp32 registers); f64 and integers unchanged.
double roundToElementType(double v, mlir::Type element);

/// Rounds every element of `t` to the element type of dm tensor type `type`.
void roundToStorage(HostTensor &t, mlir::Type type);

/// The first element of `t` that a tensor of dm type `type` cannot hold
/// exactly (see roundToElementType), or -1 when all are representable.
int64_t firstUnrepresentable(const HostTensor &t, mlir::Type type);

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
