//===- GemmMappingTest.cpp - einsum -> cuBLASLt mapping + emulator tests ---===//
//
// The reference is a naive einsum over named dims (loops over the union of
// letters), written independently of the mapping. For every contraction of a
// transformer layer, every permutation of the layouts of a, b and d is tried:
// either the mapping succeeds and emulating the descriptor on the permuted
// data reproduces the reference, or it fails with a reason.
//
//===----------------------------------------------------------------------===//

#include "tests/support/GemmEmulator.h"
#include "codegen/gemm/GemmMapping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace dmcgen;
using namespace dmrt;
using namespace dmctest;

namespace {

using Sizes = std::map<char, int64_t>;
const Sizes kSizes = {{'b', 2}, {'s', 3}, {'j', 3}, {'k', 4},
                      {'h', 2}, {'p', 3}, {'i', 5}, {'u', 4}};

int64_t numel(const std::string &dims, const Sizes &sz) {
  int64_t n = 1;
  for (char c : dims)
    n *= sz.at(c);
  return n;
}

TensorLayout layoutOf(const std::string &dims, const Sizes &sz = kSizes) {
  TensorLayout t;
  t.dims = dims;
  for (char c : dims)
    t.sizes.push_back(sz.at(c));
  return t;
}

std::vector<float> randomData(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Row-major strides of `dims`, looked up by letter (0 for absent letters).
std::map<char, int64_t> strideMap(const std::string &dims, const Sizes &sz) {
  std::map<char, int64_t> m;
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    m[dims[i]] = s;
    s *= sz.at(dims[i]);
  }
  return m;
}

/// Calls f(offsetInLayout, offsetInCanon) for every element.
template <typename F>
void forEachElement(const std::string &canon, const std::string &layout,
                    const Sizes &sz, F f) {
  auto cs = strideMap(canon, sz);
  std::vector<int64_t> idx(layout.size(), 0);
  int64_t n = numel(layout, sz);
  for (int64_t off = 0; off < n; ++off) {
    int64_t co = 0;
    for (size_t i = 0; i < layout.size(); ++i)
      co += idx[i] * cs[layout[i]];
    f(off, co);
    for (size_t i = layout.size(); i-- > 0;) {
      if (++idx[i] < sz.at(layout[i]))
        break;
      idx[i] = 0;
    }
  }
}

std::vector<float> toLayout(const std::vector<float> &v,
                            const std::string &canon,
                            const std::string &layout, const Sizes &sz) {
  std::vector<float> out(v.size());
  forEachElement(canon, layout, sz,
                 [&](int64_t lo, int64_t co) { out[lo] = v[co]; });
  return out;
}

/// Naive einsum: d[dDims] = sum over the other letters of a[aDims] * b[bDims].
std::vector<double> einsumRef(const std::string &aDims,
                              const std::vector<float> &A,
                              const std::string &bDims,
                              const std::vector<float> &B,
                              const std::string &dDims, const Sizes &sz) {
  std::string all;
  for (const std::string *s : {&aDims, &bDims, &dDims})
    for (char c : *s)
      if (all.find(c) == std::string::npos)
        all += c;
  auto as = strideMap(aDims, sz), bs = strideMap(bDims, sz),
       ds = strideMap(dDims, sz);
  std::vector<double> D(numel(dDims, sz), 0.0);
  std::vector<int64_t> idx(all.size(), 0);
  int64_t total = numel(all, sz);
  for (int64_t it = 0; it < total; ++it) {
    int64_t ao = 0, bo = 0, dof = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      char c = all[i];
      if (as.count(c))
        ao += idx[i] * as[c];
      if (bs.count(c))
        bo += idx[i] * bs[c];
      if (ds.count(c))
        dof += idx[i] * ds[c];
    }
    D[dof] += (double)A[ao] * (double)B[bo];
    for (size_t i = all.size(); i-- > 0;) {
      if (++idx[i] < sz.at(all[i]))
        break;
      idx[i] = 0;
    }
  }
  return D;
}

/// Sum of x[xDims] over the letters not in keep, giving a tensor over keep.
std::vector<double> reduceTo(const std::string &xDims,
                             const std::vector<double> &x,
                             const std::string &keep, const Sizes &sz) {
  std::vector<double> out(numel(keep, sz), 0.0);
  auto ks = strideMap(keep, sz);
  forEachElement(xDims, xDims, sz, [&](int64_t off, int64_t) {
    // decode off into letters
    int64_t rem = off, ko = 0;
    for (size_t i = xDims.size(); i-- > 0;) {
      int64_t v = rem % sz.at(xDims[i]);
      rem /= sz.at(xDims[i]);
      if (ks.count(xDims[i]))
        ko += v * ks[xDims[i]];
    }
    out[ko] += x[off];
  });
  return out;
}

/// Broadcast v[vDims] to dims (offset of each element of dims into v).
std::vector<int64_t> broadcastIndex(const std::string &dims,
                                    const std::string &vDims,
                                    const Sizes &sz) {
  std::vector<int64_t> out(numel(dims, sz));
  auto vs = strideMap(vDims, sz);
  for (int64_t off = 0; off < (int64_t)out.size(); ++off) {
    int64_t rem = off, vo = 0;
    for (size_t i = dims.size(); i-- > 0;) {
      int64_t v = rem % sz.at(dims[i]);
      rem /= sz.at(dims[i]);
      if (vs.count(dims[i]))
        vo += v * vs[dims[i]];
    }
    out[off] = vo;
  }
  return out;
}

