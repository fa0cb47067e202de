//===- AttentionCompileTest.cpp - Every kernel kind through NVRTC ---------===//
//
// The emitted sources of a set of problems (bf16/f16, D 32/64/128, causal,
// key padding, dropout with and without shared Philox groups, Lq != Lk,
// odd L, transposed layouts, saved keep bits) compile through the project's NVRTC driver for
// sm_90a and sm_80, each giving a cubin that holds its entry.
//
//===----------------------------------------------------------------------===//

#include "codegen/attention/AttentionProblem.h"
#include "codegen/nvrtc/NvrtcCompiler.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace dmcgen;

namespace {

struct Named {
  std::string name;
  AttentionProblem p;
};

std::vector<Named> problems() {
  using dmrt::DType;
  std::vector<Named> out;
  out.push_back({"bf16_d64_plain", contiguousProblem(DType::BF16, 2, 3, 197, 197, 64)});
  {
    AttentionProblem p = contiguousProblem(DType::F16, 2, 3, 97, 64, 32);
    p.causal = true;
    p.dropout = 0.1;
    out.push_back({"f16_d32_causal_dropout_cross", p});
  }
  {
    AttentionProblem p = contiguousProblem(DType::BF16, 4, 2, 128, 256, 128);
    p.keyPadding = true;
    p.dropout = 0.1; // order bhjk, Lk = 256: grouped Philox
    out.push_back({"bf16_d128_padding_dropout", p});
  }
  {
    AttentionProblem p = contiguousProblem(DType::BF16, 2, 12, 197, 197, 64);
    rowMajorStrides("bjhp", 2, 12, 197, 64, p.q);
    rowMajorStrides("bkhp", 2, 12, 197, 64, p.k);
    p.v = p.k;
    p.dropout = 0.1;
    p.causal = true;
    p.keyPadding = true;
    out.push_back({"bf16_d64_bjhp_all_masks", p});
  }
  out.push_back({"f16_d128_odd", contiguousProblem(DType::F16, 1, 1, 33, 65, 128)});
  out.push_back({"bf16_d16_tiny", contiguousProblem(DType::BF16, 1, 1, 1, 1, 16)});
  out.push_back({"bf16_d96", contiguousProblem(DType::BF16, 1, 2, 50, 50, 96)});
  // Saved keep bits: the forward writes them, the backward kernels read them.
  {
    AttentionProblem p = contiguousProblem(DType::BF16, 8, 16, 512, 512, 64);
    p.dropout = 0.1;
    p.keepBits = true;
    out.push_back({"bf16_d64_keepbits_bert", p});
  }
  {
    AttentionProblem p = contiguousProblem(DType::F16, 2, 3, 97, 45, 128);
    p.causal = true;
    p.keyPadding = true;
    p.dropout = 0.2;
    p.keepBits = true;
    p.bits = queryContiguousKeepBits(p); // (b, h, w, j)
    out.push_back({"f16_d128_keepbits_masks_wj", p});
  }
  {
    AttentionProblem p = contiguousProblem(DType::BF16, 2, 12, 197, 197, 64);
    p.dropout = 0.1;
    p.dropoutStrides = {12 * 197 * 197, 197 * 197, 1, 197}; // order bhkj: no key runs
    p.keepBits = true;
    out.push_back({"bf16_d64_keepbits_bhkj", p});
  }
  return out;
}

std::vector<CompileJob> jobsFor(const std::vector<Named> &ps) {
  std::vector<CompileJob> jobs;
  for (const Named &n : ps) {
    EXPECT_EQ(validate(n.p), "") << n.name;
    for (auto kind : {AttentionKernelKind::Forward, AttentionKernelKind::GradKV,
                      AttentionKernelKind::GradQ}) {
      const std::string entry = "attn_" + n.name + "_" + kernelKindName(kind);
      std::string name = entry;
      std::replace(name.begin(), name.end(), '-', '_');
      jobs.push_back({name, emitAttentionSource(n.p, defaultTiles(n.p, kind), kind, name)});
    }
  }
  return jobs;
}

/// Compiles `jobs` for `arch` (with NVRTC `flags`): each must compile without
/// a ptxas warning (a wgmma ptxas serializes is one) into a cubin holding its entry.
void compileAndCheck(const std::vector<CompileJob> &jobs, const std::string &arch,
                     const std::vector<std::string> &flags = {}) {
  CompileOptions options;
  options.arch = arch;
  options.flags = flags;
  std::vector<std::string> errors;
  std::vector<CompiledKernel> kernels = compileAll(jobs, options, 2, errors);
  ASSERT_EQ(kernels.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(errors[i], "") << jobs[i].name;
    for (const char *word : {"warning", "serialized"})
      EXPECT_EQ(kernels[i].log.find(word), std::string::npos)
          << jobs[i].name << ": " << kernels[i].log;
    const std::vector<char> &cubin = kernels[i].cubin;
    EXPECT_GE(cubin.size(), 4u);
    const std::string &entry = jobs[i].name;
    EXPECT_NE(std::search(cubin.begin(), cubin.end(), entry.begin(), entry.end()), cubin.end())
        << entry << " not in its cubin";
  }
}

void compileFor(const std::string &arch) { compileAndCheck(jobsFor(problems()), arch); }

TEST(AttentionCompile, EveryKindForSm90a) { compileFor("sm_90a"); }

TEST(AttentionCompile, WgmmaForSm90a) {
  // Every kind's warpgroup tiles on every head-dim-64 problem above: ptxas
  // must neither fail nor warn (a wgmma it serializes is a warning).
  const TileLimits sm90a{kMaxSharedBytesSm90, true};
  std::vector<CompileJob> jobs;
  for (const Named &n : problems())
    for (auto kind : {AttentionKernelKind::Forward, AttentionKernelKind::GradKV,
                      AttentionKernelKind::GradQ})
      for (const TileCandidate &c : tileCandidates(n.p, kind, sm90a)) {
        if (!c.tiles.wgmma || !c.rejected.empty())
          continue;
        std::string name = "attn_" + n.name + "_" + kernelKindName(kind) + "_wgmma_" +
                           std::to_string(c.tiles.blockM) + "x" + std::to_string(c.tiles.blockN) +
                           (c.tiles.minBlocks > 0 ? "_b" + std::to_string(c.tiles.minBlocks) : "");
        std::replace(name.begin(), name.end(), '-', '_');
        jobs.push_back({name, emitAttentionSource(n.p, c.tiles, kind, name)});
      }
  // Four problems of head dim 64: two tiles each for the forward and grad-q,
  // one for grad-kv (128-query tiles would hold 192 accumulators), and the
  // forward's 64x64 again at 4 blocks an SM (128 registers; grad-q's shared
  // memory fits 3, and grad-kv's wgmma would be serialized at 128 registers).
  ASSERT_EQ(jobs.size(), 24u);
  compileAndCheck(jobs, "sm_90a", {"--ptxas-options=-v"}); // -v: ptxas reports in full
}

TEST(AttentionCompile, EveryKindForSm80) { compileFor("sm_80"); }

TEST(AttentionCompile, HeadersAreEmbedded) {
  const auto &embedded = embeddedHeaders();
  for (const std::string &h : attentionDeviceHeaders())
    EXPECT_TRUE(std::any_of(embedded.begin(), embedded.end(),
                            [&](const auto &e) { return e.first == h; }))
        << h << " is not embedded for NVRTC (codegen/nvrtc/CMakeLists.txt)";
}

} // namespace
