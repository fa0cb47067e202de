//===- AttentionMatch.h - the attention pattern, read off iteration spaces -===//
//
// What dm-fuse-attention recognizes, found from op kinds and iteration spaces
// only (no op names, no positions): a contraction producing scores over a
// query dim private to one operand and a key dim private to the other, masks
// that are elementwise over the scores, a softmax over the key dim, optional
// dropout, and a contraction of the probabilities with values reducing over
// the key dim; and, in a training graph, the backward ops autodiff built from
// them.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_ATTENTIONMATCH_H
#define DMC_PASSES_ATTENTIONMATCH_H

#include "ir/DmDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace dmc {

/// The largest head dim the fused attention kernels take.
inline constexpr int64_t kMaxFusedHeadDim = 128;

struct AttentionForward {
  dm::ContractOp scores;                 ///< q . k -> [batch..., query, key]
  llvm::SmallVector<mlir::Operation *> masks; ///< causal / key padding, fill -inf
  dm::SoftmaxOp softmax;
  dm::DropoutOp dropout;                 ///< null when the model has none
  dm::ContractOp output;                 ///< probabilities . v -> [batch..., query, head]
  mlir::Value q, k, v, lengths;          ///< lengths: null without key padding
  char query = 0, key = 0, head = 0;     ///< dim letters (head: reduced by `scores`)
};

struct AttentionBackward {
  mlir::Value gradOutput;                ///< dO
  dm::ContractOp gradScores;             ///< dO . v -> d(dropped probabilities)
  dm::DropoutOp gradDropout;             ///< null when the forward has no dropout
  dm::SoftmaxGradOp softmaxGrad;
  llvm::SmallVector<mlir::Operation *> gradMasks; ///< the masks again, fill 0
  dm::ContractOp gradQ, gradK, gradV;
  mlir::Value savedQ, savedK, savedV;    ///< what the gradient contractions read
};

/// The forward pattern whose softmax is `softmax`, or why there is none.
std::optional<AttentionForward> matchAttentionForward(dm::SoftmaxOp softmax,
                                                      std::string &whyNot);

/// The backward of `fwd` in a training graph, or why it does not match.
std::optional<AttentionBackward> matchAttentionBackward(AttentionForward fwd,
                                                        std::string &whyNot);

/// Why the fused kernels cannot run `fwd` (empty when they can): 16-bit
/// storage only (an f32 layer keeps the unfused path, whose contractions
/// cuBLASLt runs in full precision) and the head dims the kernels support.
std::string attentionUnsupported(AttentionForward fwd);

} // namespace dmc

#endif // DMC_PASSES_ATTENTIONMATCH_H
