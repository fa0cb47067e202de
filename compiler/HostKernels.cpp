//===- HostKernels.cpp - reference CPU semantics of every dm op -----------===//
#include "compiler/HostKernels.h"
#include "compiler/HostGemm.h"

#include "runtime/format/device/Philox.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dmc {
namespace {

/// The dims of `t` not in `remove`.
std::string without(llvm::StringRef dims, llvm::StringRef remove) {
  std::string kept;
  for (char d : dims)
    if (remove.find(d) == llvm::StringRef::npos)
      kept.push_back(d);
  return kept;
}

template <typename T> T in(const HostTensor &t, int64_t offset) {
  return static_cast<T>(t.data[offset]);
}

constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

} // namespace

template <typename T>
void HostKernels<T>::contract(const HostTensor &a, const HostTensor &b, double scale,
                              HostTensor &out) {
  // Summed in the order of the reduced dims' names, not of a's layout: a
  // layout change (dm-default-layouts) leaves every result bit-identical.
  std::string reduced = without(a.dims + without(b.dims, a.dims), out.dims);
  std::sort(reduced.begin(), reduced.end());
  T s = static_cast<T>(scale);
  if (hostGemm<T>(a, b, s, reduced, out))
    return;
  std::vector<int64_t> rsizes;
  for (char d : reduced)
    rsizes.push_back(a.has(d) ? a.size(d) : b.size(d));
  auto inner = pointOffsets<2>(reduced, rsizes, {&a, &b});
  forEachPoint<3>(out.dims, out.shape, {&a, &b, &out}, [&](const auto &, const auto &o) {
    T acc = 0;
    for (const auto &r : inner)
      acc += in<T>(a, o[0] + r[0]) * in<T>(b, o[1] + r[1]);
    out.data[o[2]] = static_cast<T>(acc * s);
  });
}

template <typename T>
void HostKernels<T>::biasAdd(const HostTensor &x, const HostTensor &bias, HostTensor &out) {
  forEachPoint<3>(x.dims, x.shape, {&x, &bias, &out}, [&](const auto &, const auto &o) {
    out.data[o[2]] = static_cast<T>(in<T>(x, o[0]) + in<T>(bias, o[1]));
  });
}

template <typename T>
void HostKernels<T>::add(const HostTensor &a, const HostTensor &b, HostTensor &out) {
  for (size_t n = 0; n < out.data.size(); ++n)
    out.data[n] = static_cast<T>(in<T>(a, n) + in<T>(b, n));
}

template <typename T>
void HostKernels<T>::scale(const HostTensor &x, double factor, HostTensor &out) {
  for (size_t n = 0; n < out.data.size(); ++n)
    out.data[n] = static_cast<T>(in<T>(x, n) * static_cast<T>(factor));
}

template <typename T>
void HostKernels<T>::activation(const HostTensor &x, dm::ActivationKind kind,
                                HostTensor &out) {
  for (size_t n = 0; n < out.data.size(); ++n) {
    T v = in<T>(x, n), r = 0;
    switch (kind) {
    case dm::ActivationKind::Relu:
      r = v > 0 ? v : T(0);
      break;
    case dm::ActivationKind::Gelu:
      r = T(0.5) * v * (T(1) + std::erf(v * T(kSqrtHalf)));
      break;
    case dm::ActivationKind::GeluTanh:
      r = T(0.5) * v * (T(1) + std::tanh(T(kSqrt2OverPi) * (v + T(0.044715) * v * v * v)));
      break;
    }
    out.data[n] = r;
  }
}

template <typename T>
void HostKernels<T>::activationGrad(const HostTensor &dy, const HostTensor &x,
                                    dm::ActivationKind kind, HostTensor &out) {
  for (size_t n = 0; n < out.data.size(); ++n) {
    T v = in<T>(x, n), d = 0;
    switch (kind) {
    case dm::ActivationKind::Relu:
      d = v > 0 ? T(1) : T(0);
      break;
    case dm::ActivationKind::Gelu:
      d = T(0.5) * (T(1) + std::erf(v * T(kSqrtHalf))) +
          v * T(kInvSqrt2Pi) * std::exp(T(-0.5) * v * v);
      break;
    case dm::ActivationKind::GeluTanh: {
      T inner = T(kSqrt2OverPi) * (v + T(0.044715) * v * v * v);
      T t = std::tanh(inner);
      d = T(0.5) * (T(1) + t) +
          T(0.5) * v * (T(1) - t * t) * T(kSqrt2OverPi) * (T(1) + T(3 * 0.044715) * v * v);
      break;
    }
    }
    out.data[n] = static_cast<T>(in<T>(dy, n) * d);
  }
}

