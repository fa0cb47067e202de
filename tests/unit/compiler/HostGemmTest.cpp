//===- HostGemmTest.cpp - the interpreter's blocked matrix products -------===//
//
// hostGemm against the one-element-at-a-time loop it replaces, bit for bit,
// in float and double: batch, row and column dims in every position of the
// layouts, sizes that fill no register block or depth pass evenly, several
// reduced dims, an empty batch. A planted change of one element, of the
// summation order, or of the scale is caught; contractions that are not a
// batch of matrix products are refused and left untouched.
//
//===----------------------------------------------------------------------===//
#include "compiler/HostGemm.h"

#include "RandomTensor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

using namespace dmc;

namespace {

std::map<char, int64_t> sizes = {{'b', 2}, {'h', 3}, {'j', 13}, {'k', 11}, {'p', 300},
                                 {'q', 3}, {'u', 9}};

HostTensor tensor(const std::string &dims, unsigned seed) {
  return test::randomTensor(dims, sizes, seed);
}

/// The loop hostGemm replaces: each result summed in T over `reduced`,
/// row-major in that order, from zero, then scaled; `reversed` sums the
/// other way round (a planted change of order).
template <typename T>
HostTensor scalarContract(const HostTensor &a, const HostTensor &b, T scale,
                          const std::string &reduced, const std::string &outDims,
                          bool reversed = false) {
  HostTensor out = tensor(outDims, 0);
  std::vector<int64_t> rs;
  for (char d : reduced)
    rs.push_back(sizes.at(d));
  auto inner = pointOffsets<2>(reduced, rs, {&a, &b});
  if (reversed)
    std::reverse(inner.begin(), inner.end());
  forEachPoint<3>(out.dims, out.shape, {&a, &b, &out}, [&](const auto &, const auto &o) {
    T acc = 0;
    for (const auto &r : inner)
      acc += static_cast<T>(a.data[o[0] + r[0]]) * static_cast<T>(b.data[o[1] + r[1]]);
    out.data[o[2]] = static_cast<T>(acc * scale);
  });
  return out;
}

bool sameBits(const HostTensor &x, const HostTensor &y) {
  return x.data.size() == y.data.size() &&
         std::memcmp(x.data.data(), y.data.data(), x.data.size() * sizeof(double)) == 0;
}

template <typename T>
void expectSame(const std::string &aDims, const std::string &bDims, const std::string &outDims,
                const std::string &reduced) {
  HostTensor a = tensor(aDims, 1), b = tensor(bDims, 2);
  HostTensor got = tensor(outDims, 3);
  ASSERT_TRUE(hostGemm<T>(a, b, T(0.37), reduced, got)) << aDims << "," << bDims;
  HostTensor want = scalarContract<T>(a, b, T(0.37), reduced, outDims);
  EXPECT_TRUE(sameBits(got, want)) << aDims << "," << bDims << "->" << outDims;
}

TEST(HostGemm, BitIdenticalToTheScalarLoop) {
  // p = 300 spans two depth passes, j = 13 and k = 11 fill no block evenly.
  for (auto [a, b, out, red] : std::vector<std::array<const char *, 4>>{
           {"jp", "kp", "jk", "p"},
           {"pj", "pk", "kj", "p"},
           {"bhjp", "bhkp", "bhjk", "p"},
           {"bhjk", "bhkp", "jbhp", "k"},
           {"bjhp", "uhp", "bju", "hp"},
           {"bju", "bjk", "ku", "bj"},
           {"hpb", "qbk", "kqhp", "b"},
       }) {
    expectSame<float>(a, b, out, red);
    expectSame<double>(a, b, out, red);
  }
}

TEST(HostGemm, EmptyBatchAndUnitSizes) {
  sizes['b'] = 0;
  HostTensor a = tensor("bjp", 1), b = tensor("bkp", 2), out = tensor("bjk", 3);
  EXPECT_TRUE(hostGemm<float>(a, b, 1.f, "p", out));
  sizes['b'] = 1;
  sizes['p'] = 1;
  expectSame<float>("bjp", "bkp", "bjk", "p");
  sizes['b'] = 2;
  sizes['p'] = 300;
}

TEST(HostGemm, PlantedFaultsAreCaught) {
  HostTensor a = tensor("bjp", 1), b = tensor("bkp", 2);
  HostTensor got = tensor("bjk", 3);
  ASSERT_TRUE(hostGemm<float>(a, b, 1.f, "p", got));
  HostTensor want = scalarContract<float>(a, b, 1.f, "p", "bjk");
  ASSERT_TRUE(sameBits(got, want));
  // Summed in the other order: some element rounds differently.
  EXPECT_FALSE(sameBits(got, scalarContract<float>(a, b, 1.f, "p", "bjk", true)));
  // Another scale, or one element changed in its last bit.
  EXPECT_FALSE(sameBits(got, scalarContract<float>(a, b, 1.0001f, "p", "bjk")));
  HostTensor one = want;
  one.data[17] = std::nextafter(float(one.data[17]), 2.f);
  EXPECT_FALSE(sameBits(got, one));
}

TEST(HostGemm, RefusesWhatIsNotAMatrixProduct) {
  HostTensor a = tensor("jp", 1), b = tensor("kp", 2);
  HostTensor out = tensor("jku", 3), before = out;
  // u in neither operand (a broadcast), then p reduced from a alone.
  EXPECT_FALSE(hostGemm<float>(a, b, 1.f, "p", out));
  HostTensor c = tensor("jpu", 4), out2 = tensor("jk", 5), before2 = out2;
  EXPECT_FALSE(hostGemm<float>(c, b, 1.f, "pu", out2));
  EXPECT_TRUE(sameBits(out, before));
  EXPECT_TRUE(sameBits(out2, before2));
}

} // namespace
