//===- SampledContractionTest.cpp - a contraction's sampled reference -----===//
//
// sampledContract against the interpreter's full contraction (HostKernels)
// on random data: every stored element equal in every layout of the output
// (the swap forms included), with and without the bias epilogue; and a
// reference taken in the wrong layout differs (the comparison can fail).
//
//===----------------------------------------------------------------------===//
#include "compiler/HostKernels.h"
#include "compiler/bundle/SampledContraction.h"

#include "RandomTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace dmc;

namespace {

const std::map<char, int64_t> kSizes = {{'b', 2}, {'h', 3}, {'j', 5}, {'k', 4}, {'p', 7}};

HostTensor tensor(const std::string &dims, unsigned seed) {
  return test::randomTensor(dims, kSizes, seed);
}

/// The largest difference between the sampled elements and the full result's.
double worst(const HostTensor &a, const HostTensor &b, const std::string &outDims,
             int64_t stride, dmrt::Epilogue epilogue = dmrt::Epilogue::None,
             const HostTensor *bias = nullptr, const std::string &fullDims = "") {
  HostTensor full = tensor(fullDims.empty() ? outDims : fullDims, 0);
  HostKernels<double>::contract(a, b, 0.5, full);
  if (bias)
    HostKernels<double>::biasAdd(HostTensor(full), *bias, full);
  HostTensor out = tensor(outDims, 0);
  std::vector<double> got =
      bundle::sampledContract(a, b, 0.5, epilogue, bias, out, stride);
  EXPECT_EQ(int64_t(got.size()), (int64_t(full.data.size()) + stride - 1) / stride);
  double w = 0;
  for (size_t n = 0; n < got.size(); ++n)
    w = std::max(w, std::fabs(got[n] - full.data[n * size_t(stride)]));
  return w;
}

TEST(SampledContraction, EveryOutputLayout) {
  HostTensor a = tensor("bhjp", 1), b = tensor("bhkp", 2);
  for (const char *d : {"bhjk", "bhkj", "jbhk", "kbhj"})
    for (int64_t stride : {1, 3, 7})
      EXPECT_LT(worst(a, b, d, stride), 1e-12) << d << " stride " << stride;
}

TEST(SampledContraction, BiasEpilogue) {
  HostTensor a = tensor("bjp", 3), b = tensor("pk", 4), bias = tensor("k", 5);
  for (const char *d : {"bjk", "kbj"})
    EXPECT_LT(worst(a, b, d, 3, dmrt::Epilogue::Bias, &bias), 1e-12) << d;
}

TEST(SampledContraction, WrongLayoutDiffers) {
  // Sampled in bhkj, compared with a full result in bhjk: must not match.
  HostTensor a = tensor("bhjp", 1), b = tensor("bhkp", 2);
  EXPECT_GT(worst(a, b, "bhkj", 3, dmrt::Epilogue::None, nullptr, "bhjk"), 1e-3);
}

} // namespace
