//===- NvrtcCompilerTest.cpp - Compiling kernels through NVRTC ------------===//

#include "codegen/nvrtc/NvrtcCompiler.h"

#include "NvrtcTestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

using namespace dmcgen;
using namespace dmcgen::test;

namespace {

/// EM_CUDA, the ELF machine of a cubin.
constexpr uint16_t kEmCuda = 190;

uint16_t elfMachine(const std::vector<char> &b) {
  if (b.size() < 20)
    return 0;
  return (uint16_t)((unsigned char)b[18] | (unsigned char)b[19] << 8);
}

CompileOptions optionsIn(const TempDir &dir) {
  CompileOptions o;
  o.failedSourceDir = dir.sub("failed");
  return o; // cacheDir "" : every compile goes to NVRTC
}

TEST(NvrtcCompiler, VersionIsMajorDotMinor) {
  std::string v = nvrtcVersion();
  ASSERT_NE(v.find('.'), std::string::npos) << v;
  EXPECT_GE(std::atoi(v.c_str()), 12) << v;
}

TEST(NvrtcCompiler, SmallKernelGivesElfCubin) {
  TempDir dir;
  CompiledKernel k;
  std::string error;
  ASSERT_TRUE(compileToCubin({"axpy", kSmallKernel}, optionsIn(dir), k, error))
      << error;
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(k.name, "axpy");
  ASSERT_TRUE(isElf(k.cubin));
  EXPECT_EQ(elfMachine(k.cubin), kEmCuda);
  EXPECT_TRUE(contains(k.cubin, "axpy"));
  EXPECT_FALSE(k.fromCache);
  EXPECT_GT(k.seconds, 0.0);
}

TEST(NvrtcCompiler, EmbeddedHeadersMatchTheRuntimeSources) {
  const auto &headers = embeddedHeaders();
  auto find = [&](const std::string &name) -> const std::string * {
    for (const auto &[n, contents] : headers)
      if (n == name)
        return &contents;
    return nullptr;
  };
  std::string root = DMC_SOURCE_ROOT;
  // Each device header exactly once, under its path in the repository.
  ASSERT_EQ(headers.size(), 11u);
  for (const char *name :
       {"runtime/format/device/Types.h", "runtime/format/device/Philox.h",
        "runtime/format/device/Float16.h", "codegen/attention/device/Mma.h",
        "codegen/attention/device/Tile.h", "codegen/attention/device/Wgmma.h",
        "codegen/attention/device/Masking.h",
        "codegen/attention/device/Store.h", "codegen/attention/device/Forward.h",
        "codegen/attention/device/GradQ.h", "codegen/attention/device/GradKV.h"}) {
    ASSERT_NE(find(name), nullptr) << name;
    EXPECT_EQ(*find(name), readFile(root + "/" + name)) << name;
  }
}

TEST(NvrtcCompiler, KernelUsingPhiloxAndFloat16Compiles) {
  const char *source = R"(
#include "runtime/format/device/Philox.h"
#include "runtime/format/device/Float16.h"

// y[n] = bf16(dropout(x[n])), n the logical element index.
extern "C" __global__ void dropout_to_bf16(const float *x, uint16_t *y,
                                           uint64_t seed, uint32_t threshold,
                                           float scale, uint64_t count) {
  uint64_t n = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (n >= count)
    return;
  bool keep = dmrt::dropoutKeep(seed, 7u, n, threshold);
  y[n] = dmrt::floatToBf16(keep ? x[n] * scale : 0.0f);
}
)";
  TempDir dir;
  CompiledKernel k;
  std::string error;
  ASSERT_TRUE(compileToCubin({"dropout_to_bf16", source}, optionsIn(dir), k,
                             error))
      << error;
  ASSERT_TRUE(isElf(k.cubin));
  EXPECT_TRUE(contains(k.cubin, "dropout_to_bf16"));
}

TEST(NvrtcCompiler, TypesHeaderMayBeIncludedExplicitly) {
  const char *source = R"(
#include "runtime/format/device/Types.h"
#include "runtime/format/device/Float16.h"
extern "C" __global__ void to_half(const float *x, uint16_t *y) {
  y[threadIdx.x] = dmrt::floatToHalf(x[threadIdx.x]);
}
)";
  TempDir dir;
  CompiledKernel k;
  std::string error;
  EXPECT_TRUE(compileToCubin({"to_half", source}, optionsIn(dir), k, error))
      << error;
}

TEST(NvrtcCompiler, EveryAllowedArchCompiles) {
  TempDir dir;
  CompileOptions options = optionsIn(dir);
  ASSERT_EQ(allowedArchs(), (std::vector<std::string>{"sm_80", "sm_89", "sm_90",
                                                      "sm_90a", "sm_100"}));
  for (const std::string &arch : allowedArchs()) {
    options.arch = arch;
    CompiledKernel k;
    std::string error;
    ASSERT_TRUE(compileToCubin({"axpy_" + arch, kSmallKernel}, options, k,
                               error))
        << arch << ": " << error;
    EXPECT_TRUE(isElf(k.cubin)) << arch;
    EXPECT_EQ(elfMachine(k.cubin), kEmCuda) << arch;
  }
}

