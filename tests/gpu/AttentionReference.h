//===- AttentionReference.h - Fused attention on the CPU, in double -*- C++ -*-===//
//
// The oracle of the attention kernels (tests/gpu/AttentionKernelTest.cpp and
// the host-emulation unit test): forward and backward in double precision
// from the same bf16/f16 inputs the kernels read, with dropout masks drawn
// by dmrt::dropoutWord over the problem's logical strides, so that masks are
// bit-identical to the kernels'; and the saved keep bits (keepBits: the
// forward's extra output, the backward's extra input) from the same words
// and masks. CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_ATTENTIONREFERENCE_H
#define DMC_TESTS_GPU_ATTENTIONREFERENCE_H

#include "codegen/attention/AttentionProblem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmc::attention_test {

/// A problem's inputs as the kernels read them: each 16-bit tensor in its
/// own layout (the problem's strides), lse f32, lens int32.
struct HostTensors {
  std::vector<uint16_t> q, k, v, o, dO;
  std::vector<float> lse;
  std::vector<int32_t> lens;
};

/// Results in logical order: o, dQ [b][h][j][p]; dK, dV [b][h][k][p];
/// lse, drow [b][h][j] (drow = dO . o per query: grad-q's second output).
struct Outputs {
  std::vector<double> o, lse, dQ, dK, dV, drow;
};

/// Elements a buffer needs for a tensor of these strides and sizes.
int64_t spanOf(const dmcgen::AttentionStrides &s, int64_t B, int64_t H, int64_t rows,
               int64_t D);
int64_t spanOf(const dmcgen::LseStrides &s, int64_t B, int64_t H, int64_t Lq);
/// Words a buffer of p.bits needs (ceil(Lk / 32) words per row).
int64_t keepBitsSpan(const dmcgen::AttentionProblem &p);

/// Deterministic pseudo-random q, k (uniform in [-2, 2]), v, dO (in [-1, 1]),
/// rounded to the problem's dtype; `lens` as given (key padding only). o and
/// lse are left for storeForward.
void fillInputs(const dmcgen::AttentionProblem &p, uint64_t rngSeed,
                const std::vector<int32_t> &lens, HostTensors &t);

/// o and lse of `ref` stored as the backward kernels' inputs (o rounded to
/// the dtype, lse to f32).
void storeForward(const dmcgen::AttentionProblem &p, const Outputs &ref, HostTensors &t);

/// Forward (o, lse) and backward (dQ, dK, dV) references. The backward uses
/// t.o as stored (Drow = dO . o, as the kernels) and exact probabilities;
/// `dropoutId` may differ from p.dropoutId (a planted fault). With
/// `keepBits` (words in p.bits' layout) the dropout mask is read from them
/// instead of drawn (what the backward kernels do under p.keepBits).
void referenceForward(const dmcgen::AttentionProblem &p, const HostTensors &t, uint64_t seed,
                      uint32_t dropoutId, Outputs &out,
                      const std::vector<uint32_t> *keepBits = nullptr);
void referenceBackward(const dmcgen::AttentionProblem &p, const HostTensors &t, uint64_t seed,
                       uint32_t dropoutId, Outputs &out,
                       const std::vector<uint32_t> *keepBits = nullptr);

/// The saved keep bits of `p` as the forward writes them, in p.bits' layout
/// (keepBitsSpan words; words of no (b, h, j, w) are 0): bit i of word w of
/// row (b, h, j) is 1 iff key k = 32w + i is below Lk, visible (causal:
/// k <= j; key padding: k < clamp(lens[b], 0, Lk)) and kept
/// (dmrt::dropoutWord(seed, dropoutId, n) >= the threshold).
std::vector<uint32_t> referenceKeepBits(const dmcgen::AttentionProblem &p,
                                        const std::vector<int32_t> &lens, uint64_t seed,
                                        uint32_t dropoutId);
/// Keep-bit words of p.bits' layout in logical [b][h][j][w] order.
std::vector<uint32_t> gatherKeepBits(const dmcgen::AttentionProblem &p,
                                     const std::vector<uint32_t> &data);
/// "" when two logical keep-bit tensors are identical, else how many words
/// differ and the first (b, h, j, w) with both values.
std::string compareKeepBits(const dmcgen::AttentionProblem &p, const std::vector<uint32_t> &ref,
                            const std::vector<uint32_t> &got);

/// A kept, visible element: where its bit is in the words of p.bits' layout.
struct KeptElement {
  int64_t b = 0, h = 0, j = 0, k = 0;
  size_t word = 0; ///< index into the words
  uint32_t mask = 0; ///< its bit
  double probability = 0;
};
/// The kept, visible element with the largest probability (the one whose
/// flipped bit changes the gradients most); probability 0 when none is kept.
KeptElement heaviestKeptElement(const dmcgen::AttentionProblem &p, const HostTensors &t,
                                const std::vector<uint32_t> &keepBits);

/// The rtol of dmrt::compareOutput for kernel output `output` ("o", "lse",
/// "dQ", "dK", "dV", "drow") of `p`; see the definition for why.
double comparisonRtol(const dmcgen::AttentionProblem &p, const std::string &output);

/// A stored 16-bit tensor (strides s) in logical order as doubles.
std::vector<double> gather(const dmcgen::AttentionProblem &p, const std::vector<uint16_t> &data,
                           const dmcgen::AttentionStrides &s, int64_t rows);
/// A stored lse (or, with `s`, another f32 [b][h][j] tensor: drow) in logical order.
std::vector<double> gatherLse(const dmcgen::AttentionProblem &p, const std::vector<float> &data);
std::vector<double> gatherRows(const dmcgen::AttentionProblem &p, const std::vector<float> &data,
                               const dmcgen::LseStrides &s);

} // namespace dmc::attention_test

#endif // DMC_TESTS_GPU_ATTENTIONREFERENCE_H
