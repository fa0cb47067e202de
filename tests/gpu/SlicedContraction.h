//===- SlicedContraction.h - GEMM plans for unmappable contractions -*- C++ -*-===//
//
// Test support for the whole-step GPU test. Some contractions have no single
// cuBLASLt form in the default layouts (the stacked QKV backward
// sbjhp,shpi->bji: its contracted dims s,h,p are not adjacent in sbjhp).
// When a and b share their outermost dim as a contracted one, the
// contraction is the sum over that dim of contractions of slices, each
// mappable: one GEMM per slice accumulating into d (beta = 1 after the
// first), so d holds a partial sum rounded once per slice. The compiler's
// configuration (a later issue) will choose layouts that need no such plan.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_GPU_SLICEDCONTRACTION_H
#define DMC_TESTS_GPU_SLICEDCONTRACTION_H

#include "codegen/gemm/GemmMapping.h"
#include "runtime/BundleExecutor.h"

#include <string>

namespace dmctest {

/// Plans for every unmappable contraction of `b` that slicing maps; false
/// with the reason for the first that cannot be planned.
inline bool planSlicedContractions(const dmrt::Bundle &b, dmrt::GemmPlans &plans,
                                   std::string &error) {
  for (const dmrt::BundleContraction &c : b.contractions) {
    if (c.mappable)
      continue;
    const dmrt::BundleTensor *a = b.tensor(c.a), *bt = b.tensor(c.b), *d = b.tensor(c.d);
    char s = a->dims.empty() ? 0 : a->dims[0];
    std::string name = "contraction " + std::to_string(c.id) + " (" + c.equation + ")";
    if (!s || bt->dims.empty() || bt->dims[0] != s || d->dims.find(s) != std::string::npos ||
        c.bias >= 0 || c.epilogue != dmrt::Epilogue::None) {
      error = name + " has no cuBLASLt form (" + c.unmappable +
              ") and a, b share no outermost contracted dim to slice along";
      return false;
    }
    dmcgen::Contraction slice;
    slice.a = {a->dims.substr(1), std::vector<int64_t>(a->shape.begin() + 1, a->shape.end())};
    slice.b = {bt->dims.substr(1), std::vector<int64_t>(bt->shape.begin() + 1, bt->shape.end())};
    slice.d = {d->dims, d->shape};
    slice.alpha = c.alpha;
    int64_t aSlice = a->numElements() / a->shape[0], bSlice = bt->numElements() / bt->shape[0];
    std::vector<dmrt::GemmCall> calls;
    for (int64_t n = 0; n < a->shape[0]; ++n) {
      slice.beta = n == 0 ? c.beta : 1.0;
      dmrt::GemmCall call;
      std::string reason;
      if (!dmcgen::mapContraction(slice, call.gemm, reason)) {
        error = name + " has no cuBLASLt form (" + c.unmappable + "), nor has its slice along '" +
                std::string(1, s) + "': " + reason;
        return false;
      }
      call.aOffset = n * aSlice;
      call.bOffset = n * bSlice;
      calls.push_back(call);
    }
    plans[c.id] = std::move(calls);
  }
  return true;
}

} // namespace dmctest

#endif // DMC_TESTS_GPU_SLICEDCONTRACTION_H
