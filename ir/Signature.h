//===- Signature.h - names and roles of a layer function's values ---------===//
//
// A layer is a `func.func` of dm ops. Each argument and result carries
//   dm.name: the tensor's name in safetensors files and reports ("x",
//            "attn.wq", "dy", "attn.wq.grad"), and
//   dm.role: input | param | grad_output (arguments), output | grad (results),
//            the bundle's dmrt::TensorRole spellings (runtime/format/TensorRole.h);
//            C++ reads and writes the enum.
// Arguments may carry dm.init_mean / dm.init_range (float tensors: uniform in
// mean +- range) or dm.init_max (integer tensors: uniform in [1, max]) for
// inputs generated from a seed.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_IR_SIGNATURE_H
#define DMC_IR_SIGNATURE_H

#include "ir/DmDialect.h"

#include "runtime/format/TensorRole.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace dmc::dm {

inline constexpr llvm::StringLiteral kNameAttr = "dm.name";
inline constexpr llvm::StringLiteral kRoleAttr = "dm.role";
inline constexpr llvm::StringLiteral kInitMeanAttr = "dm.init_mean";
inline constexpr llvm::StringLiteral kInitRangeAttr = "dm.init_range";
inline constexpr llvm::StringLiteral kInitMaxAttr = "dm.init_max";
/// Unit attribute on a function that dm-autodiff has made a training graph.
inline constexpr llvm::StringLiteral kTrainingAttr = "dm.training";

llvm::StringRef argName(mlir::func::FuncOp f, unsigned index);
llvm::StringRef resultName(mlir::func::FuncOp f, unsigned index);
/// The role of argument / result `index`; none when its dm.role is missing or
/// not a role's spelling (roleText has the attribute's text for a message).
std::optional<dmrt::TensorRole> argRole(mlir::func::FuncOp f, unsigned index);
std::optional<dmrt::TensorRole> resultRole(mlir::func::FuncOp f, unsigned index);
llvm::StringRef argRoleText(mlir::func::FuncOp f, unsigned index);
llvm::StringRef resultRoleText(mlir::func::FuncOp f, unsigned index);

/// Appends an argument of `type` named `name` with role `role`.
mlir::BlockArgument addArgument(mlir::func::FuncOp f, mlir::Type type, llvm::StringRef name,
                                dmrt::TensorRole role);
/// Makes `values` the function's results, named and with roles, updating its type.
void setResults(mlir::func::FuncOp f, mlir::ValueRange values,
                llvm::ArrayRef<std::string> names, llvm::ArrayRef<dmrt::TensorRole> roles);

} // namespace dmc::dm

#endif // DMC_IR_SIGNATURE_H
