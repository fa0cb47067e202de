//===- TensorNames.h - stable names of a fused graph's intermediates ------===//
//
// Intermediate tensors are named "t<n>" (config.json, the manifest, the
// report): n numbers op results in block order after the arguments, leaving
// out the results of inserted transposes (LayoutRewrite.h), so layouts do not
// rename anything. Folding an epilogue removes tensors, which would shift
// every later number: before the first fold, dm-gemm-epilogues stamps each
// op with its results' names (kNamesAttr), and a stamp always wins. Results
// created later have no stamp ("": they are the layer's results, named by
// the function, or get the next free number).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_TENSORNAMES_H
#define DMC_PASSES_TENSORNAMES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace dmc::names {

/// One string per result of the op carrying it.
inline constexpr llvm::StringLiteral kNamesAttr = "dm.tensor_names";

/// Stamps every op of `f` with its results' current names, once (later
/// calls keep the first stamps).
void stampTensorNames(mlir::func::FuncOp f);

/// The name of every intermediate result of `f` (not of inserted transposes).
llvm::DenseMap<mlir::Value, std::string> intermediateNames(mlir::func::FuncOp f);

} // namespace dmc::names

#endif // DMC_PASSES_TENSORNAMES_H