std::vector<double> toDouble(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

/// Contraction-level reference of everything a mapped GEMM must produce.
struct RefOut {
  std::vector<double> d, aux, bias; // over dDims, dDims, biasDims (canonical)
};

RefOut reference(const std::string &aD, const std::vector<float> &A,
                 const std::string &bD, const std::vector<float> &B,
                 const std::string &dD, const std::vector<float> &C0,
                 double alpha, double beta, Epilogue ep,
                 const std::string &biasDims, const std::vector<float> &bias,
                 const std::vector<float> &auxIn, const Sizes &sz) {
  RefOut r;
  std::vector<double> acc = einsumRef(aD, A, bD, B, dD, sz);
  std::vector<int64_t> bi;
  if (!biasDims.empty())
    bi = broadcastIndex(dD, biasDims, sz);
  r.d.resize(acc.size());
  if (epilogueWritesAux(ep))
    r.aux.resize(acc.size());
  for (size_t e = 0; e < acc.size(); ++e) {
    double t = alpha * acc[e] + (beta != 0 ? beta * C0[e] : 0.0);
    if (epilogueReadsBias(ep))
      t += bias[bi[e]];
    switch (ep) {
    case Epilogue::Relu: case Epilogue::ReluBias:
    case Epilogue::ReluAux: case Epilogue::ReluAuxBias:
      if (!r.aux.empty()) r.aux[e] = t > 0 ? 1 : 0;
      t = std::max(t, 0.0);
      break;
    case Epilogue::Gelu: case Epilogue::GeluBias:
    case Epilogue::GeluAux: case Epilogue::GeluAuxBias:
      if (!r.aux.empty()) r.aux[e] = t;
      t = 0.5 * t * (1 + std::tanh(std::sqrt(2 / M_PI) * (t + 0.044715 * t * t * t)));
      break;
    case Epilogue::DRelu: case Epilogue::DReluBGrad:
      t = auxIn[e] > 0 ? t : 0;
      break;
    case Epilogue::DGelu: case Epilogue::DGeluBGrad: {
      double x = auxIn[e], h = 1e-4;
      auto g = [](double y) {
        return 0.5 * y * (1 + std::tanh(std::sqrt(2 / M_PI) * (y + 0.044715 * y * y * y)));
      };
      t = t * (g(x + h) - g(x - h)) / (2 * h); // independent derivative
      break;
    }
    default:
      break;
    }
    r.d[e] = t;
  }
  if (ep == Epilogue::DReluBGrad || ep == Epilogue::DGeluBGrad)
    r.bias = reduceTo(dD, r.d, biasDims, sz);
  if (ep == Epilogue::BGradA)
    r.bias = reduceTo(aD, toDouble(A), biasDims, sz);
  if (ep == Epilogue::BGradB)
    r.bias = reduceTo(bD, toDouble(B), biasDims, sz);
  return r;
}

std::vector<std::string> permutations(std::string s) {
  std::sort(s.begin(), s.end());
  std::vector<std::string> out;
  do
    out.push_back(s);
  while (std::next_permutation(s.begin(), s.end()));
  return out;
}

/// The emulator's aux index of every element of D, per D storage offset.
std::vector<int64_t> auxIndexOfDOffset(const GemmDescriptor &g,
                                       int64_t dNumel) {
  std::vector<int64_t> out(dNumel, -1);
  for (int64_t q = 0; q < g.batchCount; ++q)
    for (int64_t c = 0; c < g.n; ++c)
      for (int64_t r = 0; r < g.m; ++r) {
        int64_t off = q * g.d.batchStride + r + c * g.d.ld;
        EXPECT_LT(off, dNumel);
        EXPECT_EQ(out[off], -1) << "two D elements at one address";
        out[off] = q * g.auxBatchStride + r + c * g.auxLd;
      }
  return out;
}

struct Stats {
  int tried = 0, mappable = 0, failures = 0;
  std::set<std::string> reasons;
};

/// Tries every layout permutation of a, b, d of the einsum aD,bD->dD.
Stats enumerate(const std::string &name, const std::string &aD,
                const std::string &bD, const std::string &dD,
                Epilogue ep = Epilogue::None, const std::string &biasDims = "",
                double alpha = 0.75, double beta = 0.5,
                const Sizes &sz = kSizes) {
  Stats st;
  unsigned seed = 1;
  for (char c : name)
    seed = seed * 31 + c;
  std::vector<float> A = randomData(numel(aD, sz), seed + 1);
  std::vector<float> B = randomData(numel(bD, sz), seed + 2);
  std::vector<float> C0 = randomData(numel(dD, sz), seed + 3);
  std::vector<float> bias =
      biasDims.empty() ? std::vector<float>()
                       : randomData(numel(biasDims, sz), seed + 4);
  std::vector<float> auxIn;
  if (epilogueReadsAux(ep)) {
    auxIn = randomData(numel(dD, sz), seed + 5);
    if (epilogueIsRelu(ep))
      for (float &x : auxIn)
        x = x > 0 ? 1.f : 0.f;
  }
  RefOut ref = reference(aD, A, bD, B, dD, C0, alpha, beta, ep, biasDims,
                         bias, auxIn, sz);

  std::map<std::string, std::vector<float>> aL, bL;
  for (const std::string &al : permutations(aD))
    aL[al] = toLayout(A, aD, al, sz);
  for (const std::string &bl : permutations(bD))
    bL[bl] = toLayout(B, bD, bl, sz);
  for (const std::string &dl : permutations(dD)) {
    std::vector<float> cl = toLayout(C0, dD, dl, sz);
    std::vector<float> refD(ref.d.size()), refAux(ref.aux.size()),
        auxInD(auxIn.size());
    forEachElement(dD, dl, sz, [&](int64_t lo, int64_t co) {
      refD[lo] = (float)ref.d[co];
      if (!ref.aux.empty())
        refAux[lo] = (float)ref.aux[co];
      if (!auxIn.empty())
        auxInD[lo] = auxIn[co];
    });
    for (const auto &[al, Adata] : aL)
      for (const auto &[bl, Bdata] : bL) {
        ++st.tried;
        Contraction c;
        c.a = layoutOf(al, sz);
        c.b = layoutOf(bl, sz);
        c.d = layoutOf(dl, sz);
        c.alpha = alpha;
        c.beta = beta;
        c.epilogue = ep;
        c.biasDims = biasDims;
        GemmDescriptor g;
        std::string why;
        if (!mapContraction(c, g, why)) {
          EXPECT_FALSE(why.empty()) << al << "," << bl << "->" << dl;
          st.reasons.insert(why);
          continue;
        }
        ++st.mappable;
        std::string vwhy;
        EXPECT_TRUE(validateDescriptor(g, vwhy)) << vwhy;
        int64_t dn = numel(dD, sz);
        std::vector<float> D(dn, std::numeric_limits<float>::quiet_NaN());
        std::vector<float> biasBuf = bias;
        int64_t bLen = g.biasLength * std::max<int64_t>(1, g.biasBatchStride ? g.batchCount : 1);
        if (epilogueWritesBias(ep))
          biasBuf.assign(bLen, std::numeric_limits<float>::quiet_NaN());
        std::vector<float> auxBuf(g.auxSize(), -7.f);
        std::vector<int64_t> auxIdx;
        if (!auxBuf.empty()) {
          auxIdx = auxIndexOfDOffset(g, dn);
          if (epilogueReadsAux(ep))
            for (int64_t o = 0; o < dn; ++o)
              auxBuf[auxIdx[o]] = auxInD[o];
        }
        const std::vector<float> &Aop = g.swapOperands ? Bdata : Adata;
        const std::vector<float> &Bop = g.swapOperands ? Adata : Bdata;
        emulateMatmul(g, Aop.data(), Bop.data(), cl.data(), D.data(),
                      biasBuf.empty() ? nullptr : biasBuf.data(),
                      auxBuf.empty() ? nullptr : auxBuf.data());
        double err = 0;
        for (int64_t o = 0; o < dn; ++o)
          err = std::max(err, (double)std::fabs(D[o] - refD[o]) +
                                  (std::isnan(D[o]) ? 1e9 : 0));
        if (epilogueWritesAux(ep))
          for (int64_t o = 0; o < dn; ++o)
            err = std::max(err, (double)std::fabs(auxBuf[auxIdx[o]] - refAux[o]));
        if (epilogueWritesBias(ep)) {
          EXPECT_EQ((int64_t)ref.bias.size(), bLen);
          for (size_t o = 0; o < ref.bias.size() && o < biasBuf.size(); ++o)
            err = std::max(err, std::fabs(biasBuf[o] - ref.bias[o]) +
                                    (std::isnan(biasBuf[o]) ? 1e9 : 0));
        }
        bool ok = err < 1e-4;
        if (!ok)
          ++st.failures;
        EXPECT_TRUE(ok) << name << ": " << al << "," << bl << "->" << dl
                        << " max err " << err << "\n  " << g.describe();
      }
  }
  std::printf("[ layouts  ] %-34s %-22s tried %6d  mappable %5d\n",
              name.c_str(),
              (aD + "," + bD + "->" + dD).c_str(), st.tried, st.mappable);
  return st;
}

bool maps(const std::string &a, const std::string &b, const std::string &d,
          GemmDescriptor *out = nullptr, std::string *whyOut = nullptr,
          Epilogue ep = Epilogue::None, const std::string &biasDims = "") {
  Contraction c;
  c.a = layoutOf(a);
  c.b = layoutOf(b);
  c.d = layoutOf(d);
  c.epilogue = ep;
  c.biasDims = biasDims;
  GemmDescriptor g;
  std::string why;
  bool ok = mapContraction(c, g, why);
  if (out)
    *out = g;
  if (whyOut)
    *whyOut = why;
  return ok;
}

struct LayerCase {
  const char *name, *a, *b, *d;
  std::vector<std::vector<std::string>> mustMap; // {a, b, d} layouts
};

const std::vector<LayerCase> &layerCases() {
  static const std::vector<LayerCase> cases = {
      {"q/k/v projection", "bji", "hpi", "bjhp",
       {{"bji", "hpi", "bjhp"}, {"bji", "hpi", "hpbj"}}},
      {"stacked qkv projection", "bji", "shpi", "sbjhp",
       {{"bji", "shpi", "sbjhp"}, {"bji", "shpi", "bjshp"}}},
      {"scores q.k", "bjhp", "bkhp", "bhjk",
       {{"bhjp", "bhkp", "bhjk"}, {"jbhp", "kbhp", "bhjk"}}},
      {"attention p.v", "bhjk", "bkhp", "bjhp",
       {{"bhjk", "bhkp", "bhjp"}, {"bhjk", "kbhp", "jbhp"}}},
      {"output projection", "bjhp", "ihp", "bji", {{"bjhp", "ihp", "bji"}}},
      {"ffn up", "bji", "ui", "bju", {{"bji", "ui", "bju"}}},
      {"ffn down", "bju", "iu", "bji", {{"bju", "iu", "bji"}}},
      // backward: dX and dW forms
      {"proj dX", "bjhp", "hpi", "bji", {{"bjhp", "hpi", "bji"}}},
      {"proj dW", "bjhp", "bji", "hpi", {{"bjhp", "bji", "hpi"}}},
      {"stacked proj dX", "sbjhp", "shpi", "bji",
       {{"bjshp", "shpi", "bji"}}},
      {"stacked proj dW", "sbjhp", "bji", "shpi",
       {{"bjshp", "bji", "shpi"}}},
      {"scores dQ", "bhjk", "bkhp", "bjhp", {{"bhjk", "bhkp", "bhjp"}}},
      {"scores dK", "bhjk", "bjhp", "bkhp", {{"bhjk", "bhjp", "bhkp"}}},
      {"p.v dP", "bjhp", "bkhp", "bhjk", {{"bhjp", "bhkp", "bhjk"}}},
      {"p.v dV", "bhjk", "bjhp", "bkhp", {{"bhjk", "bhjp", "bhkp"}}},
      {"out proj dX", "bji", "ihp", "bjhp", {{"bji", "ihp", "bjhp"}}},
      {"out proj dW", "bji", "bjhp", "ihp", {{"bji", "bjhp", "ihp"}}},
      {"ffn dX", "bju", "ui", "bji", {{"bju", "ui", "bji"}}},
      {"ffn dW", "bju", "bji", "ui", {{"bju", "bji", "ui"}}},
  };
  return cases;
}

} // namespace

