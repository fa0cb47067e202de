//===- AttentionCases.cpp - The fused attention GPU test's problems -------===//

#include "tests/gpu/AttentionCases.h"

namespace dmc::attention_test {

using dmcgen::AttentionProblem;

namespace {

AttentionProblem problem(dmrt::DType t, int64_t Lq, int64_t Lk, int64_t D, bool causal,
                         double dropout) {
  AttentionProblem p = dmcgen::contiguousProblem(t, 2, 3, Lq, Lk, D);
  p.causal = causal;
  p.dropout = dropout;
  p.dropoutId = 11;
  return p;
}

} // namespace

std::vector<Case> cases(const std::string &arch) {
  using dmrt::DType;
  std::vector<Case> c;
  c.push_back({"bf16 L64 D64", problem(DType::BF16, 64, 64, 64, false, 0), {}});
  c.push_back({"bf16 L97 D64 causal dropout", problem(DType::BF16, 97, 97, 64, true, 0.1), {}});
  {
    Case k{"bf16 L197 D64 padding{0,131} dropout", problem(DType::BF16, 197, 197, 64, false, 0.1),
           {0, 131}};
    k.p.keyPadding = true;
    c.push_back(k);
  }
  {
    Case k{"bf16 L197 D128 causal padding{197,77}", problem(DType::BF16, 197, 197, 128, true, 0),
           {197, 77}};
    k.p.keyPadding = true;
    c.push_back(k);
  }
  c.push_back({"bf16 Lq97 Lk128 D64 dropout (Philox key runs)",
               problem(DType::BF16, 97, 128, 64, false, 0.1), {}});
  {
    Case k{"bf16 L197 D64 q bjhp k,v bkhp causal dropout",
           problem(DType::BF16, 197, 197, 64, true, 0.1), {}};
    dmcgen::rowMajorStrides("bjhp", 2, 3, 197, 64, k.p.q);
    dmcgen::rowMajorStrides("bkhp", 2, 3, 197, 64, k.p.k);
    k.p.v = k.p.k;
    c.push_back(k);
  }
  {
    Case k{"f16 L97 D128 padding{50,97} dropout", problem(DType::F16, 97, 97, 128, false, 0.1),
           {50, 97}};
    k.p.keyPadding = true;
    c.push_back(k);
  }
  c.push_back({"bf16 L64 D32 causal", problem(DType::BF16, 64, 64, 32, true, 0), {}});
  {
    // Strides of slices of a stacked [b][j][3][h][p] tensor: rows 3*H*D apart.
    Case k{"bf16 L128 D64 stacked-qkv strides dropout (key runs)",
           problem(DType::BF16, 128, 128, 64, false, 0.1), {}};
    for (dmcgen::AttentionStrides *s : {&k.p.q, &k.p.k, &k.p.v})
      *s = {128 * 3 * 3 * 64, 64, 3 * 3 * 64, 1};
    c.push_back(k);
  }
  c.push_back({"bf16 Lq197 Lk64 D64 causal (Lq > Lk)",
               problem(DType::BF16, 197, 64, 64, true, 0), {}});
  // Saved keep bits, as the emulation's cases (AttentionEmulationTest.cpp).
  const auto keep = [](Case k) {
    k.p.keepBits = true;
    return k;
  };
  c.push_back(keep({"bf16 Lq37 Lk77 D32 causal dropout, keep bits",
                    problem(DType::BF16, 37, 77, 32, true, 0.15), {}}));
  {
    Case k = keep({"f16 L45 D64 padding{0,29} dropout, keep bits (b, h, w, j)",
                   problem(DType::F16, 45, 45, 64, false, 0.2), {0, 29}});
    k.p.keyPadding = true;
    k.p.bits = dmcgen::queryContiguousKeepBits(k.p);
    c.push_back(k);
  }
  c.push_back(keep({"bf16 L197 D64 dropout bhjk, keep bits (vit)",
                    problem(DType::BF16, 197, 197, 64, false, 0.1), {}}));
  // grad-kv warps of 32 keys (two row blocks): blockN 128 with 4 warps.
  c.push_back(keep({"bf16 Lq97 Lk200 D64 causal dropout, keep bits, grad-kv 32x128x4",
                    problem(DType::BF16, 97, 200, 64, true, 0.1), {}, {32, 128, 4}}));
  {
    Case k{"bf16 L197 D64 padding{0,131} dropout, grad-kv 32x128x4",
           problem(DType::BF16, 197, 197, 64, false, 0.1), {0, 131}, {32, 128, 4}};
    k.p.keyPadding = true;
    c.push_back(k);
  }
  if (arch != "sm_90a")
    return c;
  // Warpgroup MMA (device/Wgmma.h), as the emulation's cases.
  const dmcgen::AttentionTiles wg{64, 64, 4, true};
  {
    Case k = keep({"bf16 L150 D64 causal dropout, keep bits (b, h, w, j), wgmma 64x64",
                   problem(DType::BF16, 150, 150, 64, true, 0.1), {}, wg, wg, wg});
    k.p.bits = dmcgen::queryContiguousKeepBits(k.p);
    c.push_back(k);
  }
  {
    Case k{"f16 Lq70 Lk200 D64 padding{0,150} dropout, wgmma 64x128 (grad-kv 64x64)",
           problem(DType::F16, 70, 200, 64, false, 0.2), {0, 150}, wg, {64, 128, 4, true},
           {64, 128, 4, true}};
    k.p.keyPadding = true;
    c.push_back(k);
  }
  c.push_back({"bf16 Lq100 Lk130 D64 causal, wgmma 64x64",
               problem(DType::BF16, 100, 130, 64, true, 0), {}, wg, wg, wg});
  c.push_back(keep({"bf16 L512 D64 dropout, keep bits, wgmma 64x64",
                    problem(DType::BF16, 512, 512, 64, false, 0.1), {}, wg, wg, wg}));
  return c;
}

} // namespace dmc::attention_test
