//===- SafetensorsTest.cpp - safetensors reader/writer --------------------===//
#include "runtime/format/device/Float16.h"
#include "runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

using namespace dmrt;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "dmrt_st_" + name + ".safetensors";
}

/// Writes `header` (as the JSON text) followed by `data` with a correct
/// length prefix, or `lengthOverride` when given.
void writeRaw(const std::string &path, const std::string &header,
              const std::string &data, int64_t lengthOverride = -1) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  uint64_t len = lengthOverride >= 0 ? static_cast<uint64_t>(lengthOverride)
                                     : header.size();
  for (int i = 0; i < 8; ++i)
    os.put(static_cast<char>((len >> (8 * i)) & 0xFF));
  os << header << data;
}

/// Reads `path`, expects failure, and returns the message.
std::string readError(const std::string &path) {
  TensorFile f;
  std::string error;
  EXPECT_FALSE(readSafetensors(path, f, error));
  EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
  return error;
}

#define EXPECT_HAS(haystack, needle)                                          \
  EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

TEST(DType, OneDmcSpellingAndTheSafetensorsCodes) {
  for (DType t : kAllDTypes) {
    DType back;
    ASSERT_TRUE(parseDType(dtypeName(t), back));
    EXPECT_EQ(back, t);
    ASSERT_TRUE(parseSafetensorsDType(safetensorsDTypeName(t), back));
    EXPECT_EQ(back, t);
  }
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::F16), "f16");
  EXPECT_STREQ(safetensorsDTypeName(DType::F16), "F16");
  DType d = DType::U8;
  EXPECT_FALSE(parseSafetensorsDType("F8_E4M3", d));
  EXPECT_FALSE(parseSafetensorsDType("f32", d));
  EXPECT_FALSE(parseDType("F32", d));
  EXPECT_FALSE(parseDType("fp16", d));
  EXPECT_EQ(d, DType::U8);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::BOOL), 1u);
}

TEST(Safetensors, RoundTripEveryDType) {
  const std::vector<double> vals = {0.0, -1.5, 2.0, 3.0, 100.0, 1.0};
  TensorFile in;
  int k = 0;
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                  DType::I32, DType::U8, DType::BOOL}) {
    std::vector<double> v = vals;
    if (t == DType::U8)
      v[1] = 255.0;
    in.tensors.push_back(
        fromDoubles(std::string("t") + std::to_string(k++) + dtypeName(t), t,
                    {2, 3}, v));
  }
  in.tensors.push_back(fromDoubles("scalar", DType::F32, {}, {7.25}));
  in.tensors.push_back(fromDoubles("empty", DType::F16, {0, 4}, {}));
  in.metadata["format"] = "pt";
  in.metadata["dmc.version"] = "0.1";

  std::string path = tempPath("roundtrip"), error;
  ASSERT_TRUE(writeSafetensors(path, in, error)) << error;

  // The header is padded so the data starts 8-byte aligned.
  std::ifstream is(path, std::ios::binary);
  uint8_t len[8];
  is.read(reinterpret_cast<char *>(len), 8);
  EXPECT_EQ(len[0] % 8, 0);

  TensorFile out;
  ASSERT_TRUE(readSafetensors(path, out, error)) << error;
  EXPECT_EQ(out.metadata, in.metadata);
  ASSERT_EQ(out.tensors.size(), in.tensors.size());
  for (size_t i = 0; i < in.tensors.size(); ++i) {
    const Tensor &a = in.tensors[i], &b = out.tensors[i];
    EXPECT_EQ(a.name, b.name); // order kept
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.bytes, b.bytes) << a.name;
    ASSERT_EQ(out.find(a.name), &b);
  }
  EXPECT_EQ(out.find("nope"), nullptr);
  for (size_t i = 0; i < 4; ++i) // float types hold these values exactly
    EXPECT_EQ(toDoubles(out.tensors[i]), vals) << out.tensors[i].name;
  EXPECT_EQ(toDoubles(out.tensors[6]),
            (std::vector<double>{0, 255, 2, 3, 100, 1}));
  EXPECT_EQ(toDoubles(out.tensors[7]),
            (std::vector<double>{0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(out.find("scalar")->numElements(), 1);
  EXPECT_EQ(toDoubles(*out.find("scalar")), std::vector<double>{7.25});
  EXPECT_EQ(out.find("empty")->numElements(), 0);
}

TEST(Safetensors, FromDoublesRounding) {
  // 1 + 2^-11 + 2^-40 is just above a half tie: a double -> float -> half
  // path would round to the tie then to even (1.0); the correct answer is up.
  double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  Tensor h = fromDoubles("h", DType::F16, {1}, {v});
  EXPECT_EQ(h.bytes[0] | (h.bytes[1] << 8), 0x3C01);
  Tensor b = fromDoubles("b", DType::BF16, {2}, {1.0 + std::ldexp(1.0, -8),
                                                 1e40});
  EXPECT_EQ(b.bytes[0] | (b.bytes[1] << 8), 0x3F80); // exact tie -> even
  EXPECT_EQ(b.bytes[2] | (b.bytes[3] << 8), 0x7F80); // overflow -> inf
  Tensor i = fromDoubles("i", DType::I32, {4}, {2.5, -3.7, 1e20, NAN});
  EXPECT_EQ(toDoubles(i), (std::vector<double>{2, -4, 2147483647, 0}));
  Tensor u = fromDoubles("u", DType::U8, {2}, {-5, 300});
  EXPECT_EQ(toDoubles(u), (std::vector<double>{0, 255}));
}

TEST(Safetensors, WriterRejectsBadInput) {
  std::string path = tempPath("badwrite"), error;
  TensorFile dup;
  dup.tensors.push_back(fromDoubles("x", DType::F32, {1}, {1}));
  dup.tensors.push_back(fromDoubles("x", DType::F32, {1}, {1}));
  EXPECT_FALSE(writeSafetensors(path, dup, error));
  EXPECT_HAS(error, "duplicate tensor name 'x'");
  TensorFile size;
  size.tensors.push_back(fromDoubles("y", DType::F32, {2}, {1, 2}));
  size.tensors[0].bytes.pop_back();
  EXPECT_FALSE(writeSafetensors(path, size, error));
  EXPECT_HAS(error, "tensor 'y'");
  EXPECT_EQ(error.rfind(path, 0), 0u);
}

TEST(Safetensors, RejectsMissingFile) {
  std::string path = tempPath("does_not_exist");
  std::remove(path.c_str());
  EXPECT_HAS(readError(path), "cannot open file");
}

TEST(Safetensors, RejectsShortFile) {
  std::string path = tempPath("short");
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_HAS(readError(path), "too short");
}

TEST(Safetensors, RejectsHeaderLongerThanFile) {
  std::string path = tempPath("longheader");
  writeRaw(path, "{}", "", 1000);
  EXPECT_HAS(readError(path), "truncated header");
}

TEST(Safetensors, RejectsBadHeaderJson) {
  std::string path = tempPath("badjson");
  writeRaw(path, "{\"a\": ", "");
  EXPECT_HAS(readError(path), "not valid JSON");
  writeRaw(path, "[1, 2]", "");
  EXPECT_HAS(readError(path), "not a JSON object");
}

TEST(Safetensors, RejectsDuplicateNames) {
  std::string path = tempPath("dup");
  writeRaw(path,
           R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
           R"( "a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})",
           "xy");
  EXPECT_HAS(readError(path), "duplicate tensor name 'a'");
}