//===----------------------------------------------------------------------===//
// Every layout of every contraction of a layer
//===----------------------------------------------------------------------===//

class LayerContraction : public ::testing::TestWithParam<int> {};

TEST_P(LayerContraction, EveryLayoutMapsCorrectlyOrSaysWhy) {
  const LayerCase &lc = layerCases()[GetParam()];
  Stats st = enumerate(lc.name, lc.a, lc.b, lc.d);
  EXPECT_GT(st.mappable, 0);
  EXPECT_EQ(st.failures, 0);
  for (const auto &m : lc.mustMap) {
    GemmDescriptor g;
    std::string why;
    EXPECT_TRUE(maps(m[0], m[1], m[2], &g, &why))
        << m[0] << "," << m[1] << "->" << m[2] << ": " << why;
  }
}

INSTANTIATE_TEST_SUITE_P(Layer, LayerContraction,
                         ::testing::Range(0, (int)layerCases().size()),
                         [](const ::testing::TestParamInfo<int> &info) {
                           std::string n = layerCases()[info.param].name;
                           for (char &c : n)
                             if (!isalnum((unsigned char)c))
                               c = '_';
                           return n;
                         });

//===----------------------------------------------------------------------===//
// Descriptor details
//===----------------------------------------------------------------------===//

TEST(GemmMapping, OperandSwapForNContiguousD) {
  GemmDescriptor g;
  std::string why;
  ASSERT_TRUE(maps("bji", "ui", "bju", &g, &why)) << why;
  // D = y[bj, u] with u contiguous: rows must be u, so D^T = W X^T.
  EXPECT_TRUE(g.swapOperands);
  EXPECT_EQ(g.m, 4); // u
  EXPECT_EQ(g.n, 6); // b*j
  EXPECT_EQ(g.k, 5); // i
  EXPECT_EQ(g.transA, dmrt::Transpose::T); // W "ui": i contiguous -> stored k x m
  EXPECT_EQ(g.a.rows, 5);
  EXPECT_EQ(g.a.cols, 4);
  EXPECT_EQ(g.a.ld, 5);
  EXPECT_EQ(g.transB, dmrt::Transpose::N); // X "bji": stored k x n
  EXPECT_EQ(g.b.rows, 5);
  EXPECT_EQ(g.b.cols, 6);
  EXPECT_EQ(g.b.ld, 5);
  EXPECT_EQ(g.d.rows, 4);
  EXPECT_EQ(g.d.cols, 6);
  EXPECT_EQ(g.d.ld, 4);
  EXPECT_EQ(g.batchCount, 1);
  EXPECT_EQ(g.rowDims, "u");
  EXPECT_EQ(g.colDims, "bj");
  std::printf("%s\n", g.describe().c_str());

  // The transposed output layout needs no swap.
  ASSERT_TRUE(maps("bji", "ui", "ubj", &g, &why)) << why;
  EXPECT_FALSE(g.swapOperands);
  EXPECT_EQ(g.m, 6);
  EXPECT_EQ(g.transA, dmrt::Transpose::T);
  EXPECT_EQ(g.transB, dmrt::Transpose::N);
  EXPECT_EQ(g.d.ld, 6);
}

