//===- HarnessFaultTest.cpp - the output check catches planted faults -----===//
//
// compareOutput against realistic references (a softmax whose values are
// ~1/512, a layernorm output of RMS ~1) and outputs with planted faults:
// the exact output and its bf16 rounding pass; a zeroed output, a 5%
// scaling, a shift by 3% of the tensor's RMS, lanes permuted within each
// vector of 8 and an unwritten (NaN) lane fail.
//
//===----------------------------------------------------------------------===//
#include "runtime/format/device/Float16.h"
#include "runtime/Harness.h"
#include "runtime/ReferenceData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>

using namespace dmrt;

namespace {

using Values = std::vector<double>;

/// Seeded values in [-1, 1) (runtime/ReferenceData.h), as kernels get them.
Values uniform(int64_t n, uint32_t stream) {
  return referenceValues(n, 99, stream, false, 1);
}

/// softmax over rows of `cols` of 2x uniform logits: values ~1/cols.
Values softmaxRef(int64_t rows, int64_t cols) {
  Values x = uniform(rows * cols, 1), y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -1e30, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      mx = std::max(mx, 2 * x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += y[r * cols + c] = std::exp(2 * x[r * cols + c] - mx);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = float(y[r * cols + c] / sum);
  }
  return y;
}

/// layernorm over rows of `cols`, gamma in [0.5, 1.5), beta in [-0.5, 0.5).
Values layernormRef(int64_t rows, int64_t cols) {
  Values x = uniform(rows * cols, 2), g = uniform(cols, 3), b = uniform(cols, 4);
  Values y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += x[r * cols + c] / cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean) / cols;
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = float((x[r * cols + c] - mean) / std::sqrt(var + 1e-5) *
                                  (1 + 0.5 * g[c]) + 0.5 * b[c]);
  }
  return y;
}

Values map(const Values &v, const std::function<double(double, size_t)> &f) {
  Values out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = f(v[i], i);
  return out;
}

double rms(const Values &v) {
  double s = 0;
  for (double x : v)
    s += x * x;
  return std::sqrt(s / v.size());
}

double toBf16(double x) { return bf16ToFloat(floatToBf16(float(x))); }

/// Each planted fault of an output of type `dtype`, and whether it must pass
/// (under the extra per-element bound `spread` when given).
void expectFaultsCaught(const Values &ref, DType dtype, const char *what,
                        const Values *spread = nullptr) {
  const double rtol = defaultTolerance(dtype);
  const double scale = rms(ref);
  auto check = [&](const Values &got, bool mustPass, const char *fault) {
    Comparison c = compareOutput(ref, got, rtol, spread);
    EXPECT_EQ(c.pass, mustPass) << what << ", " << fault << ": "
                                << describeComparison(c);
  };
  check(ref, true, "exact");
  if (dtype == DType::BF16)
    check(map(ref, [](double x, size_t) { return toBf16(x); }), true,
          "rounded to bf16");
  else
    check(map(ref, [](double x, size_t) { return double(float(x * (1 + 1e-6))); }),
          true, "fp32 summation-order differences (1e-6 relative)");
  // The faults dmrt-bench --plant-fault applies to real GPU outputs: zeroed,
  // scaled by 1.05, shifted by 3% of the RMS, lanes of each vector of 8
  // reversed (every value right, in the wrong place).
  for (PlantedFault f : {PlantedFault::Zero, PlantedFault::Scale, PlantedFault::Shift,
                         PlantedFault::Permute}) {
    Values got = ref;
    plantFault(got, f);
    check(got, false, plantedFaultName(f));
  }
  {
    Values shifted = ref;
    plantFault(shifted, PlantedFault::Shift);
    EXPECT_NEAR(shifted[0] - ref[0], 0.03 * scale, 1e-12 * scale) << what;
  }
  // Adjacent lanes swapped (a 2-wide vector store with its halves exchanged).
  check(map(ref, [&](double, size_t i) { return ref[i ^ 1]; }), false,
        "adjacent lanes swapped");
  // Lane 5 of each vector never written: the NaN fill stays.
  check(map(ref, [](double x, size_t i) {
          return i % 8 == 5 ? std::numeric_limits<double>::quiet_NaN() : x;
        }),
        false, "lane 5 unwritten (NaN)");
}

TEST(HarnessFaults, Bf16Softmax) {
  Values ref = softmaxRef(64, 512);
  double mx = *std::max_element(ref.begin(), ref.end());
  // The case the old bound (T * max(1, max|ref|)) let through: every value
  // is far below 1, so an all-zero output was within 2e-2 of it.
  ASSERT_LT(mx, 0.02);
  ASSERT_GT(rms(ref), 1e-3);
  expectFaultsCaught(ref, DType::BF16, "bf16 softmax");
}

TEST(HarnessFaults, Bf16Layernorm) {
  Values ref = layernormRef(32, 1024);
  ASSERT_GT(rms(ref), 0.5);
  expectFaultsCaught(ref, DType::BF16, "bf16 layernorm");
}

