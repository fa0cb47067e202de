//===- LayoutRewrite.h - changing the layout of tensors in a fused graph --===//
//
// A layout is the order of a tensor's dimension names (its type). In a fused
// training graph a tensor's storage is written by one producer: a dm.kernel,
// a dm.contract (cuBLASLt writes any D layout through the operand swap) or
// the caller (a function argument). Views (dm.rename, dm.save, dm.unstack
// slices) reinterpret that storage, so the producer's value and all views of
// it form one *storage class* whose layouts change together.
//
// Changing a class's layout is semantically neutral: every op is defined over
// names. A kernel that reads a relaid input gets a dm.transpose inside its
// region (free: codegen addresses each tensor by its own layout); a kernel
// that writes a relaid output yields through one. Where no producer can
// absorb a layout, a dm.transpose kernel is inserted for one consumer.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_LAYOUTREWRITE_H
#define DMC_PASSES_LAYOUTREWRITE_H

#include "ir/DmDialect.h"

#include "codegen/gemm/GemmMapping.h"

#include "mlir/IR/Value.h"

#include <string>

namespace dmc::layout {

/// Marks a `dm.kernel "transpose"` inserted for a contraction (by
/// dm-default-layouts or a configuration file): "operand" (a contraction
/// reads its result) or "result" (it restores the layout of a contraction's
/// result for that result's readers).
inline constexpr llvm::StringLiteral kInsertedAttr = "dm.inserted";
inline constexpr llvm::StringLiteral kInsertedForOperand = "operand";
inline constexpr llvm::StringLiteral kInsertedForResult = "result";

/// A view that moves no data and whose layout follows its input's: rename,
/// save, unstack slice.
bool isViewOp(mlir::Operation *op);
/// The layout of view `op`'s result when its input has layout `in` (a rename
/// maps letters, an unstack drops the stack letter).
std::string viewLayout(mlir::Operation *op, llvm::StringRef in);

/// The storage class of a value: its producer's value and every view of it.
struct StorageClass {
  mlir::Value root;
  /// Members in discovery order, the root first.
  llvm::SmallVector<mlir::Value> members;
  /// Contractions that produce or read a member.
  llvm::SmallVector<mlir::Operation *> contractions;
  /// Empty when the producer can write any layout; else why not.
  std::string fixed;
};

/// The class of `v` (walking views back to their producer, then forward).
StorageClass storageClassOf(mlir::Value v);

/// The root layout that gives member `v` of its class the layout `dims`
/// (a permutation of v's names); empty when a view forbids it (a stack dim
/// must stay outermost).
std::string rootLayoutFor(mlir::Value v, llvm::StringRef dims);

/// Sets the class of `root` to layout `dims`: retypes the root and its views,
/// adds transposes inside the kernels that read or write it.
void relayout(mlir::Value root, llvm::StringRef dims);

/// Makes operand `use` read a copy of its value in layout `dims`, written by
/// a `dm.kernel "transpose"` placed before the user (one per value and
/// layout, shared by later users). Returns the kernel's result.
mlir::Value insertTransposeKernel(mlir::OpOperand &use, llvm::StringRef dims);

/// Makes `c` write its result in layout `dims`, with a transpose kernel
/// right after it restoring the layout its readers have.
void insertTransposeAfter(dm::ContractOp c, llvm::StringRef dims);

/// The contraction's three tensors in their current layouts, and its epilogue.
dmcgen::Contraction contractionOf(dm::ContractOp c);
/// Whether mapContraction accepts `c` as laid out now; `why` gets the reason.
bool isMappable(dm::ContractOp c, std::string *why = nullptr);

/// Whether `names` is a permutation of `of`.
bool isPermutation(llvm::StringRef names, llvm::StringRef of);

} // namespace dmc::layout

#endif // DMC_PASSES_LAYOUTREWRITE_H
