//===- StridedView.cpp - a strided view's elements on the host ------------===//
#include "runtime/StridedView.h"

#include <cstring>

namespace dmrt {

namespace {

/// Calls f(dense element index, span element index) for every element of `t`.
template <typename F> void forEachElement(const BundleTensor &t, F f) {
  int64_t n = t.numElements();
  if (n <= 0)
    return;
  size_t rank = t.shape.size();
  std::vector<int64_t> index(rank, 0);
  int64_t at = 0;
  for (int64_t e = 0; e < n; ++e) {
    f(e, at);
    for (size_t d = rank; d-- > 0;) {
      at += t.aliasStrides[d];
      if (++index[d] < t.shape[d])
        break;
      at -= t.aliasStrides[d] * t.shape[d];
      index[d] = 0;
    }
  }
}

} // namespace

std::vector<uint8_t> gatherView(const BundleTensor &t, const uint8_t *span) {
  size_t es = dtypeSize(t.dtype);
  std::vector<uint8_t> out(size_t(t.numElements()) * es);
  if (t.aliasStrides.size() != t.shape.size()) {
    std::memcpy(out.data(), span, out.size());
    return out;
  }
  forEachElement(t, [&](int64_t e, int64_t at) {
    std::memcpy(out.data() + size_t(e) * es, span + size_t(at) * es, es);
  });
  return out;
}

void scatterView(const BundleTensor &t, const uint8_t *dense, uint8_t *span) {
  size_t es = dtypeSize(t.dtype);
  if (t.aliasStrides.size() != t.shape.size()) {
    std::memcpy(span, dense, size_t(t.numElements()) * es);
    return;
  }
  forEachElement(t, [&](int64_t e, int64_t at) {
    std::memcpy(span + size_t(at) * es, dense + size_t(e) * es, es);
  });
}

} // namespace dmrt
