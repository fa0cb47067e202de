//===- GemmAlgoConfig.cpp - A cuBLASLt algorithm as data ------------------===//
#include "runtime/format/GemmAlgoConfig.h"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <tuple>
#include <vector>

namespace dmrt {

namespace {

auto keyOf(const GemmAlgoConfig &c) {
  return std::make_tuple(c.algoId, c.tile, c.stages, c.splitK, c.reduction, c.swizzle,
                         c.customOption, c.clusterShape);
}

constexpr const char *kPrefix = "cublaslt";

/// One field of the text form: its name, the smallest and largest value.
struct Field {
  const char *name;
  int64_t lo, hi;
};

const Field kFields[] = {
    {"id", 0, std::numeric_limits<int32_t>::max()},
    {"tile", 0, std::numeric_limits<uint32_t>::max()},
    {"stages", 0, std::numeric_limits<uint32_t>::max()},
    {"splitk", 1, std::numeric_limits<int32_t>::max()},
    {"reduction", 0, std::numeric_limits<uint32_t>::max()},
    {"swizzle", 0, std::numeric_limits<uint32_t>::max()},
    {"custom", 0, std::numeric_limits<uint32_t>::max()},
    {"inner", 0, std::numeric_limits<uint16_t>::max()},
    {"cluster", 0, std::numeric_limits<uint16_t>::max()},
};

std::string expectedForm() {
  std::string s = std::string("\"") + kPrefix;
  for (const Field &f : kFields)
    s += std::string(" ") + f.name + "=N";
  return s + "\"";
}

} // namespace

bool GemmAlgoConfig::operator==(const GemmAlgoConfig &o) const {
  return sameKey(o) && innerShape == o.innerShape;
}

bool GemmAlgoConfig::sameKey(const GemmAlgoConfig &o) const { return keyOf(*this) == keyOf(o); }

std::string serializeAlgorithm(const GemmAlgoConfig &c) {
  int64_t values[] = {c.algoId,    c.tile,         c.stages,     c.splitK,      c.reduction,
                      c.swizzle,   c.customOption, c.innerShape, c.clusterShape};
  std::string s = kPrefix;
  for (size_t i = 0; i < std::size(kFields); ++i)
    s += std::string(" ") + kFields[i].name + "=" + std::to_string(values[i]);
  return s;
}

bool parseAlgorithm(const std::string &text, GemmAlgoConfig &out, std::string &error) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;)
    words.push_back(w);
  if (words.empty() || words[0] != kPrefix) {
    error = "algorithm \"" + text + "\": expected \"" + kHeuristicAlgorithm + "\" or " +
            expectedForm();
    return false;
  }
  if (words.size() != std::size(kFields) + 1) {
    error = "algorithm \"" + text + "\": expected " + std::to_string(std::size(kFields)) +
            " fields, got " + std::to_string(words.size() - 1) + " (the form is " +
            expectedForm() + ")";
    return false;
  }
  int64_t values[std::size(kFields)];
  for (size_t i = 0; i < std::size(kFields); ++i) {
    const Field &f = kFields[i];
    const std::string &w = words[i + 1];
    std::string name = std::string(f.name) + "=";
    if (w.compare(0, name.size(), name) != 0) {
      error = "algorithm \"" + text + "\": field " + std::to_string(i + 1) + " is \"" + w +
              "\", expected " + name + "N";
      return false;
    }
    std::string digits = w.substr(name.size());
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || errno != 0 || v < f.lo || v > f.hi ||
        !(digits[0] >= '0' && digits[0] <= '9')) {
      error = "algorithm \"" + text + "\": " + f.name + " is \"" + digits +
              "\", expected an integer in [" + std::to_string(f.lo) + ", " +
              std::to_string(f.hi) + "]";
      return false;
    }
    values[i] = v;
  }
  GemmAlgoConfig c;
  c.algoId = int32_t(values[0]);
  c.tile = uint32_t(values[1]);
  c.stages = uint32_t(values[2]);
  c.splitK = int32_t(values[3]);
  c.reduction = uint32_t(values[4]);
  c.swizzle = uint32_t(values[5]);
  c.customOption = uint32_t(values[6]);
  c.innerShape = uint16_t(values[7]);
  c.clusterShape = uint16_t(values[8]);
  out = c;
  return true;
}

} // namespace dmrt
