//===- MappableLayoutsTest.cpp - enumerateMappable --------------------------===//
//
// Every candidate maps (checked again with mapContraction), is a permutation
// of its tensor's letters, appears once; a mappable contraction's own layouts
// are among them; the swap forms of an attention contraction are listed; an
// unmappable layout is never returned, but a mappable relative is.
//
//===----------------------------------------------------------------------===//
#include "codegen/gemm/MappableLayouts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace dmcgen;

namespace {

TensorLayout layoutOf(const std::string &dims) {
  const std::map<char, int64_t> sizes = {{'b', 2}, {'j', 3}, {'k', 4}, {'h', 2},
                                         {'p', 3}, {'i', 5}, {'u', 4}, {'s', 3}};
  TensorLayout t{dims, {}};
  for (char c : dims)
    t.sizes.push_back(sizes.at(c));
  return t;
}

Contraction contraction(const std::string &a, const std::string &b, const std::string &d) {
  Contraction c;
  c.a = layoutOf(a);
  c.b = layoutOf(b);
  c.d = layoutOf(d);
  return c;
}

bool isPermutationOf(std::string x, std::string y) {
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

/// The properties every enumeration must have.
void checkAll(const Contraction &c, const std::vector<LayoutTriple> &all) {
  std::set<std::string> seen;
  for (const LayoutTriple &t : all) {
    Contraction spec = c;
    spec.a = layoutOf(t.a);
    spec.b = layoutOf(t.b);
    spec.d = layoutOf(t.d);
    dmrt::GemmDescriptor g;
    std::string why;
    EXPECT_TRUE(mapContraction(spec, g, why)) << t.a << "," << t.b << "->" << t.d << ": " << why;
    EXPECT_TRUE(isPermutationOf(t.a, c.a.dims)) << t.a;
    EXPECT_TRUE(isPermutationOf(t.b, c.b.dims)) << t.b;
    EXPECT_TRUE(isPermutationOf(t.d, c.d.dims)) << t.d;
    EXPECT_TRUE(seen.insert(t.a + "," + t.b + "->" + t.d).second) << "twice: " << t.a;
  }
}

bool has(const std::vector<LayoutTriple> &all, const LayoutTriple &t) {
  return std::find(all.begin(), all.end(), t) != all.end();
}

TEST(MappableLayouts, AttentionScoresIncludeDefaultAndSwap) {
  Contraction c = contraction("bhjp", "bhkp", "bhjk");
  auto all = enumerateMappable(c);
  checkAll(c, all);
  EXPECT_TRUE(has(all, {"bhjp", "bhkp", "bhjk"}));
  EXPECT_TRUE(has(all, {"bhjp", "bhkp", "bhkj"})); // D^T = B^T A^T: the swap form
  EXPECT_FALSE(has(all, {"bhjp", "bhkp", "bjhk"})); // batch split in d: not adjacent
}

TEST(MappableLayouts, ProjectionIncludesDefault) {
  Contraction c = contraction("bji", "iu", "bju");
  auto all = enumerateMappable(c);
  checkAll(c, all);
  EXPECT_TRUE(has(all, {"bji", "iu", "bju"}));
  EXPECT_TRUE(has(all, {"bji", "iu", "ubj"})); // rows = N: the swap form
}

TEST(MappableLayouts, UnmappableInputGetsMappableRelatives) {
  // d innermost batch: unmappable as given (GemmMapping rule 2).
  Contraction c = contraction("bhjp", "bhkp", "hjkb");
  dmrt::GemmDescriptor g;
  std::string why;
  ASSERT_FALSE(mapContraction(c, g, why));
  auto all = enumerateMappable(c);
  checkAll(c, all);
  EXPECT_FALSE(all.empty());
  EXPECT_FALSE(has(all, {"bhjp", "bhkp", "hjkb"}));
}

TEST(MappableLayouts, EpilogueIsKept) {
  // A bias over u must be on D's rows: only layouts with u innermost in d.
  Contraction c = contraction("bji", "iu", "bju");
  c.epilogue = dmrt::Epilogue::Bias;
  c.biasDims = "u";
  auto all = enumerateMappable(c);
  checkAll(c, all);
  ASSERT_FALSE(all.empty());
  for (const LayoutTriple &t : all)
    EXPECT_EQ(t.d.back(), 'u') << t.d;
}

} // namespace
