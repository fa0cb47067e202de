//===- SampledContraction.cpp - a contraction's reference, sampled --------===//
#include "compiler/bundle/SampledContraction.h"

#include "compiler/HostKernels.h"

#include "llvm/Support/Parallel.h"


namespace dmc::bundle {
namespace {

/// `t` copied into the dim order `order` (a permutation of its dims).
HostTensor permuted(const HostTensor &t, const std::string &order) {
  std::vector<int64_t> shape;
  for (char d : order)
    shape.push_back(t.size(d));
  HostTensor p(order, shape);
  HostKernels<double>::copyInto(t, p);
  return p;
}

} // namespace

std::vector<double> sampledContract(const HostTensor &a, const HostTensor &b, double scale,
                                    dmrt::Epilogue epilogue, const HostTensor *bias,
                                    const HostTensor &out, int64_t stride) {
  // The reduced dims (in a and b, not in out). Each sample sums over them
  // with the first reduced dim varying fastest; both operands are first
  // copied with their reduced dims innermost in that order (the last reduced
  // dim outermost among them), so every sum reads two contiguous runs in the
  // order it always summed (the same bits), instead of strided elements all
  // over the operands (e.g. a weight gradient reducing over every token).
  std::string reduced;
  for (char d : a.dims)
    if (b.has(d) && !out.has(d))
      reduced += d;
  std::string inner(reduced.rbegin(), reduced.rend());
  auto withReducedInner = [&](const HostTensor &t) {
    std::string order;
    for (char d : t.dims)
      if (reduced.find(d) == std::string::npos)
        order += d;
    return permuted(t, order + inner);
  };
  const HostTensor pa = withReducedInner(a), pb = withReducedInner(b);
  int64_t length = 1;
  for (char d : reduced)
    length *= a.size(d);
  int64_t count = HostTensor::numElements(out.shape);
  int64_t step = stride < 1 ? 1 : stride;
  std::vector<double> values(size_t((count + step - 1) / step));
  // Samples spread over the cores.
  llvm::parallelFor(0, values.size(), [&](size_t sample) {
    // The point's coordinates, row-major in out's layout.
    int64_t baseA = 0, baseB = 0, baseBias = 0, rest = int64_t(sample) * step;
    for (size_t n = out.dims.size(); n-- > 0;) {
      char d = out.dims[n];
      int64_t i = rest % out.shape[n];
      rest /= out.shape[n];
      baseA += i * pa.stride(d);
      baseB += i * pb.stride(d);
      if (bias)
        baseBias += i * bias->stride(d);
    }
    const double *ra = pa.data.data() + baseA, *rb = pb.data.data() + baseB;
    double acc = 0;
    for (int64_t r = 0; r < length; ++r)
      acc += ra[r] * rb[r];
    acc *= scale;
    if ((epilogue == dmrt::Epilogue::Bias || epilogue == dmrt::Epilogue::Accumulate) && bias)
      acc += bias->data[size_t(baseBias)];
    values[sample] = acc;
  });
  return values;
}

} // namespace dmc::bundle
