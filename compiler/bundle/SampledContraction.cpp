//===- SampledContraction.cpp - a contraction's reference, sampled --------===//
#include "compiler/bundle/SampledContraction.h"

#include "llvm/Support/Parallel.h"

namespace dmc::bundle {

std::vector<double> sampledContract(const HostTensor &a, const HostTensor &b, double scale,
                                    dmrt::Epilogue epilogue, const HostTensor *bias,
                                    const HostTensor &out, int64_t stride) {
  // The reduced dims (in a and b, not in out) as one list of offset pairs.
  std::string reduced;
  for (char d : a.dims)
    if (b.has(d) && !out.has(d))
      reduced += d;
  std::vector<int64_t> offA = {0}, offB = {0};
  for (char d : reduced) {
    std::vector<int64_t> nextA, nextB;
    for (int64_t i = 0; i < a.size(d); ++i)
      for (size_t n = 0; n < offA.size(); ++n) {
        nextA.push_back(offA[n] + i * a.stride(d));
        nextB.push_back(offB[n] + i * b.stride(d));
      }
    offA.swap(nextA);
    offB.swap(nextB);
  }
  int64_t count = HostTensor::numElements(out.shape);
  int64_t step = stride < 1 ? 1 : stride;
  std::vector<double> values(size_t((count + step - 1) / step));
  // Each sample's sum in the order of offA; samples spread over the cores.
  llvm::parallelFor(0, values.size(), [&](size_t sample) {
    // The point's coordinates, row-major in out's layout.
    int64_t baseA = 0, baseB = 0, baseBias = 0, rest = int64_t(sample) * step;
    for (size_t n = out.dims.size(); n-- > 0;) {
      char d = out.dims[n];
      int64_t i = rest % out.shape[n];
      rest /= out.shape[n];
      baseA += i * a.stride(d);
      baseB += i * b.stride(d);
      if (bias)
        baseBias += i * bias->stride(d);
    }
    double acc = 0;
    for (size_t r = 0; r < offA.size(); ++r)
      acc += a.data[size_t(baseA + offA[r])] * b.data[size_t(baseB + offB[r])];
    acc *= scale;
    if ((epilogue == dmrt::Epilogue::Bias || epilogue == dmrt::Epilogue::Accumulate) && bias)
      acc += bias->data[size_t(baseBias)];
    values[sample] = acc;
  });
  return values;
}

} // namespace dmc::bundle
