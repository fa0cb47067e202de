//===- BundleTest.cpp - manifest.json parsing and validation --------------===//
#include "runtime/Bundle.h"
#include "runtime/format/Checksum.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sys/stat.h>

using namespace dmrt;
using json = nlohmann::json;

namespace {

/// A small valid manifest: x[4,8] @ w[8,6] -> y[4,6] (bf16), one kernel
/// reading y and a bias, writing z, with an alias of z.
json validManifest() {
  return json::parse(R"({
  "format": "dmc-bundle", "version": 1, "model": "tiny", "arch": "sm_90a",
  "nvrtc": "13.0",
  "tensors": [
    {"id": 0, "name": "x", "role": "input", "dims": "mk", "shape": [4, 8],
     "dtype": "bf16", "bytes": 64, "alias": null},
    {"id": 1, "name": "w", "role": "param", "dims": "kn", "shape": [8, 6],
     "dtype": "bf16", "bytes": 96, "alias": null},
    {"id": 2, "name": "y", "role": "intermediate", "dims": "mn", "shape": [4, 6],
     "dtype": "bf16", "bytes": 48, "alias": null},
    {"id": 3, "name": "bias", "role": "param", "dims": "n", "shape": [6],
     "dtype": "f32", "bytes": 24, "alias": null},
    {"id": 4, "name": "z", "role": "output", "dims": "mn", "shape": [4, 6],
     "dtype": "bf16", "bytes": 48, "alias": null},
    {"id": 5, "name": "z_row1", "role": "intermediate", "dims": "n", "shape": [6],
     "dtype": "bf16", "bytes": 12, "alias": {"of": 4, "offset": 6}},
    {"id": 6, "name": "z_row1_view", "role": "intermediate", "dims": "n",
     "shape": [3], "dtype": "bf16", "bytes": 6, "alias": {"of": 5, "offset": 3}}
  ],
  "kernels": [
    {"id": 0, "name": "add_bias", "entry": "k0_add_bias",
     "cubin": "kernels/k0.cubin", "source": "kernels/k0.cu",
     "grid": [4, 1, 1], "block": [32, 1, 1], "shared_bytes": 0,
     "config": "block 32", "phase": "forward",
     "inputs": [2, 3], "outputs": [4], "flop": 24, "bytes": 120}
  ],
  "contractions": [
    {"id": 0, "equation": "mk,kn->mn", "phase": "forward",
     "a": 0, "b": 1, "d": 2, "alpha": 1.0, "beta": 0.0, "epilogue": "none",
     "flop": 384, "bytes": 208,
     "gemm": {"swap": true, "transa": "N", "transb": "N", "m": 6, "n": 4, "k": 8,
              "batch": 1,
              "a": {"rows": 6, "cols": 8, "ld": 6, "batch_stride": 0},
              "b": {"rows": 8, "cols": 4, "ld": 8, "batch_stride": 0},
              "d": {"rows": 6, "cols": 4, "ld": 6, "batch_stride": 0},
              "describe": "D^T = B^T A^T"},
     "unmappable": null},
    {"id": 1, "equation": "weird", "phase": "backward",
     "a": 0, "b": 1, "d": 2, "alpha": 1.0, "beta": 0.0, "epilogue": "none",
     "flop": 0, "bytes": 0, "gemm": null, "unmappable": "batch dim innermost"}
  ],
  "steps": [{"kind": "contraction", "id": 0}, {"kind": "kernel", "id": 0}]
})");
}

std::string parseError(const json &j) {
  Bundle b;
  std::string err;
  EXPECT_FALSE(parseManifest(j.dump(), "m.json", b, err));
  return err;
}

#define EXPECT_HAS(hay, needle)                                                \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos)                  \
      << "message: " << (hay) << "\nexpected to contain: " << (needle)

