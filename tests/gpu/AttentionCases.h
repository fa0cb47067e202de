//===- AttentionCases.h - The fused attention GPU test's problems -*- C++ -*-===//
//
// The problems dmc-attention-kernel-test checks (AttentionKernelTest.cpp):
// head dims, masks, dropout orders, strides and saved keep bits.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_ATTENTIONCASES_H
#define DMC_TESTS_GPU_ATTENTIONCASES_H

#include "codegen/attention/AttentionProblem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmc::attention_test {

/// One problem; `lens` the key lengths per batch with key padding;
/// `gradKV`, `forward`, `gradQ`: those kernels' tiles where not the default
/// (warps == 0: the default).
struct Case {
  std::string name;
  dmcgen::AttentionProblem p;
  std::vector<int32_t> lens;
  dmcgen::AttentionTiles gradKV{};
  dmcgen::AttentionTiles forward{};
  dmcgen::AttentionTiles gradQ{};
};

/// Every case for kernels of `arch`, in the order `--case I` numbers them:
/// the forward's wgmma tiles only for sm_90a, last.
std::vector<Case> cases(const std::string &arch);

} // namespace dmc::attention_test

#endif // DMC_TESTS_GPU_ATTENTIONCASES_H
