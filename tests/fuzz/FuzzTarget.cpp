//===- FuzzTarget.cpp - The target table and the property check -----------===//
#include "tests/fuzz/FuzzTarget.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <unistd.h>
#include <vector>

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

const std::string &scratchDir() {
  static const std::string dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dmc-fuzz-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    require(mkdtemp(buf.data()) != nullptr, "scratch", "cannot create " + pattern);
    return std::string(buf.data());
  }();
  static const bool cleanup = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    return true;
  }();
  (void)cleanup;
  return dir;
}

} // namespace dmc::fuzz