TEST(GemmMapping, StridedBatchWithInterleavedBatches) {
  // Q stored j b h p (sequence-major, as Megatron): batch (b,h) sits between
  // M (j) and K (p); ld = b*h*p, batch stride = p.
  GemmDescriptor g;
  std::string why;
  ASSERT_TRUE(maps("jbhp", "kbhp", "bhjk", &g, &why)) << why;
  EXPECT_EQ(g.batchCount, 4);
  EXPECT_EQ(g.batchDims, "bh");
  EXPECT_TRUE(g.swapOperands); // d: k contiguous
  EXPECT_EQ(g.transA, dmrt::Transpose::T); // K "kbhp": p contiguous
  EXPECT_EQ(g.a.ld, 2 * 2 * 3);
  EXPECT_EQ(g.a.batchStride, 3);
  EXPECT_EQ(g.d.batchStride, 3 * 4);
  std::printf("%s\n", g.describe().c_str());
}

TEST(GemmMapping, BroadcastBatchForStackedQkv) {
  // s is an N dim (only in W and d); d = s b j h p keeps b,j between s and
  // h,p, so s becomes a strided batch that x broadcasts (batch stride 0).
  GemmDescriptor g;
  std::string why;
  ASSERT_TRUE(maps("bji", "shpi", "sbjhp", &g, &why)) << why;
  EXPECT_EQ(g.batchDims, "s");
  EXPECT_EQ(g.batchCount, 3);
  EXPECT_TRUE(g.swapOperands);       // rows = h,p
  EXPECT_EQ(g.a.batchStride, 2 * 3 * 5); // W: h*p*i
  EXPECT_EQ(g.b.batchStride, 0);         // x broadcast
  EXPECT_EQ(g.d.batchStride, 2 * 3 * 2 * 3);
  std::printf("%s\n", g.describe().c_str());
  // The fallback never empties a group: bji,ui->ubj with a bias on u would
  // need batch = u and m = 1.
  EXPECT_FALSE(maps("bji", "ui", "ubj", nullptr, &why, Epilogue::Bias, "u"));
  // A K group split by M dims has no such escape.
  EXPECT_FALSE(maps("sbjhp", "shpi", "bji", nullptr, &why));
  EXPECT_EQ(why, "K dims s,h,p are interleaved in a's layout 'sbjhp': b,j "
                 "sits between them, so they do not flatten to one index "
                 "with one stride");
}

