//===- FuzzTarget.cpp - The target table and the property check -----------===//
#include "tests/fuzz/FuzzTarget.h"

#include <cstdio>
#include <cstdlib>

namespace dmc::fuzz {

void require(bool ok, const char *target, const std::string &what) {
  if (ok)
    return;
  std::fprintf(stderr, "dmc fuzz target %s: property violated: %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

void requireNamed(const std::string &error, const std::string &name, const char *target) {
  require(!error.empty(), target, "a rejected input got an empty error message");
  require(error.compare(0, name.size(), name) == 0, target,
          "the error does not start with the input's name '" + name + "': " + error);
}

} // namespace dmc::fuzz