TEST(Bundle, ValidManifest) {
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(validManifest().dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.model, "tiny");
  EXPECT_EQ(b.arch, "sm_90a");
  ASSERT_EQ(b.tensors.size(), 7u);
  EXPECT_EQ(b.tensor(0)->dtype, DType::BF16);
  EXPECT_EQ(b.tensor(3)->dtype, DType::F32);
  EXPECT_TRUE(b.tensor(5)->isAlias);
  int64_t off;
  EXPECT_EQ(b.baseOf(6, off), 4);
  EXPECT_EQ(off, 9);
  EXPECT_EQ(b.baseOf(2, off), 2);
  EXPECT_EQ(off, 0);
  ASSERT_EQ(b.kernels.size(), 1u);
  const BundleKernel *k = b.kernelByName("add_bias");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->grid[0], 4);
  EXPECT_EQ(k->block[0], 32);
  EXPECT_EQ(k->inputs, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(b.kernelByName("k0_add_bias"), k);
  ASSERT_EQ(b.contractions.size(), 2u);
  const BundleContraction *c = b.contraction(0);
  ASSERT_TRUE(c->mappable);
  EXPECT_TRUE(c->gemm.swapOperands);
  EXPECT_EQ(c->gemm.transA, dmrt::Transpose::N);
  EXPECT_EQ(c->gemm.m, 6);
  EXPECT_EQ(c->gemm.n, 4);
  EXPECT_EQ(c->gemm.k, 8);
  EXPECT_EQ(c->gemm.d.ld, 6);
  EXPECT_EQ(c->gemm.c.rows, 6);
  EXPECT_EQ(c->gemm.epilogue, dmrt::Epilogue::None);
  EXPECT_EQ(c->inputs(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(c->outputs(), (std::vector<int64_t>{2}));
  EXPECT_FALSE(b.contraction(1)->mappable);
  EXPECT_EQ(b.contraction(1)->unmappable, "batch dim innermost");
  ASSERT_EQ(b.steps.size(), 2u);
  EXPECT_EQ(b.steps[0].kind, BundleStep::Contraction);
}

TEST(Bundle, BiasEpilogue) {
  json j = validManifest();
  j["contractions"][0]["epilogue"] = "bias";
  EXPECT_HAS(parseError(j), "contractions[0].bias: epilogue bias needs a bias tensor id");
  j["contractions"][0]["bias"] = 3;
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.contraction(0)->gemm.biasLength, 6);
  EXPECT_EQ(b.contraction(0)->inputs(), (std::vector<int64_t>{0, 1, 3}));
  j["contractions"][0]["beta"] = 1.0;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.contraction(0)->inputs(), (std::vector<int64_t>{0, 1, 3, 2}));
  j["contractions"][0]["bias"] = 0; // 32 elements, not 6
  EXPECT_HAS(parseError(j), "contractions[0].bias: bias tensor x has 32 elements");
}

TEST(Bundle, NotJson) {
  Bundle b;
  std::string err;
  EXPECT_FALSE(parseManifest("{\"format\": ", "m.json", b, err));
  EXPECT_HAS(err, "m.json: not valid JSON");
}

TEST(Bundle, MissingField) {
  json j = validManifest();
  j["kernels"][0].erase("grid");
  EXPECT_EQ(parseError(j), "m.json: kernels[0].grid: missing field");
  j = validManifest();
  j.erase("steps");
  EXPECT_EQ(parseError(j), "m.json: steps: missing field");
  j = validManifest();
  j["contractions"][0]["gemm"]["a"].erase("ld");
  EXPECT_EQ(parseError(j), "m.json: contractions[0].gemm.a.ld: missing field");
  j = validManifest();
  j["tensors"][1].erase("alias");
  EXPECT_EQ(parseError(j), "m.json: tensors[1].alias: missing field");
}

TEST(Bundle, WrongType) {
  json j = validManifest();
  j["kernels"][0]["grid"] = "4,1,1";
  EXPECT_HAS(parseError(j), "m.json: kernels[0].grid: expected an array, got string");
  j = validManifest();
  j["kernels"][0]["grid"] = {4, 1};
  EXPECT_HAS(parseError(j), "kernels[0].grid: expected 3 positive integers, got 2");
  j = validManifest();
  j["kernels"][0]["block"][1] = 0;
  EXPECT_HAS(parseError(j), "kernels[0].block[1]: expected a positive integer, got number 0");
  j = validManifest();
  j["tensors"][0]["shape"][1] = 8.5;
  EXPECT_HAS(parseError(j), "tensors[0].shape[1]: expected a non-negative integer");
  j = validManifest();
  j["contractions"][0]["alpha"] = "1";
  EXPECT_HAS(parseError(j), "contractions[0].alpha: expected a number, got string");
  j = validManifest();
  j["contractions"][0]["gemm"]["swap"] = 1;
  EXPECT_HAS(parseError(j), "contractions[0].gemm.swap: expected true or false");
  j = validManifest();
  j["contractions"][0]["gemm"]["transa"] = "C";
  EXPECT_HAS(parseError(j), "contractions[0].gemm.transa: expected \"N\" or \"T\"");
  j = validManifest();
  j["tensors"][2]["dtype"] = "f64";
  EXPECT_HAS(parseError(j), "tensors[2].dtype: expected one of bf16, f16, f32, i32");
  j = validManifest();
  j["tensors"][2]["bytes"] = 96;
  EXPECT_HAS(parseError(j), "tensors[2].bytes: expected 48");
  j = validManifest();
  j["steps"][0]["kind"] = "copy";
  EXPECT_HAS(parseError(j), "steps[0].kind: expected \"kernel\" or \"contraction\"");
  j = validManifest();
  j["tensors"] = json::object();
  EXPECT_HAS(parseError(j), "m.json: tensors: expected an array, got object");
}

