//===- InPlaceStack.h - tensors written straight into a stacked buffer ---===//
//
// A dm.stack marked `dm.in_place` (dm-stack-in-place) copies nothing: each
// input's producer writes its elements where the stack keeps them, so every
// input (and the renames between the producer and the stack) is a view of
// the stack's result. Such a slice is strided when the stack dim is not the
// result's outermost: e.g. dQ, dK and dV written into [b, j, s, h, p], each
// row of a slice 3 x h x p elements after the last. Compiler code (the
// bundle's tensor table, the attention kernels' addressing) asks where a
// value lives with inPlaceSliceOf.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_IR_INPLACESTACK_H
#define DMC_IR_INPLACESTACK_H

#include "ir/DmDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace dmc::dm {

/// On a dm.stack: its inputs are written in place (a view, see above).
inline constexpr llvm::StringLiteral kInPlaceAttr = "dm.in_place";

/// Where `v`'s elements live when `v` is an input of an in-place stack, or
/// reaches one through single-use renames: the stack, the element offset of
/// `v`'s first element in the stack's result, and the element stride of each
/// of `v`'s dims (in its type's order) there.
struct InPlaceSlice {
  StackOp stack;
  int64_t offset = 0;
  llvm::SmallVector<int64_t> strides;
};
std::optional<InPlaceSlice> inPlaceSliceOf(mlir::Value v);

/// Row-major element stride of `letter` in `t` (0 when `t` lacks it).
int64_t rowMajorStride(TensorType t, char letter);

} // namespace dmc::dm

#endif // DMC_IR_INPLACESTACK_H
