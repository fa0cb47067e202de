//===- SlicedContraction.h - GEMM plans for unmappable contractions -*- C++ -*-===//
//
// Test support for the whole-step GPU test. Some contractions have no single
// cuBLASLt form in the default layouts: the attention contractions
// (bjhp,bkhp->bhjk: batch dims b,h interleaved with j) and the stacked QKV
// backward (sbjhp,shpi->bji: contracted dims s,h,p not adjacent). When a and b
// share their outermost dim, the contraction splits into one per slice of it,
// each mappable:
//  - a contracted dim (not in d): the slices' results add up in d (beta = 1
//    after the first), so d holds a partial sum rounded once per slice;
//  - a batch dim (outermost in d too): each slice writes its own slice of d.
// The compiler's configuration (a later issue) will choose layouts that need
// no such plan.
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
    size_t inD = d->dims.find(s);
    std::string name = "contraction " + std::to_string(c.id) + " (" + c.equation + ")";
    if (!s || bt->dims.empty() || bt->dims[0] != s || (inD != std::string::npos && inD != 0) ||
        c.bias >= 0 || c.epilogue != dmrt::Epilogue::None) {
      error = name + " has no cuBLASLt form (" + c.unmappable +
              ") and a, b (and d) share no outermost dim to slice along";
      return false;
    }
    bool batch = inD == 0;
    auto rest = [](const dmrt::BundleTensor *t) {
      return dmcgen::TensorLayout{t->dims.substr(1),
                                  std::vector<int64_t>(t->shape.begin() + 1, t->shape.end())};
    };
    dmcgen::Contraction slice;
    slice.a = rest(a);
    slice.b = rest(bt);
    slice.d = batch ? rest(d) : dmcgen::TensorLayout{d->dims, d->shape};
    slice.alpha = c.alpha;
    int64_t slices = a->shape[0];
    std::vector<dmrt::GemmCall> calls;
    for (int64_t n = 0; n < slices; ++n) {
      slice.beta = batch || n == 0 ? c.beta : 1.0;
      dmrt::GemmCall call;
      std::string reason;
      if (!dmcgen::mapContraction(slice, call.gemm, reason)) {
        error = name + " has no cuBLASLt form (" + c.unmappable + "), nor has its slice along '" +
                std::string(1, s) + "': " + reason;
        return false;
      }
      call.aOffset = n * (a->numElements() / slices);
      call.bOffset = n * (bt->numElements() / slices);
      call.dOffset = batch ? n * (d->numElements() / slices) : 0;
      calls.push_back(call);
    }
    plans[c.id] = std::move(calls);
  }
  return true;
}

} // namespace dmctest

#endif // DMC_TESTS_GPU_SLICEDCONTRACTION_H