TEST(Bundle, UnknownField) {
  json j = validManifest();
  j["kernels"][0]["grdi"] = {1, 1, 1};
  EXPECT_EQ(parseError(j), "m.json: kernels[0].grdi: unknown field");
  j = validManifest();
  j["extra"] = 1;
  EXPECT_EQ(parseError(j), "m.json: extra: unknown field");
}

// A step may name a contraction without a cuBLASLt form (layout selection has
// not given it one yet): the bundle loads and dmrt-bench skips it, saying why.
TEST(Bundle, UnmappableContractionStepLoads) {
  json j = validManifest();
  j["steps"][0]["id"] = 1;
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_FALSE(b.contraction(1)->mappable);
  EXPECT_EQ(b.contraction(1)->unmappable, "batch dim innermost");
}

TEST(Bundle, BadTensorReference) {
  json j = validManifest();
  j["kernels"][0]["inputs"][1] = 42;
  EXPECT_EQ(parseError(j), "m.json: kernels[0].inputs[1]: unknown tensor id 42");
  j = validManifest();
  j["contractions"][0]["d"] = 99;
  EXPECT_EQ(parseError(j), "m.json: contractions[0].d: unknown tensor id 99");
  j = validManifest();
  j["steps"][1]["id"] = 7;
  EXPECT_EQ(parseError(j), "m.json: steps[1].id: unknown kernel id 7");
  j = validManifest();
  j["steps"][0]["id"] = 99;
  EXPECT_HAS(parseError(j), "steps[0].id: unknown contraction id 99");
  j = validManifest();
  j["tensors"][1]["id"] = 0;
  EXPECT_HAS(parseError(j), "tensors[1].id: duplicate tensor id 0");
  // Found by the bundle fuzz target: callers bind by name, so a second tensor
  // of one name could never be bound.
  j = validManifest();
  j["tensors"][1]["name"] = j["tensors"][0]["name"];
  EXPECT_EQ(parseError(j), "m.json: tensors[1].name: duplicate tensor name \"" +
                               j["tensors"][0]["name"].get<std::string>() + "\"");
}

TEST(Bundle, AliasErrors) {
  json j = validManifest();
  j["tensors"][5]["alias"]["of"] = 77;
  EXPECT_HAS(parseError(j), "tensors[5].alias.of: tensor 5 aliases unknown tensor id 77");
  j = validManifest();
  j["tensors"][5]["alias"]["offset"] = 19; // 19 + 6 > 24
  EXPECT_HAS(parseError(j), "tensors[5].alias: elements [19, 25) out of range of tensor 4");
  j = validManifest();
  j["tensors"][6]["alias"]["offset"] = 4; // 6 + 4 + 3 = 13 <= 24 but > 6?
  // Checked against the root (z, 24 elements): still in range.
  Bundle b;
  std::string err;
  EXPECT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  j = validManifest();
  j["tensors"][4]["alias"] = {{"of", 6}, {"offset", 0}}; // 4 -> 6 -> 5 -> 4
  EXPECT_HAS(parseError(j), "alias cycle through tensor");
  j = validManifest();
  j["tensors"][5]["alias"] = {{"of", 5}, {"offset", 0}};
  EXPECT_HAS(parseError(j), "tensors[5].alias: alias cycle through tensor 5");
  j = validManifest();
  j["tensors"][5]["alias"]["of"] = 3; // f32 tensor
  EXPECT_HAS(parseError(j), "tensors[5].alias.of: alias of a f32 tensor");
  j = validManifest();
  j["tensors"][5]["alias"]["offset"] = -1;
  EXPECT_HAS(parseError(j), "tensors[5].alias.offset: expected a non-negative integer");
}