TEST(HarnessFaults, Fp32LayernormAndSoftmax) {
  expectFaultsCaught(layernormRef(32, 1024), DType::F32, "fp32 layernorm");
  expectFaultsCaught(softmaxRef(16, 512), DType::F32, "fp32 softmax");
  // fp32 outputs are held to 1e-4 of their scale: an fp32 output computed
  // through bf16 (2^-9 relative rounding) or 0.1% off fails.
  Values ref = layernormRef(8, 1024);
  for (const Values &got : {map(ref, [](double x, size_t) { return toBf16(x); }),
                            map(ref, [](double x, size_t) { return x * (1 + 1e-3); })}) {
    Comparison c = compareOutput(ref, got, defaultTolerance(DType::F32));
    EXPECT_FALSE(c.pass) << describeComparison(c);
  }
}

/// Causal attention over `len` queries and keys, head dim `dim` (q.k of
/// realistic spread, values uniform): the exact output, the output of a
/// flash-style kernel that rounds exp(s - running max) to bf16 per tile of
/// 64 keys before its P x V product and normalizes at the end, and the
/// reference's spread for that rounding (docs/bundle-format.md,
/// `spread.out<k>`: 4 u sqrt(sum_j (p_j v_j)^2), u = 2^-8).
struct CausalAttention {
  Values ref, kernel, spread;
};
CausalAttention causalAttention(int64_t len, int64_t dim) {
  Values s = uniform(len * len, 5), v = uniform(len * dim, 6);
  CausalAttention a;
  a.ref.assign(len * dim, 0);
  a.kernel.assign(len * dim, 0);
  a.spread.assign(len * dim, 0);
  for (int64_t i = 0; i < len; ++i) {
    auto score = [&](int64_t j) { return 0.6 * s[i * len + j]; };
    double mx = -1e30, sum = 0;
    for (int64_t j = 0; j <= i; ++j)
      mx = std::max(mx, score(j));
    for (int64_t j = 0; j <= i; ++j)
      sum += std::exp(score(j) - mx);
    // The kernel: a running max over tiles of 64 keys, rescaling as it grows.
    float running = -1e30f, l = 0;
    std::vector<float> acc(dim, 0);
    for (int64_t t = 0; t <= i; t += 64) {
      int64_t end = std::min(i + 1, t + 64);
      float m = running;
      for (int64_t j = t; j < end; ++j)
        m = std::max(m, float(score(j)));
      float rescale = std::exp(running - m);
      l *= rescale;
      for (float &x : acc)
        x *= rescale;
      running = m;
      for (int64_t j = t; j < end; ++j) {
        float p = std::exp(float(score(j)) - m);
        l += p;
        double rounded = toBf16(p);
        for (int64_t d = 0; d < dim; ++d)
          acc[d] += float(rounded * v[j * dim + d]);
      }
    }
    for (int64_t d = 0; d < dim; ++d) {
      double o = 0, sq = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double term = std::exp(score(j) - mx) / sum * v[j * dim + d];
        o += term;
        sq += term * term;
      }
      a.ref[i * dim + d] = float(o);
      a.kernel[i * dim + d] = toBf16(acc[d] / l);
      a.spread[i * dim + d] = 4 * std::ldexp(1.0, -8) * std::sqrt(sq);
    }
  }
  return a;
}

TEST(HarnessFaults, Bf16CausalAttentionWithItsRoundingSpread) {
  // gpt2-medium's length and head dim: without the spread, the kernel's
  // rounding of P fails a few elements (as it failed every tile
  // configuration of gpt2-medium's forward on the GPU, 3 or 4 of 65536
  // sampled elements): the bound's scale is the RMS of the whole output,
  // averages over hundreds of keys, where the rounding's error follows the
  // size of each row's terms.
  CausalAttention a = causalAttention(1024, 64);
  Comparison plain = compareOutput(a.ref, a.kernel, defaultTolerance(DType::BF16));
  EXPECT_FALSE(plain.pass) << describeComparison(plain);
  Comparison c = compareOutput(a.ref, a.kernel, defaultTolerance(DType::BF16), &a.spread);
  EXPECT_TRUE(c.pass) << describeComparison(c);
  EXPECT_TRUE(c.spread);
  EXPECT_NE(describeComparison(c).find("+ spread"), std::string::npos);
  // Every planted fault still fails under the wider bound.
  expectFaultsCaught(a.ref, DType::BF16, "bf16 causal attention", &a.spread);
  // A spread of the wrong size is a mismatch, never a pass.
  Values shorter(a.spread.begin(), a.spread.end() - 1);
  Comparison bad = compareOutput(a.ref, a.ref, defaultTolerance(DType::BF16), &shorter);
  EXPECT_FALSE(bad.pass);
  EXPECT_TRUE(bad.sizeMismatch);
}

/// The residues modulo `m` of the elements a reference of `count` keeps.
std::set<int64_t> sampledResidues(int64_t count, int64_t stride, int64_t m) {
  std::set<int64_t> r;
  for (int64_t e = 0; e < count; e += stride)
    r.insert(e % m);
  return r;
}