TEST(GemmMapping, SizeOneDimsAreIgnored) {
  Sizes sz = kSizes;
  sz['h'] = 1;
  Contraction c;
  // With h of size 1, "bjhp" no longer separates b and the rest.
  c.a = layoutOf("bjhp", sz);
  c.b = layoutOf("bkhp", sz);
  c.d = layoutOf("bhjk", sz);
  GemmDescriptor g;
  std::string why;
  EXPECT_TRUE(mapContraction(c, g, why)) << why;
  EXPECT_EQ(g.batchCount, 2);
  Stats st = enumerate("scores q.k, h=1", "bjhp", "bkhp", "bhjk",
                       Epilogue::None, "", 0.75, 0.5, sz);
  EXPECT_GT(st.mappable, 0);
}

TEST(GemmMapping, OuterProductHasKOfOne) {
  // No K dims: k = 1; the emulator must still agree with the reference.
  Stats st = enumerate("outer product", "bj", "bu", "bju");
  EXPECT_GT(st.mappable, 0);
  GemmDescriptor g;
  std::string why;
  ASSERT_TRUE(maps("bj", "bu", "bju", &g, &why)) << why;
  EXPECT_EQ(g.k, 1);
}

TEST(GemmEmulator, BetaAccumulatesAndAlphaScales) {
  Stats st = enumerate("ffn up alpha=2 beta=1", "bji", "ui", "bju",
                       Epilogue::None, "", 2.0, 1.0);
  EXPECT_EQ(st.failures, 0);
  st = enumerate("ffn up alpha=-0.5 beta=0", "bji", "ui", "bju",
                 Epilogue::None, "", -0.5, 0.0);
  EXPECT_EQ(st.failures, 0);

  // beta = 0: C is not read (NaNs in C do not leak), as in cuBLAS.
  GemmDescriptor g;
  std::string why;
  ASSERT_TRUE(maps("bji", "ui", "bju", &g, &why)) << why;
  g.beta = 0;
  std::vector<float> A(30, 1.f), B(20, 1.f), D(24, 0.f),
      C(24, std::numeric_limits<float>::quiet_NaN());
  emulateMatmul(g, B.data(), A.data(), C.data(), D.data(), nullptr, nullptr);
  for (float x : D)
    EXPECT_FLOAT_EQ(x, 5.f);
  // beta = 1, alpha = 0: D = C.
  std::vector<float> C2 = randomData(24, 9);
  g.alpha = 0;
  g.beta = 1;
  emulateMatmul(g, B.data(), A.data(), C2.data(), D.data(), nullptr, nullptr);
  for (int i = 0; i < 24; ++i)
    EXPECT_FLOAT_EQ(D[i], C2[i]);
}

TEST(GemmEmulator, HandWrittenColumnMajorTranspose) {
  // A is 2x3 stored transposed (3x2, ld 4 with padding), B 3x2 plain.
  GemmDescriptor g;
  g.m = 2; g.n = 2; g.k = 3;
  g.transA = dmrt::Transpose::T;
  g.a = {3, 2, 4, 1, 0};
  g.b = {3, 2, 3, 1, 0};
  g.c = g.d = {2, 2, 2, 1, 0};
  // op(A) = [[1,2,3],[4,5,6]] -> stored A(kk, r) at kk + r*4
  std::vector<float> A = {1, 2, 3, 99, 4, 5, 6, 99};
  // B = [[1,0],[0,1],[1,1]] column-major
  std::vector<float> B = {1, 0, 1, 0, 1, 1};
  std::vector<float> D(4);
  emulateMatmul(g, A.data(), B.data(), nullptr, D.data(), nullptr, nullptr);
  EXPECT_FLOAT_EQ(D[0], 4);  // (0,0) = 1+3
  EXPECT_FLOAT_EQ(D[1], 10); // (1,0) = 4+6
  EXPECT_FLOAT_EQ(D[2], 5);  // (0,1) = 2+3
  EXPECT_FLOAT_EQ(D[3], 11); // (1,1) = 5+6
}