TEST(Bundle, FormatAndVersion) {
  json j = validManifest();
  j["version"] = 11;
  EXPECT_EQ(parseError(j), "m.json: version: unsupported version 11 (this "
                           "runtime reads versions 1 to 10)");
  j["version"] = 0;
  EXPECT_HAS(parseError(j), "unsupported version 0");
  j["version"] = 2; // version 2 adds only the optional workspace_bytes
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.version, 2);
  EXPECT_EQ(b.kernel(0)->workspaceBytes, 0);
  j = validManifest();
  j["format"] = "dmc-db";
  EXPECT_HAS(parseError(j), "m.json: format: expected \"dmc-bundle\"");
  j = validManifest();
  j["version"] = "1";
  EXPECT_HAS(parseError(j), "m.json: version: expected a non-negative integer, got string");
}

// Version 2: a kernel may ask for a zeroed scratch workspace, and split
// reductions launch 2-D grids.
TEST(Bundle, KernelWorkspace) {
  json j = validManifest();
  j["version"] = 2;
  j["kernels"][0]["workspace_bytes"] = 4096;
  j["kernels"][0]["grid"] = {4, 16, 2};
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  const BundleKernel *k = b.kernel(0);
  EXPECT_EQ(k->workspaceBytes, 4096);
  EXPECT_EQ(k->grid[0], 4);
  EXPECT_EQ(k->grid[1], 16);
  EXPECT_EQ(k->grid[2], 2);
  j["kernels"][0]["workspace_bytes"] = 0;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.kernel(0)->workspaceBytes, 0);

  j["kernels"][0]["workspace_bytes"] = -8;
  EXPECT_EQ(parseError(j),
            "m.json: kernels[0].workspace_bytes: expected a non-negative integer "
            "(bytes of zeroed scratch memory), got number -8");
  j["kernels"][0]["workspace_bytes"] = 1.5;
  EXPECT_HAS(parseError(j), "kernels[0].workspace_bytes: expected a non-negative integer");
  j["kernels"][0]["workspace_bytes"] = "64";
  EXPECT_HAS(parseError(j), "kernels[0].workspace_bytes: expected a non-negative integer");
  j["kernels"][0]["workspace_bytes"] = nullptr;
  EXPECT_HAS(parseError(j), "kernels[0].workspace_bytes: expected a non-negative integer");
  // Version 1 has no workspace: the field is a format error there.
  j = validManifest();
  j["kernels"][0]["workspace_bytes"] = 64;
  EXPECT_HAS(parseError(j), "kernels[0].workspace_bytes: not in bundle version 1");
  j["version"] = 2;
  j["kernels"][0]["grid"] = {4, 65536, 1};
  EXPECT_HAS(parseError(j), "kernels[0].grid: exceeds CUDA grid limits");
}

TEST(Bundle, GemmDescriptorChecks) {
  json j = validManifest();
  j["contractions"][0]["gemm"]["k"] = 9; // A is 6x8, op needs 6x9
  EXPECT_HAS(parseError(j), "contractions[0].gemm: invalid descriptor: matrix A is 6x8");
  j = validManifest();
  j["contractions"][0]["gemm"]["b"]["ld"] = 9; // reaches past tensor x
  EXPECT_HAS(parseError(j), "contractions[0].gemm.b: matrix reaches element 34 but tensor 0 (x) has 32");
  j = validManifest();
  j["contractions"][0]["gemm"] = nullptr;
  EXPECT_HAS(parseError(j), "contractions[0].unmappable: gemm is null");
  j = validManifest();
  j["contractions"][0]["epilogue"] = "sparkle";
  EXPECT_HAS(parseError(j), "contractions[0].epilogue: unknown epilogue \"sparkle\"");
}