TEST(Safetensors, RejectsIncompleteEntries) {
  std::string path = tempPath("incomplete");
  writeRaw(path, R"({"w": {"shape": [1], "data_offsets": [0, 1]}})", "x");
  EXPECT_HAS(readError(path), "tensor 'w': missing 'dtype'");
  writeRaw(path, R"({"w": {"dtype": "U8", "data_offsets": [0, 1]}})", "x");
  EXPECT_HAS(readError(path), "tensor 'w': missing 'shape'");
  writeRaw(path, R"({"w": {"dtype": "U8", "shape": [1]}})", "x");
  EXPECT_HAS(readError(path), "tensor 'w': missing 'data_offsets'");
  writeRaw(path, R"({"w": 5})", "x");
  EXPECT_HAS(readError(path), "tensor 'w': entry is not a JSON object");
}

TEST(Safetensors, RejectsBadDType) {
  std::string path = tempPath("dtype");
  writeRaw(path, R"({"w": {"dtype": "F7", "shape": [1], "data_offsets": [0, 1]}})",
           "x");
  EXPECT_HAS(readError(path), "bad dtype \"F7\" for tensor 'w'");
  writeRaw(path, R"({"w": {"dtype": 3, "shape": [1], "data_offsets": [0, 1]}})",
           "x");
  EXPECT_HAS(readError(path), "bad dtype 3 for tensor 'w'");
}

TEST(Safetensors, RejectsNegativeDims) {
  std::string path = tempPath("negdim");
  writeRaw(path,
           R"({"w": {"dtype": "U8", "shape": [2, -1], "data_offsets": [0, 1]}})",
           "x");
  EXPECT_HAS(readError(path), "tensor 'w': negative dimension -1");
}

TEST(Safetensors, RejectsSizeMismatch) {
  std::string path = tempPath("size");
  writeRaw(path,
           R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})",
           "abcdefgh");
  std::string e = readError(path);
  EXPECT_HAS(e, "tensor 'w'");
  EXPECT_HAS(e, "does not match shape * dtype = 8 bytes");
}

