//===- Fixture.h - Sample records and scratch files for tuning-db tests ---===//
#ifndef DMC_TESTS_TUNINGDB_FIXTURE_H
#define DMC_TESTS_TUNINGDB_FIXTURE_H

#include "tuning-db/Record.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace dmc::tuningdb::test {

inline Device h100() { return {"NVIDIA H100 80GB HBM3", "9.0", 132, 2619000, 52428800}; }
/// This build's software, codegen at the version of plain kernels (kernel()'s family).
inline Software software() {
  return {13000, 130000, "13.0", codegenVersion(Kind::Kernel, "kernel softmax(bhjk->bhjk)")};
}

/// A kernel record; `variant` goes into a knob, so variants have distinct keys.
inline Record kernel(int64_t variant, double medianUs = 40.5) {
  Record r;
  r.device = h100();
  r.software = software();
  r.kind = Kind::Kernel;
  r.signature = "kernel(softmax){b,h,j,k}:bf16";
  r.sizes = {{"b", 8}, {"h", 16}, {"j", 512}, {"k", 512}};
  r.dtype = "bf16";
  r.layouts = {"bhjk", "bhkj"};
  r.knobs = {{"lane_dim", std::string("k")}, {"variant", variant}};
  r.medianUs = medianUs;
  r.minUs = medianUs - 0.5;
  r.samples = 50;
  r.date = "2025-06-01T12:00:00Z";
  return r;
}

/// A fresh empty directory, removed with its files at the end of the test.
class ScratchDir : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dmc-tuningdb-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string path(const std::string &name) const { return dir + "/" + name; }
  static void write(const std::string &file, const std::string &text) {
    std::ofstream(file, std::ios::binary) << text;
  }
  static std::string read(const std::string &file) {
    std::ostringstream s;
    s << std::ifstream(file, std::ios::binary).rdbuf();
    return s.str();
  }
  std::string dir;
};

} // namespace dmc::tuningdb::test

#endif // DMC_TESTS_TUNINGDB_FIXTURE_H