template <typename T>
void HostKernels<T>::dropout(const HostTensor &x, double p, uint32_t id,
                             const std::string &order, uint64_t seed, HostTensor &out) {
  uint32_t threshold = dmrt::dropoutThreshold(p);
  T keepScale = static_cast<T>(1.0 / (1.0 - p));
  uint64_t n = 0;
  forEachPoint<2>(order, sizesIn(x, order), {&x, &out}, [&](const auto &, const auto &o) {
    bool keep = dmrt::dropoutKeep(seed, id, n++, threshold);
    out.data[o[1]] = keep ? static_cast<T>(in<T>(x, o[0]) * keepScale) : T(0);
  });
}

template <typename T>
void HostKernels<T>::dropoutKeepBits(const HostTensor &x, double p, uint32_t id,
                                     const std::string &order, char key, char word,
                                     bool masked, uint64_t seed, HostTensor &out) {
  uint32_t threshold = dmrt::dropoutThreshold(p);
  std::vector<uint32_t> words(out.data.size(), 0u);
  const size_t ki = order.find(key);
  const int64_t wordStride = out.stride(word);
  uint64_t n = 0;
  // out lacks `key`, so o[1] is the offset of the row; the word adds k / 32.
  forEachPoint<2>(order, sizesIn(x, order), {&x, &out}, [&](const auto &idx, const auto &o) {
    const int64_t k = idx[ki];
    const bool keep = dmrt::dropoutKeep(seed, id, n++, threshold);
    if (keep && (!masked || in<T>(x, o[0]) != -std::numeric_limits<T>::infinity()))
      words[o[1] + (k / 32) * wordStride] |= 1u << (k % 32);
  });
  for (size_t e = 0; e < words.size(); ++e)
    out.data[e] = static_cast<double>(static_cast<int32_t>(words[e]));
}

template <typename T>
void HostKernels<T>::dropoutApplyBits(const HostTensor &x, const HostTensor &bits, double p,
                                      char key, char word, HostTensor &out) {
  T keepScale = static_cast<T>(1.0 / (1.0 - p));
  const size_t ki = x.dims.find(key);
  const int64_t wordStride = bits.stride(word);
  forEachPoint<3>(x.dims, x.shape, {&x, &bits, &out}, [&](const auto &idx, const auto &o) {
    const int64_t k = idx[ki];
    const uint32_t w = static_cast<uint32_t>(
        static_cast<int32_t>(bits.data[o[1] + (k / 32) * wordStride]));
    const bool keep = (w >> (k % 32)) & 1u;
    out.data[o[2]] = keep ? static_cast<T>(in<T>(x, o[0]) * keepScale) : T(0);
  });
}

template <typename T>
void HostKernels<T>::causalMask(const HostTensor &x, char query, char key, double fill,
                                HostTensor &out) {
  size_t qi = x.dims.find(query), ki = x.dims.find(key);
  forEachPoint<2>(x.dims, x.shape, {&x, &out}, [&](const auto &idx, const auto &o) {
    out.data[o[1]] = idx[ki] > idx[qi] ? static_cast<T>(fill) : in<T>(x, o[0]);
  });
}

template <typename T>
void HostKernels<T>::keyPaddingMask(const HostTensor &x, const HostTensor &lengths, char key,
                                    double fill, HostTensor &out) {
  size_t ki = x.dims.find(key);
  forEachPoint<3>(x.dims, x.shape, {&x, &lengths, &out}, [&](const auto &idx, const auto &o) {
    bool masked = idx[ki] >= static_cast<int64_t>(lengths.data[o[1]]);
    out.data[o[2]] = masked ? static_cast<T>(fill) : in<T>(x, o[0]);
  });
}

