//===- MappableLayouts.cpp - every layout of a contraction cuBLASLt maps --===//
#include "codegen/gemm/MappableLayouts.h"

#include <algorithm>
#include <map>

namespace dmcgen {
namespace {

/// Every order of 0..count-1, the identity first.
std::vector<std::vector<int>> orders(int count) {
  std::vector<int> p(count);
  for (int i = 0; i < count; ++i)
    p[i] = i;
  std::vector<std::vector<int>> all;
  do
    all.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return all;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

std::vector<LayoutTriple> enumerateMappable(const Contraction &c) {
  const std::string names[3] = {c.a.dims, c.b.dims, c.d.dims};
  // Letter groups as the mapping sees them: in a, b, d (batch), a and d (M),
  // b and d (N), a and b (K).
  auto groupOf = [&](char ch) {
    bool inA = names[0].find(ch) != std::string::npos;
    bool inB = names[1].find(ch) != std::string::npos;
    bool inD = names[2].find(ch) != std::string::npos;
    return inA && inB && inD ? 0 : inA && inD ? 1 : inB && inD ? 2 : 3;
  };
  // Candidate letter orders per group: as each tensor holding it orders it.
  std::vector<std::string> groupOrders[4];
  for (int n = 0; n < 3; ++n)
    for (int g = 0; g < 4; ++g) {
      std::string order;
      for (char ch : names[n])
        if (groupOf(ch) == g)
          order += ch;
      if (!order.empty() && !contains(groupOrders[g], order))
        groupOrders[g].push_back(order);
    }
  // Then every other order of a group of up to three letters: a tensor that
  // must stay put elsewhere may still fit with the group reversed.
  for (auto &o : groupOrders) {
    if (o.empty()) {
      o.push_back("");
      continue;
    }
    std::string letters = o.front();
    if (letters.size() > 3)
      continue;
    std::sort(letters.begin(), letters.end());
    do
      if (!contains(o, letters))
        o.push_back(letters);
    while (std::next_permutation(letters.begin(), letters.end()));
  }
  // Groups of each tensor in the order they first appear in it.
  std::vector<int> groupsIn[3];
  for (int n = 0; n < 3; ++n)
    for (char ch : names[n])
      if (std::find(groupsIn[n].begin(), groupsIn[n].end(), groupOf(ch)) == groupsIn[n].end())
        groupsIn[n].push_back(groupOf(ch));
  std::vector<std::vector<int>> perms[3];
  for (int n = 0; n < 3; ++n)
    perms[n] = orders(int(groupsIn[n].size()));

  std::map<char, int64_t> extent;
  for (const TensorLayout *t : {&c.a, &c.b, &c.d})
    for (size_t i = 0; i < t->dims.size() && i < t->sizes.size(); ++i)
      extent[t->dims[i]] = t->sizes[i];
  auto layoutAs = [&](const std::string &dims) {
    TensorLayout l{dims, {}};
    for (char ch : dims)
      l.sizes.push_back(extent[ch]);
    return l;
  };

  std::vector<LayoutTriple> out;
  int pick[4] = {0, 0, 0, 0};
  for (pick[0] = 0; pick[0] < int(groupOrders[0].size()); ++pick[0])
    for (pick[1] = 0; pick[1] < int(groupOrders[1].size()); ++pick[1])
      for (pick[2] = 0; pick[2] < int(groupOrders[2].size()); ++pick[2])
        for (pick[3] = 0; pick[3] < int(groupOrders[3].size()); ++pick[3]) {
          auto build = [&](int n, const std::vector<int> &perm) {
            std::string s;
            for (int i : perm)
              s += groupOrders[groupsIn[n][i]][pick[groupsIn[n][i]]];
            return s;
          };
          for (const auto &pa : perms[0])
            for (const auto &pb : perms[1])
              for (const auto &pd : perms[2]) {
                LayoutTriple t{build(0, pa), build(1, pb), build(2, pd)};
                Contraction spec = c;
                spec.a = layoutAs(t.a);
                spec.b = layoutAs(t.b);
                spec.d = layoutAs(t.d);
                dmrt::GemmDescriptor g;
                std::string why;
                if (mapContraction(spec, g, why))
                  out.push_back(std::move(t));
              }
        }
  return out;
}

} // namespace dmcgen