//===----------------------------------------------------------------------===//
// Epilogues, over every layout
//===----------------------------------------------------------------------===//

struct EpiCase {
  const char *name, *a, *b, *d;
  Epilogue ep;
  const char *bias;
};

class EpilogueAllLayouts : public ::testing::TestWithParam<EpiCase> {};

TEST_P(EpilogueAllLayouts, MatchesReference) {
  const EpiCase &ec = GetParam();
  Stats st = enumerate(std::string(ec.name) + " " + epilogueName(ec.ep), ec.a,
                       ec.b, ec.d, ec.ep, ec.bias);
  EXPECT_GT(st.mappable, 0);
  EXPECT_EQ(st.failures, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Epilogues, EpilogueAllLayouts,
    ::testing::Values(
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::Bias, "u"},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::Relu, ""},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::ReluBias, "u"},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::ReluAux, ""},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::ReluAuxBias, "u"},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::Gelu, ""},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::GeluBias, "u"},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::GeluAux, ""},
        EpiCase{"ffn up", "bji", "ui", "bju", Epilogue::GeluAuxBias, "u"},
        EpiCase{"ffn down dH", "bji", "iu", "bju", Epilogue::DRelu, ""},
        EpiCase{"ffn down dH", "bji", "iu", "bju", Epilogue::DReluBGrad, "u"},
        EpiCase{"ffn down dH", "bji", "iu", "bju", Epilogue::DGelu, ""},
        EpiCase{"ffn down dH", "bji", "iu", "bju", Epilogue::DGeluBGrad, "u"},
        EpiCase{"ffn dW1", "bju", "bji", "ui", Epilogue::BGradA, "u"},
        EpiCase{"ffn dW1 (b=dY)", "bji", "bju", "iu", Epilogue::BGradB, "u"},
        // batched: bias per (b,h) batch, bias gradient per batch
        EpiCase{"scores+mask bias", "bjhp", "bkhp", "bhjk", Epilogue::Bias,
                "bhk"},
        EpiCase{"scores shared bias", "bjhp", "bkhp", "bhjk", Epilogue::Bias,
                "k"},
        EpiCase{"p.v dV", "bhjk", "bjhp", "bkhp", Epilogue::BGradA, "bhk"},
        EpiCase{"p.v dV", "bhjk", "bjhp", "bkhp", Epilogue::BGradB, "bhp"},
        EpiCase{"scores dgelu", "bjhp", "bkhp", "bhjk", Epilogue::DGeluBGrad,
                "bhk"},
        EpiCase{"scores relu aux", "bjhp", "bkhp", "bhjk",
                Epilogue::ReluAuxBias, "bhj"}),
    [](const ::testing::TestParamInfo<EpiCase> &info) {
      std::string n = std::string(info.param.name) + "_" +
                      epilogueName(info.param.ep) + "_" + info.param.bias;
      for (char &c : n)
        if (!isalnum((unsigned char)c))
          c = '_';
      return n;
    });

