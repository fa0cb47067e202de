//===- EpilogueRewrite.h - folding neighbours into a contraction's GEMM ----===//
//
// After fusion and layouts, a contraction's neighbour may run inside its
// cuBLASLt call as an epilogue (dm.contract's `epilogue`):
//   - "bias": the one reader of the result is a dm.kernel whose block argument
//     for it feeds exactly one dm.bias_add, with the bias read from memory;
//   - "bgrada" / "bgradb": a dm.kernel reads operand a (b) and sums it, in one
//     dm.reduce_sum that its block argument feeds, down to the operand's dims
//     that the result keeps (the bias gradient of a linear layer's dW).
//   - "accumulate": the one reader of the result is a dm.kernel whose block
//     argument for it feeds exactly one dm.add of another kernel input of the
//     result's type (a residual, a second gradient contribution): cuBLASLt
//     reads that addend as C with beta 1.
// A candidate is taken only when cuBLASLt's mapping accepts the epilogue in
// the current layouts (GemmMapping.h rule 5) and the kernel's traffic drops
// by more than the epilogue adds: the bias_add's kernel disappears or stops
// writing its result, the reduction's kernel stops reading the operand.
// Otherwise moving the op only moves its bytes.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_EPILOGUEREWRITE_H
#define DMC_PASSES_EPILOGUEREWRITE_H

#include "ir/DmDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace dmc::epilogue {

/// Bytes an epilogue saved (Candidate::bytesSaved), set by apply on the
/// contraction that runs it; the report reads it.
inline constexpr llvm::StringLiteral kSavedAttr = "dm.epilogue_saved";

/// One way to fold a neighbour of a contraction into its cuBLASLt call.
struct Candidate {
  dmrt::Epilogue kind = dmrt::Epilogue::None;
  dm::ContractOp contraction;
  dm::KernelOp kernel;          ///< the kernel that loses `op`
  mlir::Operation *op = nullptr; ///< the dm.bias_add or dm.reduce_sum in it
  /// Bytes the kernel stops moving, minus the epilogue's own (bias read or
  /// bias gradient written by cuBLASLt); > 0 for a candidate worth taking.
  int64_t bytesSaved = 0;
  /// Whether the kernel disappears.
  bool removesKernel = false;
};

/// What a candidate must satisfy beyond its structure.
struct Rules {
  /// cuBLASLt's mapping accepts it in the current layouts (a configuration
  /// file applies epilogues before layouts and checks the mapping after).
  bool mustMap = true;
  /// It saves bytes (the default pass's rule; a configuration may force it).
  bool mustSave = true;
};

/// The kinds dm-gemm-epilogues looks for, in the order it tries them.
inline constexpr dmrt::Epilogue kEpilogueKinds[] = {dmrt::Epilogue::Bias, dmrt::Epilogue::BGradA,
                                                    dmrt::Epilogue::BGradB,
                                                    dmrt::Epilogue::Accumulate};

/// The candidate of `kind` (Bias, BGradA, BGradB or Accumulate) for `c`; false with
/// `why` when there is none or it breaks `rules`.
bool findCandidate(dm::ContractOp c, dmrt::Epilogue kind, Candidate &out, std::string &why,
                   Rules rules = {});

/// The candidate saving the most bytes among all kinds; false when none.
/// Which bias gradients qualify (dm-gemm-epilogues{bias-grads}): those that
/// save bytes, all that map (a bias still must save bytes), or none.
enum class BiasGrads { Saving, All, None };
/// `addends` false: no Accumulate candidate.
bool bestCandidate(dm::ContractOp c, Candidate &out, BiasGrads biasGrads = BiasGrads::Saving,
                   bool addends = true);

/// Folds `cand` in: replaces the contraction by one with the epilogue (same
/// attributes), removes the op from its kernel and drops what the kernel no
/// longer needs (the kernel itself when it has no output left), and records
/// the bytes saved (kSavedAttr). Returns the new contraction.
dm::ContractOp apply(const Candidate &cand);

} // namespace dmc::epilogue

#endif // DMC_PASSES_EPILOGUEREWRITE_H
