//===- IterationSpace.h - reading an op's loop nest -----------------------===//
//
// Helpers over IterationSpaceOpInterface: the dims of the space, the dims
// private to an operand, the number of points and flop, and the operator class
// derived from the space alone (never from an op's name).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_IR_ITERATIONSPACE_H
#define DMC_IR_ITERATIONSPACE_H

#include "ir/DmDialect.h"

#include <string>
#include <vector>

namespace dmc::dm {

/// All dimension names of the op's tensors: results first, then operands.
std::string iterationDims(mlir::Operation *op);
/// Size of dimension `name` in any tensor of `op` (they agree once verified).
int64_t dimSize(mlir::Operation *op, char name);
/// The operands that span `op`'s iteration space: all but a contraction's
/// epilogue operands (IterationSpaceOpInterface::getNumSpaceOperands).
mlir::OperandRange spaceOperands(mlir::Operation *op);
/// Dims of tensor operand `index` that no other space operand has.
std::string privateDims(mlir::Operation *op, unsigned index);
/// A fused kernel's name from its members: their short names joined by '_',
/// repeats collapsed ("bias_dropout_add_layernorm").
std::string kernelNameOf(llvm::ArrayRef<mlir::Operation *> members);
/// A reducing op inside a region (a dm.kernel's body): the dims it reduces,
/// sorted, and whether it is final (its results lack them and only leave
/// the kernel through dm.yield).
struct RegionReduction {
  std::string dims;
  bool final = true;
};
/// Every reducing op of `region` with an iteration space, in walk order.
std::vector<RegionReduction> regionReductions(mlir::Region &region);
/// Product of the sizes of all iteration dims.
int64_t iterationPoints(mlir::Operation *op);
/// Analytic flop: points of the iteration space times flop per point.
double analyticFlop(IterationSpaceOpInterface op);

enum class OpClass { Contraction, Normalization, Elementwise };
/// The attribute dm-classify sets: "contraction", "normalization" or "elementwise".
inline constexpr llvm::StringLiteral kClassAttr = "dm.class";
/// On a dm.kernel with its own emitter (dm-fuse-attention): its kind,
/// "attention", "attention_grad_kv" or "attention_grad_q".
inline constexpr llvm::StringLiteral kFusedAttr = "dm.fused";
/// On an op inside a fused kernel: the kernel rounds its results to their
/// element type (e.g. the bf16 score gradient a fused attention kernel feeds
/// its tensor cores); the interpreter does so at storage precision.
inline constexpr llvm::StringLiteral kRoundedAttr = "dm.rounded";
/// On a dm.contract inside a fused kernel: the kernel rounds one of its
/// operands to the element type after scaling it by a factor the region's
/// ops cannot express (fused attention's forward rounds exp(S - running max)
/// for its P x V MMA and normalizes afterwards), so no interpreter can round
/// where it does. Per-kernel references carry the spread of that rounding
/// for the check's bound instead (InterpreterOptions::roundingSpreads).
inline constexpr llvm::StringLiteral kRescaledRoundingAttr = "dm.rescaled_rounding";
/// On the module: the name of the GPU it is compiled for
/// (codegen/target/GpuTarget.h), e.g. "h100".
inline constexpr llvm::StringLiteral kTargetAttr = "dm.target";
/// On the module: the architecture its kernels are compiled for (NVRTC's
/// --gpu-architecture, e.g. "sm_90"); absent: the target's.
inline constexpr llvm::StringLiteral kArchAttr = "dm.arch";
const char *opClassName(OpClass c);
/// Contraction: two operands each with private dims and a reduction dim they
/// share. Normalization: any other reduction. Elementwise: no reduction.
OpClass classify(IterationSpaceOpInterface op);

} // namespace dmc::dm

#endif // DMC_IR_ITERATIONSPACE_H