TEST(GemmEpilogue, GeluAuxForwardFeedsDGeluBGradBackward) {
  // Forward: pre = x W1^T + b1, h = gelu(pre)   (GELU_AUX_BIAS, aux = pre)
  // Backward: dPre = (dY W2) * gelu'(pre), db1 = sum_bj dPre  (DGELU_BGRAD)
  Contraction fwd;
  fwd.a = layoutOf("bji");
  fwd.b = layoutOf("ui");
  fwd.d = layoutOf("bju");
  fwd.epilogue = Epilogue::GeluAuxBias;
  fwd.biasDims = "u";
  Contraction bwd;
  bwd.a = layoutOf("bji"); // dY
  bwd.b = layoutOf("iu");  // W2
  bwd.d = layoutOf("bju"); // dPre
  bwd.epilogue = Epilogue::DGeluBGrad;
  bwd.biasDims = "u";
  GemmDescriptor gf, gb;
  std::string why;
  ASSERT_TRUE(mapContraction(fwd, gf, why)) << why;
  ASSERT_TRUE(mapContraction(bwd, gb, why)) << why;
  EXPECT_EQ(gf.epilogue, Epilogue::GeluAuxBias);
  EXPECT_EQ(gf.auxLd, 8); // rows u = 4, rounded up to a multiple of 8
  EXPECT_TRUE(auxCompatible(gf, gb, why)) << why;

  std::vector<float> X = randomData(30, 1), W1 = randomData(20, 2),
                     b1 = randomData(4, 3), dY = randomData(30, 4),
                     W2 = randomData(20, 5);
  std::vector<float> H(24), aux(gf.auxSize()), dPre(24), db1(4);
  emulateMatmul(gf, W1.data(), X.data(), nullptr, H.data(), b1.data(),
                aux.data());
  emulateMatmul(gb, W2.data(), dY.data(), nullptr, dPre.data(), db1.data(),
                aux.data());

  std::vector<double> pre = einsumRef("bji", X, "ui", W1, "bju", kSizes);
  std::vector<double> dh = einsumRef("bji", dY, "iu", W2, "bju", kSizes);
  std::vector<double> dbRef(4, 0.0);
  for (int e = 0; e < 24; ++e) {
    double p = pre[e] + b1[e % 4];
    EXPECT_NEAR(H[e], geluTanh(p), 1e-5);
    double want = dh[e] * geluTanhGrad(p);
    EXPECT_NEAR(dPre[e], want, 1e-5);
    dbRef[e % 4] += want;
  }
  for (int u = 0; u < 4; ++u)
    EXPECT_NEAR(db1[u], dbRef[u], 1e-5);

  // Same, ReLU: RELU_AUX_BIAS then DRELU_BGRAD read the bit-mask.
  fwd.epilogue = Epilogue::ReluAuxBias;
  bwd.epilogue = Epilogue::DReluBGrad;
  ASSERT_TRUE(mapContraction(fwd, gf, why)) << why;
  ASSERT_TRUE(mapContraction(bwd, gb, why)) << why;
  EXPECT_EQ(gf.auxLd, 128); // bits, multiple of 128
  EXPECT_TRUE(auxCompatible(gf, gb, why)) << why;
  aux.assign(gf.auxSize(), -1.f);
  emulateMatmul(gf, W1.data(), X.data(), nullptr, H.data(), b1.data(),
                aux.data());
  emulateMatmul(gb, W2.data(), dY.data(), nullptr, dPre.data(), db1.data(),
                aux.data());
  for (int e = 0; e < 24; ++e) {
    double p = pre[e] + b1[e % 4];
    EXPECT_NEAR(H[e], std::max(p, 0.0), 1e-5);
    EXPECT_NEAR(dPre[e], p > 0 ? dh[e] : 0.0, 1e-5);
  }

  // A backward D with the other orientation cannot read this aux.
  bwd.d = layoutOf("ubj");
  bwd.epilogue = Epilogue::DRelu;
  bwd.biasDims = "";
  ASSERT_TRUE(mapContraction(bwd, gb, why)) << why;
  EXPECT_FALSE(auxCompatible(gf, gb, why));
  EXPECT_NE(why.find("same dims on D's rows"), std::string::npos) << why;
}

//===----------------------------------------------------------------------===//
// Rejections
//===----------------------------------------------------------------------===//

TEST(GemmMappingReject, InterleavedMDims) {
  std::string why;
  EXPECT_FALSE(maps("bji", "hpi", "bhjp", nullptr, &why));
  EXPECT_EQ(why, "M dims b,j are interleaved in d's layout 'bhjp': h sits "
                 "between them, so they do not flatten to one index with one "
                 "stride");
}

TEST(GemmMappingReject, BatchDimsSplitByM) {
  std::string why;
  EXPECT_FALSE(maps("bjhp", "bkhp", "bhjk", nullptr, &why));
  EXPECT_NE(why.find("batch dims b,h are interleaved in a's layout 'bjhp'"),
            std::string::npos)
      << why;
}

TEST(GemmMappingReject, GroupOrderDiffers) {
  std::string why;
  EXPECT_FALSE(maps("bji", "hpi", "jbph", nullptr, &why));
  EXPECT_NE(why.find("M dims are ordered b,j in a ('bji') but j,b in d"),
            std::string::npos)
      << why;
  EXPECT_FALSE(maps("bhjp", "hbkp", "bhjk", nullptr, &why));
  EXPECT_NE(why.find("batch dims are ordered b,h in a"), std::string::npos)
      << why;
  EXPECT_FALSE(maps("bjhp", "iph", "bji", nullptr, &why));
  EXPECT_NE(why.find("K dims are ordered h,p in a"), std::string::npos) << why;
}

TEST(GemmMappingReject, BatchInnermost) {
  std::string why;
  EXPECT_FALSE(maps("bhjp", "bhkp", "jkbh", nullptr, &why));
  EXPECT_NE(why.find("d's innermost dim 'h'"), std::string::npos) << why;
  EXPECT_NE(why.find("TRANSC must be N"), std::string::npos) << why;
  EXPECT_FALSE(maps("jpbh", "bhkp", "bhjk", nullptr, &why));
  EXPECT_NE(why.find("a's innermost dim 'h'"), std::string::npos) << why;
}