TEST(Bundle, LoadChecksFiles) {
  std::string dir = ::testing::TempDir() + "dmrt_bundle_test.dmlib";
  ::mkdir(dir.c_str(), 0755);
  ::mkdir((dir + "/kernels").c_str(), 0755);
  std::remove((dir + "/kernels/k0.cubin").c_str());
  {
    std::ofstream os(dir + "/manifest.json");
    os << validManifest().dump(1);
  }
  Bundle b;
  std::string err;
  EXPECT_FALSE(loadBundle(dir, b, err));
  EXPECT_HAS(err, "kernels[0].cubin: file " + dir + "/kernels/k0.cubin does not exist");
  {
    std::ofstream os(dir + "/kernels/k0.cubin");
    os << "x";
  }
  EXPECT_TRUE(loadBundle(dir, b, err)) << err;
  EXPECT_EQ(b.path("kernels/k0.cubin"), dir + "/kernels/k0.cubin");
  // The bytes the module cache loads come from this one read.
  CubinImages images;
  ASSERT_TRUE(loadBundle(dir, b, err, &images)) << err;
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(std::string(images["kernels/k0.cubin"].bytes.begin(),
                        images["kernels/k0.cubin"].bytes.end()),
            "x");
  EXPECT_EQ(images["kernels/k0.cubin"].checksum, fnv1a64("x", 1));
  EXPECT_FALSE(loadBundle(dir + "/nope", b, err));
  EXPECT_HAS(err, "not a directory");
  json j = validManifest();
  j["kernels"][0]["cubin"] = "../../etc/passwd";
  EXPECT_HAS(parseError(j), "kernels[0].cubin: expected a relative path inside the bundle");
}

} // namespace

namespace {

/// What writeManifest keeps, compared as JSON values (key order aside).
json reparsed(const json &j) {
  Bundle b;
  std::string err;
  EXPECT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  return json::parse(writeManifest(b));
}

} // namespace

TEST(ManifestCodec, WriterKeepsEveryFieldTheReaderReads) {
  json j = validManifest();
  j["version"] = 2;
  j["contractions"][0]["epilogue"] = "bias";
  j["contractions"][0]["bias"] = 3;
  j["kernels"][0]["workspace_bytes"] = 512;
  json back = reparsed(j);
  // The writer adds only defaults the reader assumes: `bias` null, 0 workspace.
  json expected = j;
  expected["contractions"][1]["bias"] = nullptr;
  EXPECT_EQ(back, expected) << "written:\n" << back.dump(2);
  // A second round trip is the identity on the text.
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(back.dump(), "m.json", b, err)) << err;
  std::string once = writeManifest(b);
  ASSERT_TRUE(parseManifest(once, "m.json", b, err)) << err;
  EXPECT_EQ(writeManifest(b), once);
}

TEST(ManifestCodec, APlantedChangeShowsInTheText) {
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(validManifest().dump(), "m.json", b, err)) << err;
  std::string text = writeManifest(b);
  for (int fault = 0; fault < 5; ++fault) {
    Bundle c = b;
    switch (fault) {
    case 0: c.tensors[5].aliasOffset += 1; break;
    case 1: c.tensors[3].dtype = DType::BF16; break;
    case 2: c.kernels[0].grid[2] = 2; break;
    case 3: c.contractions[0].gemm.transA = Transpose::T; break;
    case 4: c.steps.pop_back(); break;
    }
    EXPECT_NE(writeManifest(c), text) << "fault " << fault;
  }
}

namespace {

/// validManifest() as version 3: y (tensor 2, the one intermediate owning
/// memory) at 0, kernel 0's 64-byte workspace at 256, a 512-byte arena.
json planned() {
  json j = validManifest();
  j["version"] = 3;
  j["arena_bytes"] = 512;
  for (auto &t : j["tensors"])
    t["arena"] = nullptr;
  for (auto &c : j["contractions"])
    c["bias"] = nullptr; // what the writer writes

  j["tensors"][2]["arena"] = 0;
  j["kernels"][0]["workspace_bytes"] = 64;
  j["kernels"][0]["workspace_offset"] = 256;
  return j;
}

} // namespace

// Version 3: the static memory plan (runtime/format/ArenaPlan.h).
TEST(ManifestCodec, Version3MemoryPlan) {
  json j = planned();
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.arenaBytes, 512);
  EXPECT_EQ(b.tensor(2)->arenaOffset, 0);
  EXPECT_EQ(b.tensor(5)->arenaOffset, -1);
  EXPECT_EQ(b.kernel(0)->workspaceOffset, 256);
  EXPECT_EQ(reparsed(j), j);
  std::string text = writeManifest(b);
  ASSERT_TRUE(parseManifest(text, "m.json", b, err)) << err;
  EXPECT_EQ(writeManifest(b), text);
  // Versions 1 and 2 still read, without a plan; the plan's fields are
  // errors there.
  json old = validManifest();
  ASSERT_TRUE(parseManifest(old.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.arenaBytes, 0);
  EXPECT_EQ(b.tensor(2)->arenaOffset, -1);
  old["tensors"][2]["arena"] = 0;
  EXPECT_EQ(parseError(old), "m.json: tensors[2].arena: not in bundle version 1 (the "
                             "memory plan needs version 3)");
  old = validManifest();
  old["version"] = 2;
  old["arena_bytes"] = 0;
  EXPECT_HAS(parseError(old), "m.json: arena_bytes: not in bundle version 2");
}

