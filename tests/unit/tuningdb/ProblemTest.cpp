//===- ProblemTest.cpp - Tuning keys of bundle steps ----------------------===//
#include "Fixture.h"

#include "tuning-db/Codec.h"
#include "tuning-db/Match.h"
#include "tuning-db/Problem.h"

namespace dmc::tuningdb::test {
namespace {

/// A manifest with one softmax kernel reading t0 and writing t1, both in
/// `layout` over b=2, h=3, j=4.
dmrt::Manifest softmaxManifest(const std::string &layout, int64_t j = 4) {
  dmrt::Manifest m;
  m.model = "m";
  std::map<char, int64_t> extent = {{'b', 2}, {'h', 3}, {'j', j}};
  for (int64_t id : {0, 1}) {
    dmrt::BundleTensor t;
    t.id = id;
    t.name = "t" + std::to_string(id);
    t.dims = layout;
    for (char c : layout)
      t.shape.push_back(extent[c]);
    t.dtype = dmrt::DType::BF16;
    m.tensors.push_back(t);
  }
  dmrt::BundleKernel k;
  k.name = "softmax";
  k.entry = "k0_softmax";
  k.inputs = {0};
  k.outputs = {1};
  m.kernels.push_back(k);
  m.reindex();
  return m;
}

TEST(TuningDbProblem, SignatureIsLayoutIndependentAndLayoutsAreKept) {
  dmrt::Manifest a = softmaxManifest("bhj"), b = softmaxManifest("jbh");
  Problem pa = kernelProblem(a, a.kernels[0]), pb = kernelProblem(b, b.kernels[0]);
  EXPECT_EQ(pa.signature, "kernel softmax(bhj->bhj)");
  EXPECT_EQ(pa.signature, pb.signature);
  EXPECT_EQ(pa.sizes, pb.sizes);
  EXPECT_EQ(pa.dtype, "bf16");
  EXPECT_EQ(pa.layouts, (std::vector<std::string>{"bhj", "bhj"}));
  EXPECT_EQ(pb.layouts, (std::vector<std::string>{"jbh", "jbh"}));
  Record r = kernel(0);
  fillProblem(pa, r);
  EXPECT_TRUE(sameProblem(pa, r));
  EXPECT_FALSE(sameProblem(pb, r)); // another layout: another candidate
  dmrt::Manifest c = softmaxManifest("bhj", 8);
  EXPECT_FALSE(sameProblem(kernelProblem(c, c.kernels[0]), r)); // another size
}

/// softmaxManifest with a contraction c0 (t1 x t1 -> t2 over b, h, j, k)
/// after the kernel, both as steps of the bundle.
dmrt::Manifest stepManifest(const std::string &layout, const std::string &config,
                            const std::string &algorithm) {
  dmrt::Manifest m = softmaxManifest(layout);
  dmrt::BundleTensor t;
  t.id = 2;
  t.name = "t2";
  t.dims = "bhjk";
  t.shape = {2, 3, 4, 4};
  t.dtype = dmrt::DType::BF16;
  m.tensors.push_back(t);
  m.kernels[0].config = config;
  m.kernels[0].phase = "forward";
  dmrt::BundleContraction c;
  c.id = 0;
  c.phase = "forward";
  c.a = 1;
  c.b = 1;
  c.d = 2;
  c.algorithm = algorithm;
  m.contractions.push_back(c);
  m.steps = {{dmrt::BundleStep::Kernel, 0}, {dmrt::BundleStep::Contraction, 0}};
  m.reindex();
  return m;
}

TEST(TuningDbProblem, StepProblemIsEveryStepInItsConfiguration) {
  dmrt::Manifest a = stepManifest("bhj", "lane j, tx 32", "heuristic");
  Problem p = stepProblem(a);
  EXPECT_EQ(p.kind, Kind::Step);
  EXPECT_EQ(p.signature.rfind("step 1 kernels 1 contractions ", 0), 0u) << p.signature;
  EXPECT_EQ(p.sizes, (std::map<std::string, int64_t>{{"b", 2}, {"h", 3}, {"j", 4}, {"k", 4}}));
  EXPECT_EQ(p.dtype, "bf16");
  EXPECT_TRUE(p.layouts.empty());
  // The same steps (another model name, other tensor names): the same problem.
  dmrt::Manifest same = stepManifest("bhj", "lane j, tx 32", "heuristic");
  same.model = "other";
  same.tensors[0].name = "renamed";
  EXPECT_EQ(stepProblem(same).signature, p.signature);
  Record r = kernel(0);
  fillProblem(p, r);
  EXPECT_TRUE(sameProblem(stepProblem(same), r));
  // Another knob, algorithm, layout or step order: another step.
  for (const dmrt::Manifest &other :
       {stepManifest("bhj", "lane j, tx 64", "heuristic"),
        stepManifest("bhj", "lane j, tx 32", "cublaslt id=66 tile=20"),
        stepManifest("jbh", "lane j, tx 32", "heuristic")}) {
    EXPECT_NE(stepProblem(other).signature, p.signature);
    EXPECT_FALSE(sameProblem(stepProblem(other), r));
  }
  dmrt::Manifest swapped = stepManifest("bhj", "lane j, tx 32", "heuristic");
  std::swap(swapped.steps[0], swapped.steps[1]);
  EXPECT_NE(stepProblem(swapped).signature, p.signature);
  // A step record's codegen version moves with every family's.
  int64_t sum = 0;
  for (const CodegenVersion &v : kCodegenVersions)
    sum += v.version;
  EXPECT_EQ(codegenVersion(Kind::Step, p.signature), sum);
  // And it is a record like any other: written and read back.
  r.knobs.clear();
  r.software.codegen = sum;
  Record back;
  std::string error;
  ASSERT_TRUE(decodeLine(encodeLine(r), "db.jsonl:1", back, error)) << error;
  EXPECT_EQ(back.kind, Kind::Step);
  EXPECT_EQ(key(back), key(r));
  EXPECT_EQ(describeCandidate(back), "the whole step, CUDA graphs");
}

TEST(TuningDbProblem, TransposeProblemIsTheInsertedKernels) {
  // A bundle's transpose kernel reading t0 as bhj and writing t1 as jbh.
  dmrt::Manifest m = softmaxManifest("bhj");
  m.tensors[1].dims = "jbh";
  m.tensors[1].shape = {4, 2, 3};
  m.kernels[0].name = "transpose";
  m.reindex();
  Problem inBundle = kernelProblem(m, m.kernels[0]);
  Problem p = transposeProblem(m.tensors[0], "bhj", "jbh");
  EXPECT_EQ(p.signature, "kernel transpose(bhj->bhj)");
  EXPECT_EQ(p.signature, inBundle.signature);
  EXPECT_EQ(p.sizes, inBundle.sizes);
  EXPECT_EQ(p.dtype, inBundle.dtype);
  EXPECT_EQ(p.layouts, inBundle.layouts);
  Record r = kernel(0);
  fillProblem(inBundle, r);
  EXPECT_TRUE(sameProblem(p, r));
  EXPECT_FALSE(sameProblem(transposeProblem(m.tensors[0], "jbh", "bhj"), r)); // the other way
  EXPECT_FALSE(sameProblem(transposeProblem(m.tensors[0], "bhj", "hbj"), r));
}

TEST(TuningDbProblem, KernelMatchingLeavesOutTheLibraries) {
  Record r = kernel(0);
  Software s = software();
  s.cublaslt += 1;
  EXPECT_EQ(mismatch(r, h100(), s), "other cuBLASLt (" + std::to_string(r.software.cublaslt) + ")");
  EXPECT_EQ(mismatch(r, h100(), s, /*libraries=*/false), "");
  s.nvrtc = "12.8";
  EXPECT_EQ(mismatch(r, h100(), s, false), "other NVRTC (" + r.software.nvrtc + ")");
}

/// A knob written only where set (`field` of `k` nonzero): absent at 0, so
/// records keep the keys they had before the knob existed; set to `value` it
/// is another candidate, read back by configKnobs, and a planted 0 is
/// rejected. Returns the record with the knob, for further plants.
Record expectOptionalKnob(dmrt::ConfigKernel k, int64_t dmrt::ConfigKernel::*field,
                          const char *name, int64_t value) {
  Record without = kernel(0), with = kernel(0);
  k.*field = 0;
  without.knobs = recordKnobs(k);
  EXPECT_EQ(without.knobs.count(name), 0u) << name;
  k.*field = value;
  with.knobs = recordKnobs(k);
  EXPECT_EQ(std::get<int64_t>(with.knobs.at(name)), value) << name;
  EXPECT_NE(key(without), key(with)) << name;
  dmrt::ConfigKernel back;
  EXPECT_TRUE(configKnobs(with, back)) << name;
  EXPECT_EQ(back.*field, value) << name;
  EXPECT_TRUE(configKnobs(without, back)) << name;
  EXPECT_EQ(back.*field, 0) << name;
  Record planted = with;
  planted.knobs[name] = int64_t(0); // planted: the knob must be positive
  EXPECT_FALSE(configKnobs(planted, back)) << name;
  return with;
}

TEST(TuningDbProblem, UnrollIsAKnobOnlyWhereSet) {
  // A sweep unrolled whole has no "unroll" knob; unrolled by 2 it is another
  // candidate.
  dmrt::ConfigKernel k;
  k.laneDim = "u";
  k.vec = 8;
  k.split = 8;
  expectOptionalKnob(k, &dmrt::ConfigKernel::unroll, "unroll", 2);
}

TEST(TuningDbProblem, MinBlocksIsAKnobOnlyWhereSet) {
  // Tiles at their kernel's own launch bounds have no "min_blocks" knob.
  dmrt::ConfigKernel k;
  k.blockM = k.blockN = 64;
  k.warps = 4;
  k.wgmma = true;
  Record four = expectOptionalKnob(k, &dmrt::ConfigKernel::minBlocks, "min_blocks", 4);
  dmrt::ConfigKernel back;
  for (const char *tile : {"block_m", "block_n", "warps", "wgmma"})
    four.knobs.erase(tile); // planted: blocks an SM without tiles
  EXPECT_FALSE(configKnobs(four, back));
}

TEST(TuningDbProblem, WgmmaIsAKnobOnlyWhereSet) {
  // mma.sync tiles have no "wgmma" knob, so their records keep the keys they
  // had before it existed; the same tiles as wgmma are another candidate.
  dmrt::ConfigKernel k;
  k.blockM = k.blockN = 64;
  k.warps = 4;
  Record sync = kernel(0), group = kernel(0);
  sync.knobs = recordKnobs(k);
  EXPECT_EQ(sync.knobs.count("wgmma"), 0u);
  k.wgmma = true;
  group.knobs = recordKnobs(k);
  EXPECT_EQ(std::get<int64_t>(group.knobs.at("wgmma")), 1);
  EXPECT_NE(key(sync), key(group));
  dmrt::ConfigKernel back;
  ASSERT_TRUE(configKnobs(group, back));
  EXPECT_TRUE(back.wgmma);
  ASSERT_TRUE(configKnobs(sync, back));
  EXPECT_FALSE(back.wgmma);
  group.knobs["wgmma"] = int64_t(2); // planted: the knob is 1 when present
  EXPECT_FALSE(configKnobs(group, back));
  Record plain = kernel(0); // planted: wgmma without tiles
  plain.knobs = {{"lane_dim", std::string("u")}, {"tx", int64_t(1)}, {"ty", int64_t(1)},
                 {"per_thread", int64_t(1)},     {"vec", int64_t(1)}, {"split", int64_t(1)},
                 {"wgmma", int64_t(1)}};
  EXPECT_FALSE(configKnobs(plain, back));
}

} // namespace
} // namespace dmc::tuningdb::test
