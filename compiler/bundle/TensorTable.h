//===- TensorTable.h - every tensor of a compiled layer, with its memory --===//
//
// Numbers the values of a fused training graph for the bundle: arguments,
// results of kernels and contractions, and views. A view (rename, saved
// activation, slice of a stacked tensor, parameter stored inside a stacked
// buffer) aliases the tensor it views at an element offset.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_TENSORTABLE_H
#define DMC_COMPILER_BUNDLE_TENSORTABLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include "runtime/format/TensorRole.h"

#include <string>
#include <vector>

namespace dmc::bundle {

struct TensorInfo {
  int id = 0;
  /// Argument/result name; else "t<n>" (n counts tensors other than inserted
  /// transposes' results, which are "<input>@<layout>").
  std::string name;
  dmrt::TensorRole role = dmrt::TensorRole::Intermediate;
  mlir::Value value;
  int aliasOf = -1; ///< the tensor this one views, or -1
  int64_t aliasOffset = 0;
  /// A strided view (a slice of an in-place stack, ir/InPlaceStack.h): the
  /// element stride of each dim in its base; empty: dense in its own layout.
  std::vector<int64_t> aliasStrides;
};

class TensorTable {
public:
  /// Numbers every tensor of `f`; fails on a view the runtime cannot express.
  static llvm::Expected<TensorTable> build(mlir::func::FuncOp f);

  const std::vector<TensorInfo> &tensors() const { return infos; }
  int idOf(mlir::Value v) const { return ids.lookup(v); }

private:
  int add(mlir::Value v, std::string name, dmrt::TensorRole role);
  std::vector<TensorInfo> infos;
  llvm::DenseMap<mlir::Value, int> ids;
};

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_TENSORTABLE_H
