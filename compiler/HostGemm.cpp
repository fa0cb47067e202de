//===- HostGemm.cpp - the interpreter's contractions as blocked matrix products ===//
#include "compiler/HostGemm.h"

#include "llvm/Support/Parallel.h"

#include <algorithm>
#include <array>

namespace dmc {
namespace {

/// Register block of the inner kernel (rows x columns of the result) and the
/// depth of one pass over the packed panels (kept in L1/L2 across a pass).
constexpr int64_t kRows = 4, kCols = 8, kDepth = 256;
/// Row panels one task computes: its packed rows stay in L2 across a pass.
constexpr int64_t kPanelsPerTask = 16;

/// c[kRows x kCols] (row stride ldc) += the products of `depth` steps of a
/// row panel (depth x kRows) and a column panel (depth x kCols), each
/// element's sum in step order: the order of the scalar loop.
template <typename T>
inline void innerKernel(const T *__restrict ap, const T *__restrict bp, int64_t depth,
                        T *__restrict c, int64_t ldc) {
  T acc[kRows][kCols];
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kCols; ++j)
      acc[i][j] = c[i * ldc + j];
  for (int64_t k = 0; k < depth; ++k)
    for (int64_t i = 0; i < kRows; ++i) {
      const T av = ap[k * kRows + i];
      for (int64_t j = 0; j < kCols; ++j)
        acc[i][j] += av * bp[k * kCols + j];
    }
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kCols; ++j)
      c[i * ldc + j] = acc[i][j];
}

} // namespace

template <typename T>
bool hostGemm(const HostTensor &a, const HostTensor &b, T scale, const std::string &reduced,
              HostTensor &out) {
  std::string batch, rows, cols;
  for (char d : out.dims) {
    if (a.has(d) && b.has(d))
      batch += d;
    else if (a.has(d))
      rows += d;
    else if (b.has(d))
      cols += d;
    else
      return false;
  }
  for (char d : reduced)
    if (!a.has(d) || !b.has(d))
      return false;
  auto sizes = [&](llvm::StringRef dims) {
    std::vector<int64_t> s;
    for (char d : dims)
      s.push_back(out.has(d) ? out.size(d) : a.size(d));
    return s;
  };
  for (char d : out.dims)
    if (out.size(d) == 0)
      return true;
  auto g = pointOffsets<3>(batch, sizes(batch), {&a, &b, &out});
  auto m = pointOffsets<2>(rows, sizes(rows), {&a, &out});
  auto n = pointOffsets<2>(cols, sizes(cols), {&b, &out});
  auto k = pointOffsets<2>(reduced, sizes(reduced), {&a, &b});
  const int64_t G = g.size(), M = m.size(), N = n.size(), K = k.size();
  const int64_t rowPanels = (M + kRows - 1) / kRows, colPanels = (N + kCols - 1) / kCols;
  const int64_t ldc = colPanels * kCols;

  // b packed once: per batch and column panel, K steps of kCols (zero padded).
  std::vector<T> bPacked(size_t(G * colPanels * K * kCols));
  llvm::parallelFor(0, size_t(G * colPanels), [&](size_t task) {
    int64_t gi = int64_t(task) / colPanels, cp = int64_t(task) % colPanels;
    T *dst = bPacked.data() + task * K * kCols;
    for (int64_t ki = 0; ki < K; ++ki)
      for (int64_t j = 0; j < kCols; ++j) {
        int64_t ni = cp * kCols + j;
        dst[ki * kCols + j] =
            ni < N ? static_cast<T>(b.data[size_t(g[gi][1] + n[ni][0] + k[ki][1])]) : T(0);
      }
  });

  // One task: kPanelsPerTask row panels of one batch, packed, against every
  // column panel, pass by pass over the reduced steps.
  const int64_t tasksPerBatch = (rowPanels + kPanelsPerTask - 1) / kPanelsPerTask;
  llvm::parallelFor(0, size_t(G * tasksPerBatch), [&](size_t task) {
    int64_t gi = int64_t(task) / tasksPerBatch;
    int64_t p0 = int64_t(task) % tasksPerBatch * kPanelsPerTask;
    int64_t panels = std::min(kPanelsPerTask, rowPanels - p0);
    std::vector<T> aPacked(size_t(panels * K * kRows));
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t ki = 0; ki < K; ++ki)
        for (int64_t i = 0; i < kRows; ++i) {
          int64_t mi = (p0 + p) * kRows + i;
          aPacked[size_t((p * K + ki) * kRows + i)] =
              mi < M ? static_cast<T>(a.data[size_t(g[gi][0] + m[mi][0] + k[ki][0])]) : T(0);
        }
    std::vector<T> c(size_t(panels * kRows * ldc), T(0));
    const T *bBatch = bPacked.data() + gi * colPanels * K * kCols;
    for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
      int64_t depth = std::min(kDepth, K - k0);
      for (int64_t cp = 0; cp < colPanels; ++cp)
        for (int64_t p = 0; p < panels; ++p)
          innerKernel(aPacked.data() + (p * K + k0) * kRows,
                      bBatch + (cp * K + k0) * kCols, depth,
                      c.data() + p * kRows * ldc + cp * kCols, ldc);
    }
    for (int64_t r = 0; r < panels * kRows; ++r) {
      int64_t mi = p0 * kRows + r;
      if (mi >= M)
        break;
      int64_t base = g[gi][2] + m[mi][1];
      for (int64_t ni = 0; ni < N; ++ni)
        out.data[size_t(base + n[ni][1])] = static_cast<T>(c[size_t(r * ldc + ni)] * scale);
    }
  });
  return true;
}

template bool hostGemm<float>(const HostTensor &, const HostTensor &, float,
                              const std::string &, HostTensor &);
template bool hostGemm<double>(const HostTensor &, const HostTensor &, double,
                               const std::string &, HostTensor &);

} // namespace dmc
