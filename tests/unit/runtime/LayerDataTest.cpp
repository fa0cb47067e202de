//===- LayerDataTest.cpp - dmc-run's arguments and files without a GPU ----===//
//
// runtime/LayerData.h on the tiny bundle of LayerFixture.h: which tensors
// are arguments and results, drawn arguments (seeded, reproducible, in the
// dtype), given ones (rounded as dmc eval rounds), every rejected inputs
// file, and the written file's tensors and metadata.
//
//===----------------------------------------------------------------------===//
#include "runtime/ArgumentData.h"
#include "runtime/LayerData.h"

#include "LayerFixture.h"

#include <gtest/gtest.h>

using namespace dmrt;

namespace {

#define EXPECT_HAS(hay, needle)                                                \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos)                  \
      << "message: " << (hay) << "\nexpected to contain: " << (needle)

Bundle tiny() {
  Bundle b;
  std::string error;
  EXPECT_TRUE(loadBundle(layerfixture::write(layerfixture::manifest()), b, error)) << error;
  return b;
}

std::vector<std::string> names(const std::vector<Tensor> &ts) {
  std::vector<std::string> out;
  for (const Tensor &t : ts)
    out.push_back(t.name);
  return out;
}

TEST(LayerData, DrawnArguments) {
  Bundle b = tiny();
  std::vector<Tensor> args, again, other;
  int drawn = 0;
  std::string error;
  ASSERT_TRUE(gatherArguments(b, nullptr, "", 5, true, args, drawn, error)) << error;
  EXPECT_EQ(names(args), (std::vector<std::string>{"x", "wa", "wb", "dy"}));
  EXPECT_EQ(drawn, 4);
  ASSERT_TRUE(gatherArguments(b, nullptr, "", 5, false, again, drawn, error)) << error;
  EXPECT_EQ(names(again), (std::vector<std::string>{"x", "wa", "wb"})); // no dy
  EXPECT_EQ(again[0].bytes, args[0].bytes); // same seed, same values
  ASSERT_TRUE(gatherArguments(b, nullptr, "", 6, true, other, drawn, error)) << error;
  EXPECT_NE(other[0].bytes, args[0].bytes); // planted: another seed differs
  EXPECT_EQ(args[0].dtype, DType::BF16);
  EXPECT_EQ(args[0].bytes.size(), 256u);
  // The values are dmc eval's: stream fnv1a32(name), mean + range * v.
  double v = referenceValue(3, 5, argumentStream("x"), false, 1);
  EXPECT_EQ(toDoubles(args[0])[3], toDoubles(fromDoubles("x", DType::BF16, {1}, {double(float(v))}))[0]);
  EXPECT_TRUE(isRunResult(*b.tensor(7), true));
  EXPECT_FALSE(isRunResult(*b.tensor(7), false));
}

TEST(LayerData, GivenArgumentsAndErrors) {
  Bundle b = tiny();
  TensorFile in;
  in.tensors.push_back(fromDoubles("x", DType::F32, {16, 8}, std::vector<double>(128, 0.1)));
  in.tensors.push_back(fromDoubles("y", DType::F32, {16, 8}, std::vector<double>(128, 0))); // a result: skipped
  std::vector<Tensor> args;
  int drawn = 0;
  std::string error;
  ASSERT_TRUE(gatherArguments(b, &in, "in.st", 5, true, args, drawn, error)) << error;
  EXPECT_EQ(drawn, 3);
  EXPECT_EQ(toDoubles(args[0])[0], toDoubles(fromDoubles("", DType::BF16, {1}, {0.1}))[0]);
  TensorFile bad = in;
  bad.tensors.push_back(fromDoubles("nope", DType::F32, {1}, {0}));
  EXPECT_FALSE(gatherArguments(b, &bad, "in.st", 5, true, args, drawn, error));
  EXPECT_HAS(error, "in.st: tensor 'nope' is not an argument of tiny; its arguments are: x wa wb dy");
  bad = in;
  bad.tensors[0] = fromDoubles("x", DType::F32, {8, 16}, std::vector<double>(128, 0));
  EXPECT_FALSE(gatherArguments(b, &bad, "in.st", 5, true, args, drawn, error));
  EXPECT_HAS(error, "tensor 'x' has shape [8, 16] but the bundle expects [16, 8] (dims 'ab')");
  bad = in;
  bad.metadata["dims.x"] = "ba";
  EXPECT_FALSE(gatherArguments(b, &bad, "in.st", 5, true, args, drawn, error));
  EXPECT_HAS(error, "tensor 'x' has dims 'ba' but the bundle expects 'ab'");
  Bundle noInit = b;
  noInit.tensors[0].hasInit = false;
  EXPECT_FALSE(gatherArguments(noInit, nullptr, "", 5, true, args, drawn, error));
  EXPECT_HAS(error, "argument 'x' has no init in the manifest");
}

TEST(LayerData, WrittenFile) {
  Bundle b = tiny();
  std::vector<Tensor> args;
  int drawn = 0;
  std::string error;
  ASSERT_TRUE(gatherArguments(b, nullptr, "", 5, true, args, drawn, error)) << error;
  Tensor y = fromDoubles("y", DType::BF16, {16, 8}, std::vector<double>(128, 1.5));
  std::string path = layerfixture::write(layerfixture::manifest()) + "/run.safetensors";
  ASSERT_TRUE(writeRunFile(b, path, args, {y}, {{"seed", "5"}}, error)) << error;
  TensorFile back;
  ASSERT_TRUE(readSafetensors(path, back, error)) << error;
  ASSERT_EQ(back.tensors.size(), 5u);
  EXPECT_EQ(back.find("y")->dtype, DType::F32);
  EXPECT_EQ(toDoubles(*back.find("y"))[7], 1.5);
  EXPECT_EQ(toDoubles(*back.find("x")), toDoubles(args[0])); // the values used
  EXPECT_EQ(back.metadata.at("dims.wb"), "ab");
  EXPECT_EQ(back.metadata.at("seed"), "5");
}

} // namespace
