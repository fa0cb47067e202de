//===- Examples.h - the example models, for parameterized tests -----------===//
#ifndef DMC_TESTS_EXAMPLES_H
#define DMC_TESTS_EXAMPLES_H

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace dmc::test {

/// Every examples/*.json, sorted.
inline std::vector<std::string> exampleModels() {
  std::vector<std::string> paths;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(DMC_EXAMPLES_DIR, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".json")
      paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// A test name from a model path: "bert-large.json" -> "bert_large".
inline std::string exampleName(const std::string &path) {
  std::string name = llvm::sys::path::stem(path).str();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

} // namespace dmc::test

#endif // DMC_TESTS_EXAMPLES_H
