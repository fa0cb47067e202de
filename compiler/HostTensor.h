//===- HostTensor.h - CPU tensors with named dimensions -------------------===//
//
// The interpreter's value: dimension names in layout order, sizes, and the
// elements in row-major order of that layout. Values are stored as doubles;
// in fp32 mode every kernel computes in float and rounds its outputs to float,
// which a double holds exactly.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_HOSTTENSOR_H
#define DMC_COMPILER_HOSTTENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dmc {

struct HostTensor {
  std::string dims;
  std::vector<int64_t> shape;
  std::vector<double> data;

  HostTensor() = default;
  HostTensor(std::string dims, std::vector<int64_t> shape)
      : dims(std::move(dims)), shape(std::move(shape)), data(numElements(this->shape)) {}

  static int64_t numElements(llvm::ArrayRef<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    return n;
  }
  bool has(char d) const { return dims.find(d) != std::string::npos; }
  int64_t size(char d) const { return has(d) ? shape[dims.find(d)] : 1; }
  /// Element stride of dimension `d`; 0 when absent (broadcast).
  int64_t stride(char d) const {
    size_t pos = dims.find(d);
    if (pos == std::string::npos)
      return 0;
    int64_t s = 1;
    for (size_t n = pos + 1; n < shape.size(); ++n)
      s *= shape[n];
    return s;
  }
};

/// Visits every point of the space `dims` (sizes `sizes`) in row-major order,
/// calling f(index, offsets): index[n] is the position along dims[n],
/// offsets[t] the element offset of the point in tensor t (absent dims
/// broadcast).
template <size_t N, typename F>
void forEachPoint(llvm::StringRef dims, llvm::ArrayRef<int64_t> sizes,
                  std::array<const HostTensor *, N> tensors, F &&f) {
  size_t rank = dims.size();
  for (int64_t s : sizes)
    if (s == 0)
      return;
  std::vector<int64_t> index(rank, 0);
  std::vector<std::array<int64_t, N>> strides(rank);
  for (size_t d = 0; d < rank; ++d)
    for (size_t t = 0; t < N; ++t)
      strides[d][t] = tensors[t]->stride(dims[d]);
  std::array<int64_t, N> offsets{};
  while (true) {
    f(static_cast<const std::vector<int64_t> &>(index), static_cast<const std::array<int64_t, N> &>(offsets));
    size_t d = rank;
    while (d > 0) {
      --d;
      if (++index[d] < sizes[d]) {
        for (size_t t = 0; t < N; ++t)
          offsets[t] += strides[d][t];
        break;
      }
      for (size_t t = 0; t < N; ++t)
        offsets[t] -= strides[d][t] * (sizes[d] - 1);
      index[d] = 0;
      if (d == 0)
        return;
    }
    if (rank == 0)
      return;
  }
}

/// Relative offsets into each of `ts` of every point of the space `dims`,
/// row-major.
template <size_t N>
std::vector<std::array<int64_t, N>> pointOffsets(llvm::StringRef dims,
                                                 llvm::ArrayRef<int64_t> sizes,
                                                 std::array<const HostTensor *, N> ts) {
  std::vector<std::array<int64_t, N>> offsets;
  forEachPoint(dims, sizes, ts, [&](const auto &, const auto &o) { offsets.push_back(o); });
  return offsets;
}

/// Sizes of `dims` looked up in `t`.
inline std::vector<int64_t> sizesIn(const HostTensor &t, llvm::StringRef dims) {
  std::vector<int64_t> s;
  for (char d : dims)
    s.push_back(t.size(d));
  return s;
}

} // namespace dmc

#endif // DMC_COMPILER_HOSTTENSOR_H