TEST(ManifestCodec, Version3PlanErrors) {
  json j = planned();
  j.erase("arena_bytes");
  EXPECT_EQ(parseError(j), "m.json: arena_bytes: missing field");
  j = planned();
  j["tensors"][3].erase("arena");
  EXPECT_EQ(parseError(j), "m.json: tensors[3].arena: missing field");
  j = planned();
  j["tensors"][2]["arena"] = nullptr;
  EXPECT_HAS(parseError(j), "m.json: tensors[2].arena: expected an arena offset");
  j = planned();
  j["tensors"][2]["arena"] = -256;
  EXPECT_HAS(parseError(j), "tensors[2].arena: expected a non-negative integer");
  j = planned();
  j["tensors"][2]["arena"] = 128;
  EXPECT_EQ(parseError(j), "m.json: tensors[2].arena: 128 is not a multiple of 256");
  j = planned();
  j["tensors"][5]["arena"] = 0;
  EXPECT_HAS(parseError(j), "tensors[5].arena: expected null: an alias");
  j = planned();
  j["tensors"][1]["arena"] = 0;
  EXPECT_HAS(parseError(j), "tensors[1].arena: expected null: the caller provides");
  j = planned();
  j["arena_bytes"] = 300;
  EXPECT_EQ(parseError(j), "m.json: kernels[0].workspace_offset: bytes [256, 320) end "
                           "past arena_bytes 300");
  j = planned();
  j["kernels"][0].erase("workspace_offset");
  EXPECT_EQ(parseError(j), "m.json: kernels[0].workspace_offset: missing: the kernel "
                           "has a workspace");
  j = planned();
  j["kernels"][0]["workspace_bytes"] = 0;
  EXPECT_HAS(parseError(j), "kernels[0].workspace_offset: given but the kernel has no "
                            "workspace");
  // Planted overlap: the workspace (live throughout) onto y.
  j = planned();
  j["kernels"][0]["workspace_offset"] = 0;
  EXPECT_EQ(parseError(j),
            "m.json: kernels[0].workspace_offset: kernels[0].workspace (add_bias, bytes "
            "[0, 64), live throughout) overlaps tensors[2] (y, bytes [0, 48), steps 0..1) "
            "while both are live");
}

namespace {

/// planned() as version 6: every argument's `init`, the kernel's cubin
/// size and checksum (version 4), the inference plan the training plan's
/// (version 5).
json newest() {
  json j = planned();
  j["version"] = 6;
  j["inference_arena_bytes"] = j["arena_bytes"];
  for (auto &t : j["tensors"]) {
    t["inference_arena"] = t["arena"];
    std::string role = t["role"];
    if (role == "input" || role == "param")
      t["init"] = {{"mean", 0.0}, {"range", 1.0}, {"max", 1}};
  }
  j["kernels"][0]["cubin_bytes"] = 8;
  j["kernels"][0]["cubin_fnv1a64"] = "0000000000000000";
  j["kernels"][0]["inference_workspace_offset"] = 256;
  return j;
}

} // namespace

// Version 6: a contraction may name the cuBLASLt algorithm to run.
TEST(Bundle, ContractionAlgorithm) {
  const char *algo =
      "cublaslt id=21 tile=18 stages=22 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 cluster=0";
  json j = validManifest();
  j["contractions"][0]["algorithm"] = algo;
  EXPECT_EQ(parseError(j), "m.json: contractions[0].algorithm: not in bundle versions 1 to 5 "
                           "(a chosen cuBLASLt algorithm needs version 6)");
  j = newest();
  j["contractions"][0]["algorithm"] = algo;
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.contraction(0)->algorithm, algo);
  EXPECT_EQ(b.contraction(1)->algorithm, "heuristic"); // absent: the heuristic's
  // The writer keeps it (and writes the default where it was absent).
  json back = json::parse(writeManifest(b));
  EXPECT_EQ(back["contractions"][0]["algorithm"], algo);
  EXPECT_EQ(back["contractions"][1]["algorithm"], "heuristic");
  j["contractions"][0]["algorithm"] = "fast";
  EXPECT_HAS(parseError(j), "m.json: contractions[0].algorithm: algorithm \"fast\": expected "
                            "\"heuristic\" or");
  j["contractions"][0]["algorithm"] = 3;
  EXPECT_HAS(parseError(j), "contractions[0].algorithm: expected a string");
}


