//===- RankCorrelation.cpp - Spearman's rank correlation ------------------===//
#include "runtime/RankCorrelation.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace dmrt {

namespace {
/// Ranks 1..n of `v`, ties at their average rank.
std::vector<double> ranks(const std::vector<double> &v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
      ++j;
    for (size_t k = i; k <= j; ++k)
      r[order[k]] = 0.5 * double(i + j) + 1.0;
    i = j + 1;
  }
  return r;
}
} // namespace

double spearman(const std::vector<double> &a, const std::vector<double> &b) {
  const size_t n = a.size();
  if (n < 2 || b.size() != n)
    return std::nan("");
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double ma = 0, mb = 0;
  for (size_t i = 0; i < n; ++i) {
    ma += ra[i];
    mb += rb[i];
  }
  ma /= double(n);
  mb /= double(n);
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0)
    return std::nan("");
  return sab / std::sqrt(saa * sbb);
}

} // namespace dmrt
