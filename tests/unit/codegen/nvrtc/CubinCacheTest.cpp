//===- CubinCacheTest.cpp - The on-disk cubin cache and compileAll --------===//

#include "codegen/nvrtc/NvrtcCompiler.h"

#include "NvrtcTestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace dmcgen;
using namespace dmcgen::test;

namespace {

class CubinCache : public ::testing::Test {
protected:
  void SetUp() override {
    options.cacheDir = dir.sub("cache");
    options.failedSourceDir = dir.sub("failed");
  }

  CompiledKernel compile(const CompileJob &job) { return compile(job, options); }
  CompiledKernel compile(const CompileJob &job, const CompileOptions &o) {
    CompiledKernel k;
    std::string error;
    EXPECT_TRUE(compileToCubin(job, o, k, error)) << error;
    EXPECT_TRUE(isElf(k.cubin));
    return k;
  }

  /// The single entry in the cache directory.
  std::string onlyEntry() {
    std::vector<std::string> files = filesIn(options.cacheDir);
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? "" : files[0];
  }

  TempDir dir;
  CompileOptions options;
  CompileJob job{"axpy", kSmallKernel};
};

TEST_F(CubinCache, SecondCompileIsACacheHitWithIdenticalBytes) {
  CompiledKernel first = compile(job);
  EXPECT_FALSE(first.fromCache);
  std::string entry = onlyEntry();
  std::string stem = std::filesystem::path(entry).stem().string();
  EXPECT_EQ(std::filesystem::path(entry).extension(), ".cubin");
  EXPECT_EQ(stem.size(), 64u); // SHA-256 hex
  EXPECT_EQ(stem.find_first_not_of("0123456789abcdef"), std::string::npos);

  CompiledKernel second = compile(job);
  EXPECT_TRUE(second.fromCache);
  EXPECT_EQ(second.name, "axpy");
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(filesIn(options.cacheDir).size(), 1u); // no temp files left
}

TEST_F(CubinCache, ChangedFlagArchOrSourceMisses) {
  CompiledKernel base = compile(job);
  ASSERT_FALSE(base.fromCache);
  ASSERT_TRUE(compile(job).fromCache);

  CompileOptions flagged = options;
  flagged.flags = {"-DUNUSED=1"};
  EXPECT_FALSE(compile(job, flagged).fromCache);
  EXPECT_TRUE(compile(job, flagged).fromCache);

  CompileOptions otherArch = options;
  otherArch.arch = "sm_90";
  EXPECT_FALSE(compile(job, otherArch).fromCache);

  CompileJob edited = job;
  edited.source += "// edited\n";
  EXPECT_FALSE(compile(edited).fromCache);

  EXPECT_EQ(filesIn(options.cacheDir).size(), 4u);
  EXPECT_TRUE(compile(job).fromCache); // the original entry is untouched
}

TEST_F(CubinCache, CorruptEntryIsRecompiled) {
  CompiledKernel good = compile(job);
  std::string entry = onlyEntry();
  std::string bytes = readFile(entry);
  ASSERT_GT(bytes.size(), 100u);

  // One flipped byte in the middle of the cubin.
  bytes[bytes.size() / 2] ^= 0x5a;
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
  CompiledKernel again = compile(job);
  EXPECT_FALSE(again.fromCache);
  EXPECT_EQ(again.cubin, good.cubin);
  EXPECT_TRUE(compile(job).fromCache); // the entry was rewritten

  // Truncated, then empty, then garbage.
  for (std::string junk : {readFile(entry).substr(0, 30), std::string(),
                           std::string("not a cubin at all")}) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << junk;
    CompiledKernel k = compile(job);
    EXPECT_FALSE(k.fromCache);
    EXPECT_EQ(k.cubin, good.cubin);
  }
}

TEST_F(CubinCache, UnreadableEntryIsRecompiled) {
  compile(job);
  std::string entry = onlyEntry();
  // A directory where the entry should be: unreadable and unreplaceable.
  std::filesystem::remove(entry);
  std::filesystem::create_directory(entry);
  CompiledKernel k = compile(job);
  EXPECT_FALSE(k.fromCache);
  EXPECT_NE(k.log.find("warning: cubin not cached"), std::string::npos)
      << k.log;
}

TEST_F(CubinCache, UnwritableCacheDirStillCompiles) {
  std::ofstream(dir.sub("plainfile")) << "x";
  options.cacheDir = dir.sub("plainfile") + "/cache";
  CompiledKernel k = compile(job);
  EXPECT_FALSE(k.fromCache);
  EXPECT_NE(k.log.find("warning: cubin not cached"), std::string::npos)
      << k.log;
}

TEST_F(CubinCache, NoCacheDirNeverHits) {
  options.cacheDir = "";
  EXPECT_FALSE(compile(job).fromCache);
  EXPECT_FALSE(compile(job).fromCache);
}

std::vector<CompileJob> numberedJobs(int count) {
  std::vector<CompileJob> jobs;
  for (int i = 0; i < count; ++i) {
    std::string name = "scale" + std::to_string(i);
    jobs.push_back({name, "extern \"C\" __global__ void " + name +
                              "(float *y) { y[threadIdx.x] *= " +
                              std::to_string(i + 2) + ".0f; }\n"});
  }
  return jobs;
}

TEST_F(CubinCache, CompileAllKeepsJobOrder) {
  std::vector<CompileJob> jobs = numberedJobs(8);
  std::vector<std::string> errors;
  std::vector<CompiledKernel> results = compileAll(jobs, options, 2, errors);
  ASSERT_EQ(results.size(), jobs.size());
  ASSERT_EQ(errors.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(errors[i].empty()) << errors[i];
    EXPECT_EQ(results[i].name, jobs[i].name);
    EXPECT_TRUE(isElf(results[i].cubin));
    EXPECT_TRUE(contains(results[i].cubin, jobs[i].name)) << i;
    EXPECT_FALSE(results[i].fromCache);
    EXPECT_GT(results[i].seconds, 0.0);
  }
  EXPECT_EQ(filesIn(options.cacheDir).size(), 8u);

  // Again: all from the cache, same bytes, same order.
  std::vector<CompiledKernel> cached = compileAll(jobs, options, 2, errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(cached[i].fromCache);
    EXPECT_EQ(cached[i].cubin, results[i].cubin);
  }
}

TEST_F(CubinCache, CompileAllReportsErrorsPerJob) {
  std::vector<CompileJob> jobs = numberedJobs(5);
  jobs[3].source = "this is not CUDA\n";
  std::vector<std::string> errors;
  std::vector<CompiledKernel> results = compileAll(jobs, options, 0, errors);
  ASSERT_EQ(results.size(), 5u);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (i == 3) {
      EXPECT_NE(errors[i].find("scale3"), std::string::npos) << errors[i];
      EXPECT_TRUE(results[i].cubin.empty());
    } else {
      EXPECT_TRUE(errors[i].empty()) << errors[i];
      EXPECT_TRUE(contains(results[i].cubin, jobs[i].name));
    }
  }
  EXPECT_TRUE(compileAll({}, options, 4, errors).empty());
  EXPECT_TRUE(errors.empty());
}

} // namespace
