//===- StepDependencies.cpp - Which steps of a phase must wait for which --===//
#include "runtime/StepDependencies.h"

#include <algorithm>

namespace dmrt {

namespace {

/// Steps a phase has are few (tens), so reachability is a dense bit matrix.
using Reach = std::vector<std::vector<bool>>;

bool overlaps(const MemoryAccess &x, const MemoryAccess &y) {
  if (!(x.begin < y.end && y.begin < x.end && x.begin < x.end && y.begin < y.end))
    return false;
  // Runs of one period: the bytes of x, taken modulo the period, form the
  // circular interval [x.begin mod P, + width); they meet y's or not.
  uintptr_t p = x.period;
  if (p == 0 || y.period != p || x.width == 0 || y.width == 0 || x.width >= p ||
      y.width >= p)
    return true;
  uintptr_t from = (y.begin % p + p - x.begin % p) % p; // y's runs after x's start
  return from < x.width || from + y.width > p;
}

/// reach[j][i]: step i is ordered before step j through `deps`.
Reach reachability(const std::vector<std::vector<int>> &deps) {
  Reach reach(deps.size(), std::vector<bool>(deps.size(), false));
  for (size_t j = 0; j < deps.size(); ++j)
    for (int i : deps[j]) {
      if (i < 0 || size_t(i) >= j)
        continue; // ordersEveryConflict reports it
      reach[j][size_t(i)] = true;
      for (size_t k = 0; k < size_t(i); ++k)
        if (reach[size_t(i)][k])
          reach[j][k] = true;
    }
  return reach;
}

} // namespace

MemoryAccess viewAccess(uintptr_t start, const std::vector<int64_t> &shape,
                        const std::vector<int64_t> &strides, int64_t elementBytes, bool write) {
  MemoryAccess a;
  a.begin = start;
  a.write = write;
  int64_t elements = 1, last = 0;
  for (int64_t n : shape)
    elements *= n;
  if (elements <= 0)
    return {start, start, write};
  if (strides.size() != shape.size()) {
    a.end = start + uintptr_t(elements * elementBytes);
    return a;
  }
  for (size_t d = 0; d < shape.size(); ++d)
    last += (shape[d] - 1) * strides[d];
  a.end = start + uintptr_t((last + 1) * elementBytes);
  // The innermost dims that are dense form one run; the next dim of more
  // than one element gives the period.
  int64_t run = 1;
  size_t d = shape.size();
  while (d > 0 && (shape[d - 1] == 1 || strides[d - 1] == run))
    run *= shape[--d];
  if (d == 0)
    return a; // dense
  int64_t period = strides[d - 1];
  for (size_t o = 0; o < d; ++o)
    if (shape[o] > 1 && (period <= 0 || strides[o] % period != 0))
      return a; // no single period: the span
  if (run >= period)
    return a;
  a.period = uintptr_t(period * elementBytes);
  a.width = uintptr_t(run * elementBytes);
  return a;
}

bool accessesConflict(const std::vector<MemoryAccess> &a, const std::vector<MemoryAccess> &b) {
  for (const MemoryAccess &x : a)
    for (const MemoryAccess &y : b)
      if ((x.write || y.write) && overlaps(x, y))
        return true;
  return false;
}

std::vector<std::vector<int>>
stepDependencies(const std::vector<std::vector<MemoryAccess>> &steps) {
  size_t n = steps.size();
  std::vector<std::vector<int>> deps(n);
  Reach reach(n, std::vector<bool>(n, false));
  for (size_t j = 0; j < n; ++j) {
    // Latest first: a conflict already reached through a later kept
    // dependency needs no edge of its own.
    for (size_t i = j; i-- > 0;) {
      if (reach[j][i] || !accessesConflict(steps[i], steps[j]))
        continue;
      deps[j].push_back(int(i));
      reach[j][i] = true;
      for (size_t k = 0; k < i; ++k)
        if (reach[i][k])
          reach[j][k] = true;
    }
    std::sort(deps[j].begin(), deps[j].end());
  }
  return deps;
}

bool ordersEveryConflict(const std::vector<std::vector<MemoryAccess>> &steps,
                         const std::vector<std::vector<int>> &deps, std::string &why) {
  if (deps.size() != steps.size()) {
    why = std::to_string(deps.size()) + " dependency lists for " + std::to_string(steps.size()) +
          " steps";
    return false;
  }
  for (size_t j = 0; j < deps.size(); ++j)
    for (int i : deps[j])
      if (i < 0 || size_t(i) >= j) {
        why = "step " + std::to_string(j) + " waits for step " + std::to_string(i) +
              ", which is not an earlier step";
        return false;
      }
  Reach reach = reachability(deps);
  for (size_t j = 0; j < steps.size(); ++j)
    for (size_t i = 0; i < j; ++i)
      if (!reach[j][i] && accessesConflict(steps[i], steps[j])) {
        why = "steps " + std::to_string(i) + " and " + std::to_string(j) +
              " touch the same memory, one writing, but step " + std::to_string(j) +
              " does not wait for step " + std::to_string(i);
        return false;
      }
  return true;
}

int criticalPathLength(const std::vector<std::vector<int>> &deps) {
  std::vector<int> depth(deps.size(), 1);
  int longest = 0;
  for (size_t j = 0; j < deps.size(); ++j) {
    for (int i : deps[j])
      if (i >= 0 && size_t(i) < j)
        depth[j] = std::max(depth[j], depth[size_t(i)] + 1);
    longest = std::max(longest, depth[j]);
  }
  return longest;
}

} // namespace dmrt