TEST(HarnessSampling, SmallOutputsAreStoredWhole) {
  EXPECT_EQ(referenceStride(1), 1);
  EXPECT_EQ(referenceStride(1 << 18), 1);
  EXPECT_EQ(referenceStride(4 * 4 * 64 * 64), 1); // small-* attention scores
  EXPECT_EQ(referenceSampleCount(1000, 1), 1000);
  EXPECT_EQ(referenceSample(std::vector<int>{1, 2, 3}, 1), (std::vector<int>{1, 2, 3}));
}

TEST(HarnessSampling, LargeOutputsSampleEveryLaneAndPhiloxWord) {
  const int64_t maxStored = 1 << 18;
  // bert-large: token rows x hidden, x FFN, attention scores; and odd sizes.
  for (int64_t count : {int64_t(8) * 512 * 1024, int64_t(8) * 512 * 4096,
                        int64_t(8) * 16 * 512 * 512, int64_t(3) * (1 << 20) + 5,
                        int64_t(maxStored) + 1, int64_t(2) * maxStored}) {
    int64_t s = referenceStride(count, maxStored);
    EXPECT_EQ(s % 2, 1) << count;
    EXPECT_LE(referenceSampleCount(count, s), maxStored) << count;
    EXPECT_GE(referenceSampleCount(count, s), maxStored / 3) << count;
    EXPECT_EQ(sampledResidues(count, s, 8).size(), 8u) << count << " stride " << s;
    EXPECT_EQ(sampledResidues(count, s, 4).size(), 4u) << count << " stride " << s;
    EXPECT_EQ(sampledResidues(count, s, 1024).size(), 1024u) << count; // columns
  }
  // What the even stride ceil(count / maxStored) = 16 kept: lane 0 alone.
  EXPECT_EQ(sampledResidues(int64_t(8) * 512 * 1024, 16, 8).size(), 1u);
}

TEST(HarnessSampling, UnwrittenLaneOfALargeOutputFails) {
  // 4M elements sampled as the compiler stores them: lane 5 of every vector
  // of 8 left at the NaN fill must be seen.
  const int64_t count = int64_t(8) * 512 * 1024;
  Values full = uniform(count, 7);
  int64_t s = referenceStride(count);
  Values ref = referenceSample(full, s);
  Values got = full;
  for (int64_t e = 5; e < count; e += 8)
    got[e] = std::numeric_limits<double>::quiet_NaN();
  Comparison c = compareOutput(ref, referenceSample(got, s), defaultTolerance(DType::BF16));
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.nonFinite, referenceSampleCount(count, s) / 8);
  EXPECT_TRUE(compareOutput(ref, referenceSample(full, s), 0).pass);
}

TEST(HarnessSampling, ReaderChecksTheMetadata) {
  TensorFile f;
  std::string err;
  int64_t stride = 0;
  ASSERT_TRUE(referenceSampling(f, "k0.safetensors", "out0", 100, 100, stride, err)) << err;
  EXPECT_EQ(stride, 1);
  f.metadata["stride.out0"] = "9";
  f.metadata["count.out0"] = "100";
  ASSERT_TRUE(referenceSampling(f, "k0.safetensors", "out0", 100, 12, stride, err)) << err;
  EXPECT_EQ(stride, 9);
  EXPECT_FALSE(referenceSampling(f, "k0.safetensors", "out0", 100, 11, stride, err));
  EXPECT_NE(err.find("holds 11 elements"), std::string::npos) << err;
  EXPECT_FALSE(referenceSampling(f, "k0.safetensors", "out0", 200, 23, stride, err));
  EXPECT_NE(err.find("count.out0 is 100"), std::string::npos) << err;
  f.metadata["stride.out0"] = "0";
  EXPECT_FALSE(referenceSampling(f, "k0.safetensors", "out0", 100, 100, stride, err));
  EXPECT_NE(err.find("k0.safetensors: metadata stride.out0 \"0\""), std::string::npos) << err;
  f.metadata["stride.out0"] = "x";
  EXPECT_FALSE(referenceSampling(f, "k0.safetensors", "out0", 100, 100, stride, err));
}

TEST(HarnessSampling, BitFieldInputsDrawEveryBit) {
  // maxInt < 0 (a fused attention's saved keep bits): any 32-bit word as an
  // int32, so bit 31 (negative values) and high bits appear; a positive
  // maxInt stays in [1, maxInt] (sequence lengths).
  std::vector<double> w = referenceValues(256, 7, 3, true, -1);
  std::vector<double> n = referenceValues(256, 7, 3, true, 64);
  uint32_t seen = 0;
  for (double v : w) {
    ASSERT_EQ(v, std::floor(v));
    ASSERT_GE(v, -2147483648.0);
    ASSERT_LE(v, 2147483647.0);
    seen |= static_cast<uint32_t>(static_cast<int32_t>(v));
  }
  EXPECT_EQ(seen, 0xFFFFFFFFu);
  for (double v : n) {
    EXPECT_GE(v, 1);
    EXPECT_LE(v, 64);
  }
}

} // namespace