TEST(GemmMappingReject, BiasAlongColumns) {
  std::string why;
  EXPECT_FALSE(maps("bji", "ui", "ubj", nullptr, &why, Epilogue::Bias, "u"));
  EXPECT_NE(why.find("epilogue BIAS needs the bias along the rows of "
                     "column-major D, but bias dims 'u' are D's columns"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("no column-bias epilogue"), std::string::npos) << why;
  // The same with the N-contiguous D works (operands swapped).
  EXPECT_TRUE(maps("bji", "ui", "bju", nullptr, &why, Epilogue::Bias, "u"))
      << why;
  // DGELU_BGRAD: same rule for the bias gradient.
  EXPECT_FALSE(
      maps("bji", "iu", "ubj", nullptr, &why, Epilogue::DGeluBGrad, "u"));
  EXPECT_NE(why.find("bias gradient along the rows"), std::string::npos)
      << why;
}

TEST(GemmMappingReject, BiasGradientOverBatch) {
  std::string why;
  EXPECT_FALSE(
      maps("bhjk", "bhjp", "bhkp", nullptr, &why, Epilogue::BGradA, "k"));
  EXPECT_NE(why.find("cuBLASLt writes one vector per batch"),
            std::string::npos)
      << why;
  // Bias letters must be the right group.
  EXPECT_FALSE(maps("bju", "bji", "ui", nullptr, &why, Epilogue::BGradA, "i"));
  EXPECT_NE(why.find("reduces a over its K dims (b,j)"), std::string::npos)
      << why;
}

TEST(GemmMappingReject, InvalidInput) {
  std::string why;
  EXPECT_FALSE(maps("bjih", "ui", "bju", nullptr, &why));
  EXPECT_EQ(why, "dim 'h' appears only in a: a private reduction; sum it out "
                 "before the GEMM");
  EXPECT_FALSE(maps("bji", "ui", "bjus", nullptr, &why));
  EXPECT_NE(why.find("appears only in d"), std::string::npos) << why;
  Contraction c;
  c.a = layoutOf("bji");
  c.b = layoutOf("ui");
  c.d = layoutOf("bju");
  c.b.sizes[1] = 7;
  GemmDescriptor g;
  EXPECT_FALSE(mapContraction(c, g, why));
  EXPECT_NE(why.find("dim 'i' has size 5 in one tensor but 7 in b"),
            std::string::npos)
      << why;
  c.b = layoutOf("ii", {{'i', 5}});
  EXPECT_FALSE(mapContraction(c, g, why));
  EXPECT_NE(why.find("repeats letter 'i'"), std::string::npos) << why;
  EXPECT_FALSE(maps("bji", "ui", "bju", nullptr, &why, Epilogue::None, "u"));
  EXPECT_NE(why.find("has no bias"), std::string::npos) << why;
  EXPECT_FALSE(maps("bji", "ui", "bju", nullptr, &why, Epilogue::Bias, ""));
  EXPECT_NE(why.find("needs biasDims"), std::string::npos) << why;
}

TEST(GemmMappingReject, ValidateDescriptor) {
  GemmDescriptor g;
  std::string why;
  ASSERT_TRUE(maps("bji", "ui", "bju", &g, &why)) << why;
  EXPECT_TRUE(validateDescriptor(g, why)) << why;
  GemmDescriptor bad = g;
  bad.d.ld = 2;
  EXPECT_FALSE(validateDescriptor(bad, why));
  EXPECT_NE(why.find("ld 2 < rows 4"), std::string::npos) << why;
  bad = g;
  bad.epilogue = Epilogue::ReluAux;
  bad.auxLd = 64;
  EXPECT_FALSE(validateDescriptor(bad, why));
  EXPECT_NE(why.find("divisible by 128"), std::string::npos) << why;
}

//===----------------------------------------------------------------------===//
// ACCUMULATE: the addend as C, beta 1
//===----------------------------------------------------------------------===//

TEST(GemmMapping, AccumulateReadsTheAddendAsC) {
  // Both orientations (D M-contiguous and N-contiguous, operands swapped): the
  // addend shares D's layout, so C is D's matrix; the contraction keeps beta 0.
  for (const char *d : {"bju", "ubj"}) {
    GemmDescriptor g;
    std::string why;
    ASSERT_TRUE(maps("bji", "ui", d, &g, &why, Epilogue::Accumulate, d)) << d << ": " << why;
    EXPECT_EQ(g.epilogue, Epilogue::Accumulate) << d;
    EXPECT_EQ(g.beta, 0) << d;
    EXPECT_EQ(g.biasLength, 0) << d;
    EXPECT_EQ(g.c.rows, g.d.rows) << d;
    EXPECT_EQ(g.c.ld, g.d.ld) << d;
    EXPECT_EQ(g.c.batchStride, g.d.batchStride) << d;
    EXPECT_TRUE(dmrt::validateDescriptor(g, why)) << why;
  }
  // The emulator's beta = 1 with C the addend: D = A B + addend (planted: an
  // addend dropped, beta 0, is caught).
  GemmDescriptor g;
  std::string why;
  ASSERT_TRUE(maps("bji", "ui", "bju", &g, &why, Epilogue::Accumulate, "bju")) << why;
  std::vector<float> A = randomData(30, 1), B = randomData(20, 2), C = randomData(24, 3), D(24),
                     plain(24);
  GemmDescriptor run = g;
  run.epilogue = Epilogue::None;
  run.beta = 1;
  emulateMatmul(run, B.data(), A.data(), C.data(), D.data(), nullptr, nullptr);
  run.beta = 0;
  emulateMatmul(run, B.data(), A.data(), C.data(), plain.data(), nullptr, nullptr);
  for (int i = 0; i < 24; ++i)
    EXPECT_NEAR(D[i], plain[i] + C[i], 1e-5f) << i;
  EXPECT_GT(std::abs(D[0] - plain[0]), 1e-6f) << "the addend must change D";
}

TEST(GemmMappingReject, AccumulateInAnotherLayout) {
  std::string why;
  EXPECT_FALSE(maps("bji", "ui", "bju", nullptr, &why, Epilogue::Accumulate, "ubj"));
  EXPECT_NE(why.find("epilogue ACCUMULATE reads its addend as C, which shares D's layout: the "
                     "addend's dims are 'ubj' but D's are 'bju'"),
            std::string::npos)
      << why;
}
