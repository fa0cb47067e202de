//===- Signature.h - names and roles of a layer function's values ---------===//
//
// A layer is a `func.func` of dm ops. Each argument and result carries
//   dm.name: the tensor's name in safetensors files and reports ("x",
//            "attn.wq", "dy", "attn.wq.grad"), and
//   dm.role: input | param | grad_output (arguments), output | grad (results).
// Arguments may carry dm.init_mean / dm.init_range (float tensors: uniform in
// mean +- range) or dm.init_max (integer tensors: uniform in [1, max]) for
// inputs generated from a seed.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_IR_SIGNATURE_H
#define DMC_IR_SIGNATURE_H

#include "ir/DmDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dmc::dm {

inline constexpr llvm::StringLiteral kNameAttr = "dm.name";
inline constexpr llvm::StringLiteral kRoleAttr = "dm.role";
inline constexpr llvm::StringLiteral kInitMeanAttr = "dm.init_mean";
inline constexpr llvm::StringLiteral kInitRangeAttr = "dm.init_range";
inline constexpr llvm::StringLiteral kInitMaxAttr = "dm.init_max";
/// Unit attribute on a function that dm-autodiff has made a training graph.
inline constexpr llvm::StringLiteral kTrainingAttr = "dm.training";

llvm::StringRef argName(mlir::func::FuncOp f, unsigned index);
llvm::StringRef argRole(mlir::func::FuncOp f, unsigned index);
llvm::StringRef resultName(mlir::func::FuncOp f, unsigned index);
llvm::StringRef resultRole(mlir::func::FuncOp f, unsigned index);

/// Appends an argument of `type` named `name` with role `role`.
mlir::BlockArgument addArgument(mlir::func::FuncOp f, mlir::Type type, llvm::StringRef name,
                                llvm::StringRef role);
/// Makes `values` the function's results, named and with roles, updating its type.
void setResults(mlir::func::FuncOp f, mlir::ValueRange values,
                llvm::ArrayRef<std::string> names, llvm::ArrayRef<std::string> roles);

} // namespace dmc::dm

#endif // DMC_IR_SIGNATURE_H
