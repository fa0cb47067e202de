//===- CApiTest.cpp - runtime/dmrt.h without a GPU ------------------------===//
//
// Everything the C API checks before a device call: the bundle's files,
// manifest and checksums; what the runtime can run; binding checks; the
// phase order; argument errors. Each error path is provoked once and its
// status and message checked. Without DMRT_OPEN_VALIDATE_ONLY an open needs
// a GPU (here: DMRT_ERROR_NO_DEVICE).
//
//===----------------------------------------------------------------------===//
#include "runtime/dmrt.h"
#include "runtime/dmrt.hpp"

#include "LayerFixture.h"

#include <gtest/gtest.h>

#include <fstream>

using layerfixture::json;

namespace {

#define EXPECT_HAS(hay, needle)                                                \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos)                  \
      << "message: " << (hay) << "\nexpected to contain: " << (needle)

/// Opens `dir` validate-only; returns the status (layer closed).
dmrt_status openStatus(const std::string &dir, uint32_t flags = DMRT_OPEN_VALIDATE_ONLY) {
  dmrt::Layer layer;
  return layer.open(dir, flags).code;
}

/// A device-looking pointer aligned to `align` (never dereferenced).
void *fakePtr(uintptr_t align, uintptr_t extra = 0) {
  return reinterpret_cast<void *>(uintptr_t(0x7f0000000000ull) + align + extra);
}

TEST(CApi, ValidateOnlyOpenDescribesTensors) {
  dmrt::Layer layer;
  dmrt::Status s = layer.open(layerfixture::write(layerfixture::manifest()),
                              DMRT_OPEN_VALIDATE_ONLY);
  ASSERT_TRUE(s) << s.message;
  EXPECT_EQ(layer.model(), "tiny");
  EXPECT_EQ(layer.deviceName(), "");
  std::vector<dmrt_tensor_desc> ts = layer.tensors();
  ASSERT_EQ(ts.size(), 6u); // x, wa, wb, y, dy, x.grad (not t3, h)
  EXPECT_STREQ(ts[0].name, "x");
  EXPECT_EQ(ts[0].role, DMRT_ROLE_INPUT);
  EXPECT_EQ(ts[0].rank, 2);
  EXPECT_EQ(ts[0].shape[0], 16);
  EXPECT_EQ(ts[0].dtype, DMRT_DTYPE_BF16);
  EXPECT_EQ(ts[0].bytes, 256);
  EXPECT_STREQ(ts[2].name, "wb");
  EXPECT_EQ(ts[2].buffer, ts[1].buffer); // stacked with wa
  EXPECT_EQ(ts[2].buffer_offset, 128);
  EXPECT_EQ(ts[2].buffer_bytes, 256);
  EXPECT_NE(ts[0].buffer, ts[1].buffer);
  dmrt_memory_info m;
  ASSERT_TRUE(layer.memory(m));
  EXPECT_EQ(m.arena_bytes, 256);
  EXPECT_EQ(m.caller_bytes, 256 * 5);
}

TEST(CApi, BundleErrors) {
  json m = layerfixture::manifest();
  auto check = [](const std::string &dir, dmrt_status want, const std::string &text) {
    EXPECT_EQ(openStatus(dir), want) << dmrt_last_error();
    EXPECT_HAS(dmrt_last_error(), text);
  };
  check("/nonexistent/x.dmlib", DMRT_ERROR_BUNDLE, "not a directory");
  std::string dir = layerfixture::write(m);
  ::unlink((dir + "/manifest.json").c_str());
  check(dir, DMRT_ERROR_BUNDLE, "manifest.json: cannot open");
  std::string text = m.dump(2);
  check(layerfixture::write(m, text.substr(0, text.size() / 2)), DMRT_ERROR_BUNDLE,
        "not valid JSON");
  json edited = m;
  edited["tensors"][4]["bytes"] = 512;
  check(layerfixture::write(edited), DMRT_ERROR_BUNDLE, "tensors[4].bytes");
  edited = m;
  edited["version"] = 11;
  check(layerfixture::write(edited), DMRT_ERROR_BUNDLE, "unsupported version 11");
  edited = m;
  edited["version"] = 5; // without the inference plan
  check(layerfixture::write(edited), DMRT_ERROR_BUNDLE, "inference_arena_bytes: missing field");
  edited = m;
  edited["kernels"][1]["cubin_fnv1a64"] = "xyz";
  check(layerfixture::write(edited), DMRT_ERROR_BUNDLE, "expected 16 hex digits");
  edited = m;
  edited["tensors"][0].erase("init");
  check(layerfixture::write(edited), DMRT_ERROR_BUNDLE, "tensors[0].init: missing field");
  dir = layerfixture::write(m);
  ::unlink((dir + "/kernels/k1.cubin").c_str());
  check(dir, DMRT_ERROR_BUNDLE, "kernels/k1.cubin does not exist");
  dir = layerfixture::write(m);
  std::ofstream(dir + "/kernels/k1.cubin", std::ios::binary) << "fake";
  check(dir, DMRT_ERROR_BUNDLE, "has 4 bytes, the manifest says");
  dir = layerfixture::write(m);
  std::string same = layerfixture::cubinBytes(1);
  same[0] = 'F'; // same size, other bytes
  std::ofstream(dir + "/kernels/k1.cubin", std::ios::binary) << same;
  check(dir, DMRT_ERROR_BUNDLE, "checksum");
}

TEST(CApi, UnsupportedBundles) {
  json m = layerfixture::manifest();
  m["contractions"].push_back(
      {{"id", 0}, {"equation", "bjhp,bkhp->bhjk"}, {"phase", "forward"}, {"a", 0}, {"b", 0},
       {"d", 5}, {"bias", nullptr}, {"alpha", 1.0}, {"beta", 0.0}, {"epilogue", "none"},
       {"flop", 0}, {"bytes", 0}, {"gemm", nullptr}, {"unmappable", "batch dims interleaved"}});
  EXPECT_EQ(openStatus(layerfixture::write(m)), DMRT_ERROR_UNSUPPORTED);
  EXPECT_HAS(dmrt_last_error(), "contraction 0 (bjhp,bkhp->bhjk) has no cuBLASLt form: "
                                "batch dims interleaved");
  // A stacked buffer its parameters do not cover.
  m = layerfixture::manifest();
  m["tensors"][3]["shape"] = {3, 8, 8};
  m["tensors"][3]["bytes"] = 384;
  EXPECT_EQ(openStatus(layerfixture::write(m)), DMRT_ERROR_UNSUPPORTED);
  EXPECT_HAS(dmrt_last_error(), "caller tensors (wa, wb) cover only its first 256 bytes");
  m = layerfixture::manifest();
  // Version 2: no memory plan.
  m = layerfixture::manifest();
  m["version"] = 2;
  m.erase("arena_bytes");
  for (json &t : m["tensors"]) {
    t.erase("arena");
    t.erase("init");
  }
  for (json &k : m["kernels"]) {
    k.erase("cubin_bytes");
    k.erase("cubin_fnv1a64");
  }
  EXPECT_EQ(openStatus(layerfixture::write(m)), DMRT_ERROR_UNSUPPORTED) << dmrt_last_error();
  EXPECT_HAS(dmrt_last_error(), "has no memory plan");
  // A backward step before a forward one.
  m = layerfixture::manifest();
  std::swap(m["steps"][0], m["steps"][2]);
  EXPECT_EQ(openStatus(layerfixture::write(m)), DMRT_ERROR_UNSUPPORTED);
  EXPECT_HAS(dmrt_last_error(), "steps[1] (kernel 0 (k0)): a forward step after a backward one");
  m = layerfixture::manifest();
  m["kernels"][2]["phase"] = "sideways";
  EXPECT_EQ(openStatus(layerfixture::write(m)), DMRT_ERROR_UNSUPPORTED);
  EXPECT_HAS(dmrt_last_error(), "unknown phase \"sideways\"");
}

TEST(CApi, OpenArguments) {
  dmrt_layer *layer = nullptr;
  EXPECT_EQ(dmrt_open(nullptr, nullptr, &layer), DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dmrt_open("x", nullptr, nullptr), DMRT_ERROR_INVALID_ARGUMENT);
  dmrt_open_options o;
  dmrt_open_options_init(&o);
  o.struct_size = 3;
  EXPECT_EQ(dmrt_open("x", &o, &layer), DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_HAS(dmrt_last_error(), "struct_size");
  dmrt_open_options_init(&o);
  o.flags = 128; // the first unknown flag (DMRT_OPEN_GRAPH_MEMSETS is 64)
  EXPECT_EQ(dmrt_open("x", &o, &layer), DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_HAS(dmrt_last_error(), "unknown flags");
  EXPECT_EQ(layer, nullptr);
  dmrt_close(nullptr);
  EXPECT_STREQ(dmrt_status_name(DMRT_ERROR_UNBOUND), "DMRT_ERROR_UNBOUND");
  int32_t n = 0;
  EXPECT_EQ(dmrt_tensor_count(nullptr, &n), DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dmrt_forward(nullptr, nullptr, DMRT_MODE_TRAIN), DMRT_ERROR_INVALID_ARGUMENT);
}

TEST(CApi, OpenWithoutGpuFails) {
  // Here: no GPU (DMRT_ERROR_NO_DEVICE). On a GPU machine the fake cubins
  // fail to load, or the arch does not match: never DMRT_OK.
  dmrt_status s = openStatus(layerfixture::write(layerfixture::manifest()), 0);
  EXPECT_NE(s, DMRT_OK);
  EXPECT_TRUE(s == DMRT_ERROR_NO_DEVICE || s == DMRT_ERROR_CUDA || s == DMRT_ERROR_ARCH)
      << dmrt_status_name(s) << ": " << dmrt_last_error();
}

TEST(CApi, BindChecks) {
  dmrt::Layer layer;
  ASSERT_TRUE(layer.open(layerfixture::write(layerfixture::manifest()), DMRT_OPEN_VALIDATE_ONLY));
  auto bind = [&](const char *name, void *p, int64_t bytes, dmrt_dtype dt,
                  std::vector<int64_t> shape) { return layer.bind(name, p, bytes, dt, shape); };
  dmrt::Status s = bind("nope", fakePtr(256), 256, DMRT_DTYPE_BF16, {16, 8});
  EXPECT_EQ(s.code, DMRT_ERROR_BINDING);
  EXPECT_HAS(s.message, "no tensor 'nope'");
  EXPECT_HAS(s.message, "x wa wb y dy x.grad");
  s = bind("h", fakePtr(256), 256, DMRT_DTYPE_BF16, {16, 8});
  EXPECT_HAS(s.message, "'h' is an intermediate");
  s = bind("x", nullptr, 256, DMRT_DTYPE_BF16, {16, 8});
  EXPECT_HAS(s.message, "tensor 'x' (input): null pointer");
  s = bind("x", fakePtr(256), 256, DMRT_DTYPE_F32, {16, 8});
  EXPECT_HAS(s.message, "dtype f32 given, the layer's is bf16");
  s = bind("x", fakePtr(256), 256, DMRT_DTYPE_BF16, {8, 16});
  EXPECT_HAS(s.message, "shape [8, 16] given, the layer's is [16, 8]");
  s = bind("x", fakePtr(256), 256, DMRT_DTYPE_BF16, {16, 8, 1});
  EXPECT_HAS(s.message, "shape [16, 8, 1] given");
  s = bind("x", fakePtr(256), 255, DMRT_DTYPE_BF16, {16, 8});
  EXPECT_HAS(s.message, "255 bytes given, it needs 256");
  s = bind("x", fakePtr(256, 16), 256, DMRT_DTYPE_BF16, {16, 8});
  EXPECT_EQ(s.code, DMRT_ERROR_BINDING);
  EXPECT_HAS(s.message, "misaligned: the runtime needs 256-byte aligned buffers");
  EXPECT_EQ(dmrt_bind(layer.get(), "x", fakePtr(256), 256, DMRT_DTYPE_BF16, 2, nullptr),
            DMRT_ERROR_BINDING);
  EXPECT_EQ(dmrt_bind(layer.get(), "x", fakePtr(256), 256, (dmrt_dtype)9, 0, nullptr),
            DMRT_ERROR_BINDING);
  EXPECT_TRUE(bind("x", fakePtr(256), 4096, DMRT_DTYPE_BF16, {16, 8})); // more bytes: fine
  // Stacked parameters: wb must sit 128 bytes after wa.
  EXPECT_TRUE(layer.bind("wa", fakePtr(512)));
  s = layer.bind("wb", fakePtr(1024, 128));
  EXPECT_HAS(s.message, "shares one buffer with 'wa'");
  s = layer.bind("wb", fakePtr(512));
  EXPECT_HAS(s.message, "misaligned"); // 0 mod 256, but it starts 128 bytes in
  EXPECT_HAS(s.message, "128 modulo 256");
  EXPECT_TRUE(layer.bind("wb", fakePtr(512, 128)));
  EXPECT_TRUE(layer.unbind("wa"));
  EXPECT_TRUE(layer.unbind("wb"));
  EXPECT_TRUE(layer.bind("wb", fakePtr(1024, 128))); // moved after unbinding both
  EXPECT_EQ(layer.unbind("h").code, DMRT_ERROR_BINDING);
}

TEST(CApi, RunOrderAndUnboundTensors) {
  dmrt::Layer layer;
  ASSERT_TRUE(layer.open(layerfixture::write(layerfixture::manifest()), DMRT_OPEN_VALIDATE_ONLY));
  dmrt::Status s = layer.forward(nullptr);
  EXPECT_EQ(s.code, DMRT_ERROR_UNBOUND);
  EXPECT_HAS(s.message, "forward: 4 tensor(s) not bound (dmrt_bind): x wa wb y");
  uintptr_t at = 1;
  for (const char *n : {"x", "wa", "y", "dy", "x.grad"})
    ASSERT_TRUE(layer.bind(n, fakePtr(256 * (at += 2)))) << n;
  s = layer.forward(nullptr);
  EXPECT_HAS(s.message, "1 tensor(s) not bound (dmrt_bind): wb");
  ASSERT_TRUE(layer.bind("wb", static_cast<char *>(fakePtr(256 * 5)) + 128));
  s = layer.forward(nullptr);
  EXPECT_EQ(s.code, DMRT_ERROR_STATE);
  EXPECT_HAS(s.message, "DMRT_OPEN_VALIDATE_ONLY");
  s = layer.backward(nullptr);
  EXPECT_EQ(s.code, DMRT_ERROR_STATE);
  EXPECT_HAS(s.message, "backward before forward");
  ASSERT_TRUE(layer.unbind("dy"));
  EXPECT_EQ(layer.backward(nullptr).code, DMRT_ERROR_UNBOUND);
  EXPECT_EQ(layer.forward(nullptr, (dmrt_mode)7).code, DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(layer.setArena(fakePtr(256), 256).code, DMRT_ERROR_STATE);
}

TEST(CApi, StepsAndProfiling) {
  dmrt::Layer layer;
  ASSERT_TRUE(layer.open(layerfixture::write(layerfixture::manifest()), DMRT_OPEN_VALIDATE_ONLY));
  int32_t fwd = 0, bwd = 0;
  ASSERT_EQ(dmrt_step_count(layer.get(), 0, &fwd), DMRT_OK);
  ASSERT_EQ(dmrt_step_count(layer.get(), 1, &bwd), DMRT_OK);
  EXPECT_EQ(fwd, 2);
  EXPECT_EQ(bwd, 1);
  EXPECT_STREQ(dmrt_step_name(layer.get(), 0, 0), "kernel 2 (k2)");
  EXPECT_STREQ(dmrt_step_name(layer.get(), 1, 0), "kernel 1 (k1)");
  EXPECT_STREQ(dmrt_step_name(layer.get(), 1, 1), "");
  float ms[2];
  EXPECT_EQ(dmrt_profile(layer.get(), nullptr, 0, ms, 1), DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_HAS(dmrt_last_error(), "capacity 1 < 2 steps");
  EXPECT_EQ(dmrt_profile(layer.get(), nullptr, 0, ms, 2), DMRT_ERROR_UNBOUND);
  EXPECT_EQ(dmrt_profile(layer.get(), nullptr, 0, nullptr, 2), DMRT_ERROR_INVALID_ARGUMENT);
}

TEST(CApi, GraphModes) {
  dmrt::Layer layer;
  ASSERT_TRUE(layer.open(layerfixture::write(layerfixture::manifest()),
                         DMRT_OPEN_VALIDATE_ONLY | DMRT_OPEN_SERIAL_GRAPHS));
  for (int mode : {DMRT_GRAPHS_OFF, DMRT_GRAPHS_ON, DMRT_GRAPHS_SERIAL})
    EXPECT_EQ(dmrt_set_graphs(layer.get(), mode), DMRT_OK) << mode;
  EXPECT_EQ(dmrt_set_graphs(layer.get(), 3), DMRT_ERROR_INVALID_ARGUMENT);
  EXPECT_HAS(dmrt_last_error(), "mode 3 (allowed: DMRT_GRAPHS_OFF 0, DMRT_GRAPHS_ON 1, "
                                "DMRT_GRAPHS_SERIAL 2)");
  EXPECT_EQ(dmrt_set_graphs(nullptr, DMRT_GRAPHS_ON), DMRT_ERROR_INVALID_ARGUMENT);
}

TEST(CApi, DropoutKey) {
  EXPECT_EQ(dmrt_dropout_key(7, 0), 7u); // dmc eval --seed 7
  EXPECT_NE(dmrt_dropout_key(7, 1), dmrt_dropout_key(7, 2));
  EXPECT_NE(dmrt_dropout_key(7, 1), dmrt_dropout_key(8, 1));
  EXPECT_NE(dmrt_dropout_key(7, 1), 8u);
}

} // namespace