template <typename T>
void HostKernels<T>::softmax(const HostTensor &x, llvm::StringRef dims, HostTensor &out) {
  auto inner = pointOffsets<1>(dims, sizesIn(x, dims), {&x});
  std::string outer = without(x.dims, dims);
  std::vector<T> e(inner.size());
  forEachPoint<1>(outer, sizesIn(x, outer), {&x}, [&](const auto &, const auto &o) {
    T mx = -std::numeric_limits<T>::infinity();
    for (const auto &r : inner)
      mx = std::max(mx, in<T>(x, o[0] + r[0]));
    T sum = 0;
    for (size_t n = 0; n < inner.size(); ++n)
      sum += e[n] = mx == -std::numeric_limits<T>::infinity()
                        ? T(0)
                        : std::exp(in<T>(x, o[0] + inner[n][0]) - mx);
    // A fully masked row has no mass: it yields zeros rather than NaN.
    T inv = sum > 0 ? T(1) / sum : T(0);
    for (size_t n = 0; n < inner.size(); ++n)
      out.data[o[0] + inner[n][0]] = static_cast<T>(e[n] * inv);
  });
}

template <typename T>
void HostKernels<T>::softmaxGrad(const HostTensor &y, const HostTensor &dy,
                                 llvm::StringRef dims, HostTensor &out) {
  auto inner = pointOffsets<1>(dims, sizesIn(y, dims), {&y});
  std::string outer = without(y.dims, dims);
  forEachPoint<1>(outer, sizesIn(y, outer), {&y}, [&](const auto &, const auto &o) {
    T dot = 0;
    for (const auto &r : inner)
      dot += in<T>(y, o[0] + r[0]) * in<T>(dy, o[0] + r[0]);
    for (const auto &r : inner)
      out.data[o[0] + r[0]] =
          static_cast<T>(in<T>(y, o[0] + r[0]) * (in<T>(dy, o[0] + r[0]) - dot));
  });
}

template <typename T>
void HostKernels<T>::logSumExp(const HostTensor &x, llvm::StringRef dims, HostTensor &out) {
  auto inner = pointOffsets<1>(dims, sizesIn(x, dims), {&x});
  constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
  forEachPoint<2>(out.dims, out.shape, {&x, &out}, [&](const auto &, const auto &o) {
    T mx = kMinusInf;
    for (const auto &r : inner)
      mx = std::max(mx, in<T>(x, o[0] + r[0]));
    T sum = 0;
    if (mx != kMinusInf)
      for (const auto &r : inner)
        sum += std::exp(in<T>(x, o[0] + r[0]) - mx);
    out.data[o[1]] = mx == kMinusInf ? kMinusInf : static_cast<T>(mx + std::log(sum));
  });
}

template <typename T>
void HostKernels<T>::softmaxLse(const HostTensor &x, const HostTensor &lse, HostTensor &out) {
  forEachPoint<3>(x.dims, x.shape, {&x, &lse, &out}, [&](const auto &, const auto &o) {
    T l = in<T>(lse, o[1]);
    out.data[o[2]] = l == -std::numeric_limits<T>::infinity()
                         ? T(0)
                         : static_cast<T>(std::exp(in<T>(x, o[0]) - l));
  });
}

template <typename T>
void HostKernels<T>::softmaxGradRowsum(const HostTensor &y, const HostTensor &dy,
                                       const HostTensor &rowsum, HostTensor &out) {
  forEachPoint<4>(y.dims, y.shape, {&y, &dy, &rowsum, &out}, [&](const auto &, const auto &o) {
    out.data[o[3]] = static_cast<T>(in<T>(y, o[0]) * (in<T>(dy, o[1]) - in<T>(rowsum, o[2])));
  });
}

template <typename T>
void HostKernels<T>::layernorm(const HostTensor &x, const HostTensor &gamma,
                               const HostTensor &beta, llvm::StringRef dims, double eps,
                               HostTensor &y, HostTensor &mean, HostTensor &rstd) {
  auto inner = pointOffsets<2>(dims, sizesIn(x, dims), {&x, &gamma});
  std::string outer = without(x.dims, dims);
  T count = static_cast<T>(inner.size());
  forEachPoint<2>(outer, sizesIn(x, outer), {&x, &mean}, [&](const auto &, const auto &o) {
    T sum = 0;
    for (const auto &r : inner)
      sum += in<T>(x, o[0] + r[0]);
    T mu = sum / count, var = 0;
    for (const auto &r : inner) {
      T d = in<T>(x, o[0] + r[0]) - mu;
      var += d * d;
    }
    T rs = T(1) / std::sqrt(var / count + static_cast<T>(eps));
    mean.data[o[1]] = mu;
    rstd.data[o[1]] = rs;
    for (const auto &r : inner)
      y.data[o[0] + r[0]] = static_cast<T>((in<T>(x, o[0] + r[0]) - mu) * rs *
                                               in<T>(gamma, r[1]) +
                                           in<T>(beta, r[1]));
  });
}