TEST(NvrtcCompiler, UnknownArchIsRejectedNamingTheAllowedOnes) {
  TempDir dir;
  CompileOptions options = optionsIn(dir);
  for (const char *arch : {"sm_70", "compute_90", "sm90a", ""}) {
    options.arch = arch;
    CompiledKernel k;
    std::string error;
    EXPECT_FALSE(compileToCubin({"axpy", kSmallKernel}, options, k, error));
    EXPECT_NE(error.find("'" + std::string(arch) + "'"), std::string::npos)
        << error;
    EXPECT_NE(error.find("axpy"), std::string::npos) << error;
    for (const std::string &allowed : allowedArchs())
      EXPECT_NE(error.find(allowed), std::string::npos) << error;
    EXPECT_TRUE(k.cubin.empty());
  }
}

TEST(NvrtcCompiler, SyntaxErrorReportsLogJobAndKeptSource) {
  const std::string source = "extern \"C\" __global__ void broken(float *y) {\n"
                             "  float v = 1.0f;\n"
                             "  y[0] = v +;\n"
                             "}\n";
  TempDir dir;
  CompileOptions options = optionsIn(dir);
  CompiledKernel k;
  std::string error;
  ASSERT_FALSE(compileToCubin({"broken_kernel", source}, options, k, error));
  EXPECT_TRUE(k.cubin.empty());
  EXPECT_NE(error.find("broken_kernel"), std::string::npos) << error;
  EXPECT_NE(error.find("sm_90a"), std::string::npos) << error;
  // The NVRTC log, with the line of the error, is in the message in full.
  ASSERT_FALSE(k.log.empty());
  EXPECT_NE(error.find(k.log), std::string::npos) << error;
  EXPECT_NE(error.find("broken_kernel(3): error"), std::string::npos) << error;

  const std::string marker = "source kept at ";
  size_t at = error.find(marker);
  ASSERT_NE(at, std::string::npos) << error;
  std::string kept = error.substr(at + marker.size());
  kept = kept.substr(0, kept.find('\n'));
  EXPECT_EQ(std::filesystem::path(kept).parent_path(),
            std::filesystem::path(options.failedSourceDir));
  ASSERT_TRUE(std::filesystem::exists(kept)) << kept;
  EXPECT_EQ(readFile(kept), source);
}

TEST(NvrtcCompiler, FailedSourceGoesToTempDirByDefault) {
  CompileOptions options; // failedSourceDir ""
  CompiledKernel k;
  std::string error;
  ASSERT_FALSE(compileToCubin({"nvrtc_test_default_dir", "int x = ;\n"},
                              options, k, error));
  const std::string marker = "source kept at ";
  size_t at = error.find(marker);
  ASSERT_NE(at, std::string::npos) << error;
  std::string kept = error.substr(at + marker.size());
  kept = kept.substr(0, kept.find('\n'));
  EXPECT_EQ(std::filesystem::path(kept).parent_path(),
            std::filesystem::temp_directory_path());
  EXPECT_EQ(readFile(kept), "int x = ;\n");
  std::error_code ec;
  std::filesystem::remove(kept, ec);
}

TEST(NvrtcCompiler, ExtraFlagsReachNvrtc) {
  const char *source = R"(
#ifndef DMC_TILE
#error "DMC_TILE not defined"
#endif
extern "C" __global__ void tiled(float *y) { y[threadIdx.x] = DMC_TILE; }
)";
  TempDir dir;
  CompileOptions options = optionsIn(dir);
  CompiledKernel k;
  std::string error;
  EXPECT_FALSE(compileToCubin({"tiled", source}, options, k, error));
  options.flags = {"-DDMC_TILE=64"};
  EXPECT_TRUE(compileToCubin({"tiled", source}, options, k, error)) << error;
  // A flag NVRTC does not know is an error naming the flag.
  options.flags = {"--no-such-flag"};
  EXPECT_FALSE(compileToCubin({"tiled", source}, options, k, error));
  EXPECT_NE(error.find("--no-such-flag"), std::string::npos) << error;
}

TEST(NvrtcCompiler, DefaultCacheDirFollowsTheEnvironment) {
  auto saved = [](const char *name) -> std::pair<bool, std::string> {
    const char *v = std::getenv(name);
    return {v != nullptr, v ? v : ""};
  };
  auto restore = [](const char *name, const std::pair<bool, std::string> &v) {
    if (v.first)
      setenv(name, v.second.c_str(), 1);
    else
      unsetenv(name);
  };
  auto dmc = saved("DMC_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"),
       home = saved("HOME");

  setenv("DMC_CACHE_DIR", "/x/dmc", 1);
  setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  setenv("HOME", "/x/home", 1);
  EXPECT_EQ(defaultCacheDir(), "/x/dmc");
  unsetenv("DMC_CACHE_DIR");
  EXPECT_EQ(defaultCacheDir(), "/x/xdg/dmc/nvrtc");
  setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(defaultCacheDir(), "/x/home/.cache/dmc/nvrtc");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(defaultCacheDir(), "/x/home/.cache/dmc/nvrtc");

  restore("DMC_CACHE_DIR", dmc);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

} // namespace