// Version 7: a kernel may have a finishing launch (column sums,
// codegen/ColumnSums.cpp): another entry of its cubin, its own shape.
TEST(Bundle, KernelFinishingLaunch) {
  json finish = {{"entry", "k0_finish"}, {"grid", {64, 1, 1}}, {"block", {32, 8, 1}}};
  json j = newest();
  j["kernels"][0]["finish"] = finish;
  EXPECT_EQ(parseError(j), "m.json: kernels[0].finish: not in bundle versions 1 to 6 (a "
                           "kernel's finishing launch needs version 7)");
  j["version"] = 7;
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.kernels[0].finishEntry, "k0_finish");
  EXPECT_EQ(b.kernels[0].finishGrid[0], 64);
  EXPECT_EQ(b.kernels[0].finishBlock[1], 8);
  json back = json::parse(writeManifest(b));
  EXPECT_EQ(back["kernels"][0]["finish"], finish);
  // Without one, the writer writes none.
  j["kernels"][0].erase("finish");
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_TRUE(b.kernels[0].finishEntry.empty());
  EXPECT_FALSE(json::parse(writeManifest(b))["kernels"][0].contains("finish"));
  // Errors name the field.
  j["kernels"][0]["finish"] = finish;
  j["kernels"][0]["finish"]["block"] = {64, 32, 1};
  EXPECT_EQ(parseError(j), "m.json: kernels[0].finish.block: more than 1024 threads per block");
  j["kernels"][0]["finish"] = finish;
  j["kernels"][0]["finish"]["entry"] = j["kernels"][0]["entry"];
  EXPECT_HAS(parseError(j), "kernels[0].finish.entry: expected an entry other than the "
                            "kernel's own");
  j["kernels"][0]["finish"] = finish;
  j["kernels"][0]["finish"]["threads"] = 3;
  EXPECT_HAS(parseError(j), "kernels[0].finish");
}

// Version 9: the outputs only the finishing launch writes, so a CUDA graph
// orders it apart from the kernel's own launch (Executor::captureConcurrent).
TEST(Bundle, FinishingLaunchOutputs) {
  json finish = {{"entry", "k0_finish"}, {"grid", {64, 1, 1}}, {"block", {32, 8, 1}},
                 {"outputs", {0}}};
  json j = newest();
  j["version"] = 8;
  j["kernels"][0]["finish"] = finish;
  EXPECT_EQ(parseError(j), "m.json: kernels[0].finish.outputs: not in bundle versions 1 to 8 "
                           "(the outputs of a finishing launch need version 9)");
  j["version"] = 9;
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.kernels[0].finishOutputs, std::vector<int64_t>{0});
  EXPECT_EQ(json::parse(writeManifest(b))["kernels"][0]["finish"], finish);
  // Absent: none listed, and none written back.
  j["kernels"][0]["finish"].erase("outputs");
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_TRUE(b.kernels[0].finishOutputs.empty());
  EXPECT_FALSE(json::parse(writeManifest(b))["kernels"][0]["finish"].contains("outputs"));
  // Errors name the entry.
  j["kernels"][0]["finish"]["outputs"] = {1};
  EXPECT_EQ(parseError(j), "m.json: kernels[0].finish.outputs[0]: expected a position in the "
                           "kernel's 1 outputs, got 1");
  j["kernels"][0]["finish"]["outputs"] = {0, 0};
  EXPECT_EQ(parseError(j), "m.json: kernels[0].finish.outputs[1]: output 0 is listed twice");
  j["kernels"][0]["finish"]["outputs"] = "0";
  EXPECT_HAS(parseError(j), "kernels[0].finish.outputs: expected an array");
}