template <typename T>
void HostKernels<T>::layernormGradInput(const HostTensor &dy, const HostTensor &x,
                                        const HostTensor &mean, const HostTensor &rstd,
                                        const HostTensor &gamma, llvm::StringRef dims,
                                        HostTensor &dx) {
  auto inner = pointOffsets<2>(dims, sizesIn(x, dims), {&x, &gamma});
  std::string outer = without(x.dims, dims);
  T count = static_cast<T>(inner.size());
  std::vector<T> g(inner.size()), xhat(inner.size());
  forEachPoint<2>(outer, sizesIn(x, outer), {&x, &mean}, [&](const auto &, const auto &o) {
    T mu = in<T>(mean, o[1]), rs = in<T>(rstd, o[1]), sg = 0, sgx = 0;
    for (size_t n = 0; n < inner.size(); ++n) {
      int64_t at = o[0] + inner[n][0];
      g[n] = in<T>(dy, at) * in<T>(gamma, inner[n][1]);
      xhat[n] = (in<T>(x, at) - mu) * rs;
      sg += g[n];
      sgx += g[n] * xhat[n];
    }
    for (size_t n = 0; n < inner.size(); ++n)
      dx.data[o[0] + inner[n][0]] =
          static_cast<T>(rs * (g[n] - sg / count - xhat[n] * (sgx / count)));
  });
}

template <typename T>
void HostKernels<T>::layernormGradParams(const HostTensor &dy, const HostTensor &x,
                                         const HostTensor &mean, const HostTensor &rstd,
                                         HostTensor &dgamma, HostTensor &dbeta) {
  std::vector<T> dg(dgamma.data.size(), T(0)), db(dbeta.data.size(), T(0));
  forEachPoint<3>(x.dims, x.shape, {&x, &mean, &dgamma}, [&](const auto &, const auto &o) {
    T d = in<T>(dy, o[0]);
    dg[o[2]] += d * (in<T>(x, o[0]) - in<T>(mean, o[1])) * in<T>(rstd, o[1]);
    db[o[2]] += d;
  });
  std::copy(dg.begin(), dg.end(), dgamma.data.begin());
  std::copy(db.begin(), db.end(), dbeta.data.begin());
}

template <typename T> void HostKernels<T>::reduceSum(const HostTensor &x, HostTensor &out) {
  std::vector<T> acc(out.data.size(), T(0));
  forEachPoint<2>(x.dims, x.shape, {&x, &out},
                  [&](const auto &, const auto &o) { acc[o[1]] += in<T>(x, o[0]); });
  std::copy(acc.begin(), acc.end(), out.data.begin());
}

template <typename T> void HostKernels<T>::copyInto(const HostTensor &x, HostTensor &out) {
  forEachPoint<2>(out.dims, out.shape, {&x, &out},
                  [&](const auto &, const auto &o) { out.data[o[1]] = x.data[o[0]]; });
}

template <typename T>
void HostKernels<T>::stack(const std::vector<const HostTensor *> &parts, char dim,
                           HostTensor &out) {
  for (size_t s = 0; s < parts.size(); ++s) {
    int64_t base = static_cast<int64_t>(s) * out.stride(dim);
    forEachPoint<2>(parts[s]->dims, parts[s]->shape, {parts[s], &out},
                    [&](const auto &, const auto &o) {
                      out.data[base + o[1]] = parts[s]->data[o[0]];
                    });
  }
}

template <typename T>
void HostKernels<T>::unstack(const HostTensor &x, char dim, std::vector<HostTensor *> &parts) {
  for (size_t s = 0; s < parts.size(); ++s) {
    int64_t base = static_cast<int64_t>(s) * x.stride(dim);
    forEachPoint<2>(parts[s]->dims, parts[s]->shape, {&x, parts[s]},
                    [&](const auto &, const auto &o) {
                      parts[s]->data[o[1]] = x.data[base + o[0]];
                    });
  }
}

template struct HostKernels<float>;
template struct HostKernels<double>;

} // namespace dmc
