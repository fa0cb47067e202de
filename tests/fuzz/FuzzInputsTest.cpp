//===- FuzzInputsTest.cpp - Every kept fuzz input, as an ordinary test -----===//
//
// Runs each target (FuzzTarget.h) on every file of corpus/TARGET/ (the seeds)
// and regressions/TARGET/ (inputs that once crashed, hung or leaked, each
// named after what it found). No libFuzzer and no clang: the normal build
// runs these, one ctest per target (fuzz.inputs.TARGET, a gtest filter).
// A target that breaks a property aborts, so a regression fails the test;
// the death tests below check that this is so.
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzTarget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using dmc::fuzz::Target;

namespace {

struct Input {
  const Target *target;
  fs::path file;
};

/// gtest names a failing input by its file.
void PrintTo(const Input &in, std::ostream *os) { *os << in.file; }

std::vector<Input> listInputs() {
  std::vector<Input> inputs;
  for (const Target &t : dmc::fuzz::targets())
    for (const char *kind : {"corpus", "regressions"}) {
      fs::path dir = fs::path(DMC_FUZZ_DIR) / kind / t.name;
      if (!fs::is_directory(dir))
        continue;
      std::vector<fs::path> files;
      for (const fs::directory_entry &e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename() != "README.md")
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path &f : files)
        inputs.push_back({&t, f});
    }
  return inputs;
}

/// Every kept input, listed once per process.
const std::vector<Input> &allInputs() {
  static const std::vector<Input> inputs = listInputs();
  return inputs;
}

std::string testName(const testing::TestParamInfo<Input> &info) {
  std::string name = info.param.file.parent_path().parent_path().filename().string() + "_" +
                     info.param.file.filename().string();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name + "_" + std::to_string(info.index);
}

class FuzzInputs : public testing::TestWithParam<Input> {};

TEST_P(FuzzInputs, RunsCleanly) {
  const Input &in = GetParam();
  std::ifstream is(in.file, std::ios::binary);
  ASSERT_TRUE(is) << in.file << ": cannot read";
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(in.target->run(bytes.data(), bytes.size()), 0) << in.file;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A hang found by the fuzzer is kept here; it must now finish quickly.
  EXPECT_LT(seconds, 60.0) << in.file << " took " << seconds << " s";
}

// One instantiation per target, so `--gtest_filter=TARGET/*` selects it.
#define DMC_FUZZ_INPUTS(NAME)                                                                  \
  INSTANTIATE_TEST_SUITE_P(                                                                    \
      NAME, FuzzInputs, testing::ValuesIn([] {                                                 \
        std::vector<Input> mine;                                                               \
        std::copy_if(allInputs().begin(), allInputs().end(), std::back_inserter(mine),         \
                     [](const Input &i) { return std::string(i.target->name) == #NAME; });     \
        return mine;                                                                           \
      }()),                                                                                    \
      testName);
DMC_FUZZ_INPUTS(model)
DMC_FUZZ_INPUTS(config)
DMC_FUZZ_INPUTS(manifest)
DMC_FUZZ_INPUTS(bundle)
DMC_FUZZ_INPUTS(safetensors)
DMC_FUZZ_INPUTS(tuningdb)

/// Every target has seeds: a target with none would pass without running.
TEST(FuzzCorpus, EveryTargetHasSeeds) {
  for (const Target &t : dmc::fuzz::targets()) {
    size_t seeds = 0;
    for (const Input &in : allInputs())
      seeds += in.target == &t && in.file.parent_path().parent_path().filename() == "corpus";
    EXPECT_GE(seeds, 3u) << "tests/fuzz/corpus/" << t.name << " has " << seeds << " seeds";
  }
}

/// A broken property aborts the process, naming the target and the property.
TEST(FuzzCorpusDeathTest, BrokenPropertyAborts) {
  EXPECT_DEATH(dmc::fuzz::require(false, "manifest", "planted"),
               "dmc fuzz target manifest: property violated: planted");
  EXPECT_DEATH(dmc::fuzz::requireNamed("other.json: bad", "fuzz.json", "config"),
               "does not start with the input's name");
  EXPECT_DEATH(dmc::fuzz::requireNamed("", "fuzz.json", "config"), "empty error message");
}

} // namespace
