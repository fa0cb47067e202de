//===- StridedView.h - a strided view's elements on the host -----*- C++ -*-===//
//
// A tensor of the manifest may be a strided view (`alias.strides`, version
// 10): a slice of a stack whose producers write in place. Its elements are
// then no contiguous range: checks copy the span it covers (from its first
// element, BundleTensor::spanElements) and gather the view's elements from
// it, in the view's own dims order, or scatter them into it. Plain C++17.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_STRIDEDVIEW_H
#define DMRT_STRIDEDVIEW_H

#include "runtime/format/Manifest.h"

#include <cstdint>
#include <vector>

namespace dmrt {

/// The view `t`'s elements, dense in its dims order, from `span` (its first
/// element onwards, spanElements() elements). A dense `t` is copied as is.
std::vector<uint8_t> gatherView(const BundleTensor &t, const uint8_t *span);

/// Writes `dense` (t's elements in its dims order) into `span`, leaving the
/// span's other bytes as they are.
void scatterView(const BundleTensor &t, const uint8_t *dense, uint8_t *span);

} // namespace dmrt

#endif // DMRT_STRIDEDVIEW_H
