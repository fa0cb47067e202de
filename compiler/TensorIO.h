//===- TensorIO.h - layer arguments from seeds and safetensors files ------===//
#ifndef DMC_COMPILER_TENSORIO_H
#define DMC_COMPILER_TENSORIO_H

#include "compiler/Interpreter.h"

#include "runtime/Safetensors.h"

namespace dmc {

/// How argument `index` of `f` is drawn (its dm.init_* attributes; defaults
/// mean 0, range 1, max 1): recorded in the bundle (manifest `init`) so that
/// dmc-run draws the same values.
struct ArgumentInit {
  double mean = 0, range = 1;
  int64_t max = 1;
};
ArgumentInit argumentInit(mlir::func::FuncOp f, unsigned index);

/// Argument `index` of `f` drawn from `seed` as its dm.init_* attributes say:
/// stream fnv1a32(NAME) of runtime/ReferenceData.h, v in [-1, 1) mapped to
/// mean + range * v for floats; integers in [1, max].
HostTensor generateArgument(mlir::func::FuncOp f, unsigned index, uint64_t seed,
                            Precision precision);

/// Reads the named arguments present in `path` into `args` (by position) and
/// marks them in `provided`. Tensors named like a result (an earlier run's
/// output) are skipped; other unknown names and wrong shapes or dims are errors.
llvm::Error readArguments(mlir::func::FuncOp f, llvm::StringRef path, Precision precision,
                          std::vector<HostTensor> &args, std::vector<bool> &provided);

/// Writes every argument and result of `f`, named as in its signature, with
/// metadata `dims.<name>` (dimension letters in storage order).
llvm::Error writeValues(mlir::func::FuncOp f, llvm::StringRef path,
                        const std::vector<HostTensor> &args,
                        const std::vector<HostTensor> &results, Precision precision,
                        const std::map<std::string, std::string> &metadata);

} // namespace dmc

#endif // DMC_COMPILER_TENSORIO_H
