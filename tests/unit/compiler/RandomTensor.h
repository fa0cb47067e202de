//===- RandomTensor.h - seeded HostTensors for the interpreter's tests -----===//
#ifndef DMC_TESTS_UNIT_COMPILER_RANDOMTENSOR_H
#define DMC_TESTS_UNIT_COMPILER_RANDOMTENSOR_H

#include "compiler/HostTensor.h"

#include <map>
#include <random>
#include <string>

namespace dmc::test {

/// A tensor over `dims` (sizes from `sizes`), elements uniform in [-1, 1)
/// drawn from `seed`.
inline HostTensor randomTensor(const std::string &dims, const std::map<char, int64_t> &sizes,
                               unsigned seed) {
  std::vector<int64_t> shape;
  for (char d : dims)
    shape.push_back(sizes.at(d));
  HostTensor t(dims, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (double &x : t.data)
    x = dist(gen);
  return t;
}

} // namespace dmc::test

#endif // DMC_TESTS_UNIT_COMPILER_RANDOMTENSOR_H