TEST(Safetensors, RejectsOffsetsBeyondFile) {
  std::string path = tempPath("beyond");
  writeRaw(path,
           R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
           "abcd");
  std::string e = readError(path);
  EXPECT_HAS(e, "tensor 'w'");
  EXPECT_HAS(e, "out of range");
  writeRaw(path,
           R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [3, 2]}})",
           "abcd");
  EXPECT_HAS(readError(path), "tensor 'w': data_offsets [3, 2] are reversed");
  writeRaw(path,
           R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [-1, 0]}})",
           "abcd");
  EXPECT_HAS(readError(path), "two non-negative integers");
}

TEST(Safetensors, RejectsOverlap) {
  std::string path = tempPath("overlap");
  writeRaw(path,
           R"({"a": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]},)"
           R"( "b": {"dtype": "I32", "shape": [1], "data_offsets": [2, 6]}})",
           "abcdefgh");
  EXPECT_HAS(readError(path), "data_offsets of tensor 'b' overlap those of "
                              "tensor 'a'");
}

TEST(Safetensors, RejectsBadMetadata) {
  std::string path = tempPath("meta");
  writeRaw(path, R"({"__metadata__": {"k": 1}})", "");
  EXPECT_HAS(readError(path), "metadata value for 'k' is not a string");
  writeRaw(path, R"({"__metadata__": []})", "");
  EXPECT_HAS(readError(path), "'__metadata__' is not a JSON object");
}

TEST(Safetensors, ReadsHandWrittenFile) {
  // Offsets out of name order, padding spaces, and metadata.
  std::string path = tempPath("hand");
  float two = 2.0f;
  std::string data(reinterpret_cast<const char *>(&two), 4);
  data = std::string("\x05", 1) + data.substr(0, 4);
  writeRaw(path,
           R"({"z": {"dtype": "U8", "shape": [], "data_offsets": [0, 1]},)"
           R"( "a": {"dtype": "F32", "shape": [1, 1], "data_offsets": [1, 5]},)"
           R"( "__metadata__": {"format": "pt"}}   )",
           data);
  TensorFile f;
  std::string error;
  ASSERT_TRUE(readSafetensors(path, f, error)) << error;
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[0].name, "z"); // data order
  EXPECT_EQ(toDoubles(f.tensors[0]), std::vector<double>{5});
  EXPECT_EQ(toDoubles(f.tensors[1]), std::vector<double>{2});
  EXPECT_EQ(f.metadata.at("format"), "pt");
}

TEST(Safetensors, EveryTruncationFailsCleanly) {
  TensorFile in;
  in.tensors.push_back(fromDoubles("a", DType::F32, {3}, {1, 2, 3}));
  in.tensors.push_back(fromDoubles("b", DType::I64, {2}, {4, 5}));
  in.metadata["k"] = "v";
  std::string path = tempPath("full"), error;
  ASSERT_TRUE(writeSafetensors(path, in, error)) << error;
  std::ifstream is(path, std::ios::binary);
  std::string whole((std::istreambuf_iterator<char>(is)),
                    std::istreambuf_iterator<char>());
  std::string cut = tempPath("cut");
  for (size_t n = 0; n < whole.size(); ++n) {
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << whole.substr(0, n);
    readError(cut); // must fail with a message naming the file
  }
  TensorFile out;
  ASSERT_TRUE(readSafetensors(path, out, error)) << error;
  EXPECT_EQ(toDoubles(*out.find("b")), (std::vector<double>{4, 5}));
}

/// parseSafetensors (a file in memory; the fuzz target's entry) reads what
/// readSafetensors reads, and fails where it fails, naming the given name.
TEST(Safetensors, MemoryAndFileReadersAgree) {
  TensorFile in;
  in.tensors.push_back(fromDoubles("a", DType::BF16, {2, 2}, {1, -2, 3, 0.5}));
  in.tensors.push_back(fromDoubles("s", DType::I32, {}, {7}));
  in.metadata["dims.a"] = "bj";
  std::string path = tempPath("memory"), error;
  ASSERT_TRUE(writeSafetensors(path, in, error)) << error;
  std::ifstream is(path, std::ios::binary);
  std::string whole((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  const auto *bytes = reinterpret_cast<const uint8_t *>(whole.data());
  TensorFile fromFile, fromMemory;
  ASSERT_TRUE(readSafetensors(path, fromFile, error)) << error;
  ASSERT_TRUE(parseSafetensors(bytes, whole.size(), "mem", fromMemory, error)) << error;
  ASSERT_EQ(fromMemory.tensors.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(fromMemory.tensors[i].name, fromFile.tensors[i].name);
    EXPECT_EQ(fromMemory.tensors[i].shape, fromFile.tensors[i].shape);
    EXPECT_EQ(fromMemory.tensors[i].bytes, fromFile.tensors[i].bytes);
  }
  EXPECT_EQ(fromMemory.metadata, fromFile.metadata);
  // A planted fault: one byte short fails, naming "mem".
  EXPECT_FALSE(parseSafetensors(bytes, whole.size() - 1, "mem", fromMemory, error));
  EXPECT_EQ(error.rfind("mem: ", 0), 0u) << error;
}

} // namespace