TEST(Bundle, AccumulateEpilogue) {
  // D = A B + z: the addend (tensor 4, y's type, shape and layout) is C.
  json j = newest();
  j["version"] = 8;
  j["contractions"][0]["epilogue"] = "accumulate";
  EXPECT_HAS(parseError(j), "contractions[0].bias: epilogue accumulate needs the addend's tensor id");
  j["contractions"][0]["bias"] = 4;
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  EXPECT_EQ(b.contraction(0)->gemm.epilogue, Epilogue::Accumulate);
  EXPECT_EQ(b.contraction(0)->gemm.beta, 0);
  EXPECT_EQ(b.contraction(0)->inputs(), (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(b.contraction(0)->outputs(), (std::vector<int64_t>{2}));
  // Errors: another shape, beta (d read too), a version before 8.
  json bad = j;
  bad["contractions"][0]["bias"] = 3;
  EXPECT_HAS(parseError(bad), "contractions[0].bias: epilogue accumulate: the addend bias must "
                              "have the type, shape and layout of d (y)");
  bad = j;
  bad["tensors"][4]["dims"] = "nm";
  bad["tensors"][4]["shape"] = {6, 4};
  EXPECT_HAS(parseError(bad), "the addend z must have the type, shape and layout of d (y)");
  bad = j;
  bad["contractions"][0]["beta"] = 1.0;
  EXPECT_HAS(parseError(bad), "contractions[0].beta: epilogue accumulate reads its addend, not d");
  bad = j;
  bad["version"] = 7;
  EXPECT_HAS(parseError(bad), "contractions[0].epilogue: \"accumulate\" is not in bundle versions "
                              "1 to 7");
}

TEST(Bundle, StridedAlias) {
  // z is [4, 6]: column 1..2 of each row as a [4, 2] view, rows 6 apart.
  json view = {{"id", 7},          {"name", "z_cols"}, {"role", "intermediate"},
               {"dims", "mn"},     {"shape", {4, 2}},  {"dtype", "bf16"},
               {"bytes", 16},      {"alias", {{"of", 4}, {"offset", 1}, {"strides", {6, 1}}}}};
  view["arena"] = nullptr;
  view["inference_arena"] = nullptr;
  json j = newest();
  j["tensors"].push_back(view);
  j["version"] = 9;
  EXPECT_EQ(parseError(j), "m.json: tensors[7].alias.strides: not in bundle versions 1 to 9 (a "
                           "strided view needs version 10)");
  j["version"] = 10;
  Bundle b;
  std::string err;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  const BundleTensor &t = *b.tensor(7);
  EXPECT_EQ(t.aliasStrides, (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(t.spanElements(), 3 * 6 + 1 + 1); // last element: 3*6 + 1
  json written = json::parse(writeManifest(b));
  EXPECT_EQ(written["tensors"][7]["alias"], view["alias"]);
  // Dense aliases write no strides.
  EXPECT_FALSE(written["tensors"][5]["alias"].contains("strides"));
  // The last element touched must lie in the base: from offset 4 the span
  // of 20 ends at 24 (ok), from 5 it does not.
  j["tensors"][7]["alias"]["offset"] = 4;
  ASSERT_TRUE(parseManifest(j.dump(), "m.json", b, err)) << err;
  j["tensors"][7]["alias"]["offset"] = 5;
  EXPECT_HAS(parseError(j), "tensors[7].alias: elements [5, 25) out of range of tensor 4");
  j["tensors"][7]["alias"]["offset"] = 1;
  j["tensors"][7]["alias"]["strides"] = {6};
  EXPECT_EQ(parseError(j), "m.json: tensors[7].alias.strides: has 1 strides for 2 dims");
  j["tensors"][7]["alias"]["strides"] = {6, -1};
  EXPECT_HAS(parseError(j), "tensors[7].alias.strides");
  // A view of a strided view: offsets would compose, strides not.
  j["tensors"][7]["alias"] = {{"of", 4}, {"offset", 1}, {"strides", {6, 1}}};
  j["tensors"][6]["alias"] = {{"of", 7}, {"offset", 0}};
  EXPECT_EQ(parseError(j), "m.json: tensors[6].alias.of: aliases z_cols, a strided view: alias "
                           "its base instead");
  j["tensors"][6]["alias"] = {{"of", 5}, {"offset", 3}};
  // A strided view of a view: the strides would not compose with its offset.
  j["tensors"][7]["alias"] = {{"of", 5}, {"offset", 0}, {"strides", {1, 1}}};
  j["tensors"][7]["shape"] = {2, 2};
  j["tensors"][7]["bytes"] = 8;
  EXPECT_EQ(parseError(j), "m.json: tensors[7].alias.of: a strided view must view its base "
                           "directly, not alias z_row1 (itself a view)");
}
